"""`dgm eval` and `dgm bench` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dgm.commands.app import app
from dgm.errors import DgmError, NotFoundError

runner = CliRunner()


@pytest.mark.docker
def test_eval_prints_scores_per_language_and_saves_json(suite_image: str, tmp_path: Path) -> None:
    out = tmp_path / "results"
    result = runner.invoke(
        app, ["eval", "oracle", "--benchmark", "swebench", "--subset",
              "dgm__tinyutil-1,dgm__tinyutil-3", "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "python       2/2" in result.output
    saved = json.loads((out / "results.json").read_text())
    assert saved["summary"]["total"] == {"passed": 2, "total": 2}
    assert [o["task_id"] for o in saved["outcomes"]] == ["dgm__tinyutil-1", "dgm__tinyutil-3"]
    assert (out / "logs" / "dgm__tinyutil-1" / "test_output.txt").is_file()


def test_bench_list_and_bad_input(polyglot_dir: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["bench", "list", "polyglot", "--subset", "small",
                                 "--data", str(polyglot_dir)])  # fmt: skip
    assert result.exit_code == 0 and len(result.output.split()) == 10
    bad = runner.invoke(app, ["eval", "oracle", "--data", str(tmp_path / "none")])
    assert isinstance(bad.exception, NotFoundError)
    assert "dgm bench fetch polyglot" in str(bad.exception)
    bad = runner.invoke(app, ["eval", str(tmp_path), "--data", str(polyglot_dir)])
    assert isinstance(bad.exception, DgmError) and "agent.toml" in str(bad.exception)
    bad = runner.invoke(app, ["eval", "oracle", "--data", str(polyglot_dir),
                              "--subset", "python__beer-sung"])  # fmt: skip
    assert "did you mean python__beer-song" in str(bad.exception)
