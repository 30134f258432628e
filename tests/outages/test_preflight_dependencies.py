"""A missing piece is named with its install command, exit 2, before anything is spent
(the module is simulated missing: `None` in sys.modules makes its import fail)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dgm.commands import app as cli

SWE = Path(__file__).resolve().parents[2] / "../shared/swe-bench"


def _dgm(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, *args: str):
    monkeypatch.setattr(sys, "argv", ["dgm", *args])
    with pytest.raises(SystemExit) as exited:
        cli.main()
    return exited.value.code, capsys.readouterr().err


@pytest.fixture
def no_swebench(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "swebench", None)

    def spent(*a: object, **k: object) -> None:
        raise AssertionError("something was built or run before the preflight")

    import dgm.benchmarks.swebench.images as images
    import dgm.evaluation.evaluate_agent as evaluate_agent

    monkeypatch.setattr(images, "build", spent)
    monkeypatch.setattr(evaluate_agent, "evaluate_agent", spent)


@pytest.mark.usefixtures("no_swebench")
def test_sandbox_build_swebench_names_the_missing_extra(monkeypatch, capsys, tmp_path) -> None:
    code, err = _dgm(monkeypatch, capsys, "sandbox", "build", "swebench", "--data", str(SWE))
    assert code == 2
    assert "'swebench', which is not installed" in err
    assert "pip install 'dgm[swebench]'" in err


@pytest.mark.usefixtures("no_swebench")
def test_eval_names_the_missing_extra_before_any_task(monkeypatch, capsys, tmp_path) -> None:
    code, err = _dgm(monkeypatch, capsys, "eval", "oracle", "--benchmark", "swebench",
                     "--data", str(SWE), "--out", str(tmp_path / "out"))  # fmt: skip
    assert code == 2
    assert "pip install 'dgm[swebench]'" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.usefixtures("no_swebench")
def test_run_names_the_missing_extra_and_leaves_no_run(monkeypatch, capsys, tmp_path) -> None:
    code, err = _dgm(monkeypatch, capsys, "run", str(tmp_path / "r"), "--benchmark", "swebench",
                     "--data", str(SWE), "--dry-run")  # fmt: skip
    assert code == 2
    assert "benchmark swebench needs the Python package 'swebench'" in err
    assert not (tmp_path / "r").exists()


def test_every_missing_backend_and_executor_is_named(monkeypatch) -> None:
    from dgm.dependencies import MissingDependency, require

    monkeypatch.setitem(sys.modules, "anthropic", None)
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(MissingDependency) as caught:
        require(["polyglot"], "ray", ["anthropic/claude-sonnet-4-5", "scripted/capability"])
    assert "executor ray" in caught.value.message and "model anthropic" in caught.value.message
    assert caught.value.hint == "pip install 'dgm[ray]' && pip install 'anthropic>=0.40'"
    require(["polyglot"], "thread", ["scripted/capability"])  # nothing missing: no error
