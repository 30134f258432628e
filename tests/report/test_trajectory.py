"""`dgm show RUN NODE --trajectory TASK` on the small run's real agent logs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dgm.commands.app import app
from dgm.errors import DgmError
from dgm.report.logs import EvalLogs, load_trajectory
from dgm.report.trajectory import print_trajectory
from dgm.store import Run


def _show(run_dir: Path, *args: str) -> str:
    result = CliRunner().invoke(app, ["show", str(run_dir), *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_trajectory_shows_turns_tool_calls_outputs_and_usage(small_run_dir: Path) -> None:
    out = _show(small_run_dir, "3", "--trajectory", "python__reverse-string")
    assert out.startswith("node 3 on python__reverse-string: PASS")
    assert "usage     3 calls" in out
    assert "── step 1" in out and "── step 3" in out
    assert '→ bash(command="ls && cat reverse_string.py")  ok' in out
    assert "│ def reverse(text):" in out  # the tool's output, indented
    assert '→ create(path="reverse_string.py"' in out
    assert "exit: finished" in out
    # A unique part of a task id is enough.
    assert _show(small_run_dir, "3", "--trajectory", "reverse") == out


def test_long_outputs_are_cut(small_run_dir: Path) -> None:
    out = _show(small_run_dir, "0", "--trajectory", "python__leap")
    system = out.split("[system]\n", 1)[1].split("\n[user]", 1)[0]
    assert "more chars]" in system and len(system) < 700


def test_falls_back_to_the_gateway_log(small_run_dir: Path, tmp_path: Path) -> None:
    run_copy = tmp_path / "run"
    shutil.copytree(small_run_dir, run_copy)
    with Run.open(run_copy) as run:
        e = run.evaluations(1)[0]
        folder = run_copy / e.log_dir
        original = load_trajectory(EvalLogs(folder))
        (folder / "trajectory.json").unlink()
        rebuilt = load_trajectory(EvalLogs(folder))
        assert rebuilt.source == "llm.jsonl" and original.source == "trajectory.json"
        assert [t.content for t in rebuilt.turns] == [t.content for t in original.turns]
        assert [[c.name for c in t.tool_calls] for t in rebuilt.turns] == [
            [c.name for c in t.tool_calls] for t in original.turns
        ]
        assert rebuilt.turns[0].tool_calls[0].output == original.turns[0].tool_calls[0].output
        (folder / "llm.jsonl").unlink()
        with pytest.raises(DgmError, match="no trajectory"):
            print_trajectory(run, 1, e.task_id, lambda *a, **k: None)


def test_unknown_task_names_the_tasks(small_run_dir: Path) -> None:
    result = CliRunner().invoke(app, ["show", str(small_run_dir), "1", "--trajectory", "nope"])
    assert result.exit_code != 0
    assert isinstance(result.exception, DgmError)
    assert "python__leap" in result.exception.hint
