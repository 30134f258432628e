"""`dgm sandbox build` is followable: a line per step, a time limit, and on failure the
tail of the failing tool's output. Failing recipes only: no real image is rebuilt."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dgm.commands.app import app
from dgm.errors import SandboxError
from dgm.sandbox import images
from dgm.sandbox.build_steps import Steps, run_tool

REPO_CONTAINERS = Path(__file__).resolve().parents[2] / "containers"
TOOL = [sys.executable, "-c"]


def test_tool_progress_and_failure_tail() -> None:
    lines: list[str] = []
    steps = Steps("base", lines.append, timeout_s=60)
    script = "import sys\nfor i in range(40): print(f'I: stage {i}' if i % 10 == 0 else f'x{i}')\n"
    with pytest.raises(SandboxError, match=r"`.*python.*` exited with 3") as info:
        run_tool([*TOOL, script + "print('E: no such package', file=sys.stderr); sys.exit(3)"],
                 steps, lambda line: line.startswith("I: "), "fix it")  # fmt: skip
    assert [line.split("] ")[1] for line in lines if "] I: " in line] == [
        f"I: stage {i}" for i in (0, 10, 20, 30)
    ]
    assert lines[-1] == "  | E: no such package" and "  | x39" in lines
    assert sum(line.startswith("  | ") for line in lines) == 25  # the tail only
    assert info.value.hint == "fix it"


def test_tool_is_killed_at_the_time_limit() -> None:
    lines: list[str] = []
    steps = Steps("base", lines.append, timeout_s=1)
    with pytest.raises(SandboxError, match="timed out after 1 s"):
        run_tool([*TOOL, "import time; print('I: waiting', flush=True); time.sleep(60)"],
                 steps, lambda line: line.startswith("I: "), "hint")  # fmt: skip
    assert steps.elapsed() < 30 and "  | I: waiting" in lines


def _failing_recipe(tmp_path: Path, monkeypatch, run_line: str) -> None:
    """polyglot's recipe replaced: its parents (runtime, base) stay the built images."""
    shutil.copytree(REPO_CONTAINERS, tmp_path / "containers")
    monkeypatch.setenv("DGM_CONTAINERS_DIR", str(tmp_path / "containers"))
    dockerfile = tmp_path / "containers" / "polyglot" / "Dockerfile"
    dockerfile.write_text(f"ARG BASE_IMAGE\nFROM ${{BASE_IMAGE}}\nUSER root\n{run_line}\n")


@pytest.mark.docker
def test_failing_docker_step_shows_steps_and_the_tail(tmp_path, monkeypatch, runtime_image):
    bogus = "RUN echo dgm-before-failing && apt-get install -y dgm-no-such-package"
    _failing_recipe(tmp_path, monkeypatch, bogus)
    result = CliRunner().invoke(app, ["sandbox", "build", "polyglot"])
    assert isinstance(result.exception, SandboxError), result.output
    out = result.output
    assert "polyglot: [" in out and "Step 4/5 : RUN echo dgm-before-failing" in out
    assert "  | dgm-before-failing" in out and "Unable to locate package" in out
    assert "failed: The command" in str(result.exception)
    assert "above" in result.exception.hint
    assert images.tag("polyglot") not in str(images.docker_client().images.list())


@pytest.mark.docker
def test_docker_build_is_cut_at_the_timeout(tmp_path, monkeypatch, runtime_image) -> None:
    _failing_recipe(tmp_path, monkeypatch, "RUN echo dgm-sleeping && sleep 120")
    result = CliRunner().invoke(app, ["sandbox", "build", "polyglot", "--timeout", "5"])
    assert isinstance(result.exception, SandboxError), result.output
    assert "timed out after 5 s" in str(result.exception)
    assert "  | dgm-sleeping" in result.output
    time.sleep(3)  # the engine cancels the build when the connection goes
    running = images.docker_client().api.containers(all=True)
    assert not [c for c in running if "dgm-sleeping" in c.get("Command", "")]


def test_docker_event_stream_success_and_error() -> None:
    from dgm.sandbox.build_steps import follow_docker_build

    lines: list[str] = []
    ok = [
        {"stream": "Step 1/2 : FROM x\n"},
        {"stream": " ---> abc\n"},
        {"stream": "Step 2/2 : RUN y"},
    ]
    follow_docker_build(iter(ok), Steps("suite", lines.append), "hint")
    assert [line.split("] ")[1] for line in lines] == ["Step 1/2 : FROM x", "Step 2/2 : RUN y"]
    bad = [*ok, {"stream": "boom output\n"}, {"error": "The command 'y' returned 1"}]
    lines.clear()
    with pytest.raises(SandboxError, match="building image suite failed: The command 'y'"):
        follow_docker_build(iter(bad), Steps("suite", lines.append), "hint")
    assert "  | boom output" in lines and lines[-1] == "  | The command 'y' returned 1"
