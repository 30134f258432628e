"""The capability script, with the real agent process: the seed lacks `search_files` so
its task fails; asked to improve itself, the seed adds the tool to a copy of its own
source through its own edit tools; the edited agent passes its smoke test, uses the new
tool and solves the task (the hidden tests pass)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from dgm.scripted.agent_drivers import CapabilityScript, reference_files

EXERCISE = "proverb"


def workspace_for(exercise: Path, root: Path) -> Path:
    """What an agent gets: the stub and the instructions; no tests, no reference."""
    root.mkdir()
    config = json.loads((exercise / ".meta" / "config.json").read_text())
    for name in config["files"]["solution"]:
        shutil.copy(exercise / name, root / name)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def hidden_tests_pass(exercise: Path, workspace: Path, judge_dir: Path) -> bool:
    """Judge a copy of the workspace with the exercise's test file added."""
    shutil.copytree(workspace, judge_dir, ignore=shutil.ignore_patterns(".git"))
    config = json.loads((exercise / ".meta" / "config.json").read_text())
    test_file = config["files"]["test"][0]
    shutil.copy(exercise / test_file, judge_dir / test_file)
    module = Path(test_file).stem
    proc = subprocess.run(
        [sys.executable, "-m", "unittest", module], cwd=judge_dir, capture_output=True, timeout=120
    )
    return proc.returncode == 0


def git_copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for command in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "parent"],
    ):
        subprocess.run(["git", *command], cwd=target, check=True)
    return target


def test_capability_script_both_halves(
    tmp_path, polyglot_dir, scripted_gateway, seed_agent_dir, solve, manifest
):
    exercise = polyglot_dir / "python" / "exercises" / "practice" / EXERCISE
    instructions = (exercise / ".docs" / "instructions.md").read_text()
    script = CapabilityScript(
        lambda text: reference_files(exercise) if instructions[:200] in text else None
    )
    env = scripted_gateway(script).env
    task = {"id": f"python/{EXERCISE}", "problem_statement": instructions}

    # 1. The seed lacks the tool: it gives up and the hidden tests fail.
    seed_ws = workspace_for(exercise, tmp_path / "seed_ws")
    (tmp_path / "r1").mkdir()
    run = solve(seed_agent_dir, seed_ws, task, env, tmp_path / "r1")
    assert run.trajectory["exit_status"] == "finished"
    assert "search_files" in run.trajectory["exit_message"]
    assert not hidden_tests_pass(exercise, seed_ws, tmp_path / "judge1")

    # 2. Self-improvement: the seed edits a writable git copy of its own source.
    child = git_copy(seed_agent_dir, tmp_path / "child")
    (tmp_path / "r2").mkdir()
    improve = {"id": "improve", "problem_statement": script.improvement_statement()}
    run = solve(seed_agent_dir, child, improve, env, tmp_path / "r2")
    assert run.trajectory["exit_status"] == "finished"
    assert "smoke tests pass" in run.trajectory["exit_message"], run.tool_outputs()[-2:]
    diff = subprocess.run(
        ["git", "status", "--short"], cwd=child, capture_output=True, text=True
    ).stdout
    assert "coder/tools/search_files.py" in diff and "coder/tools/__init__.py" in diff
    smoke = subprocess.run(manifest(child, "smoke"), capture_output=True, text=True, timeout=120)
    assert smoke.returncode == 0, smoke.stderr
    new_test = [
        sys.executable,
        "-B",
        "-m",
        "unittest",
        "discover",
        "-v",
        "-s",
        str(child / "tests"),
    ]
    new_test = subprocess.run(
        [*new_test, "-p", "test_seed_search_files.py"], capture_output=True, text=True
    )
    assert new_test.returncode == 0 and "test_finds_matching_lines" in new_test.stderr

    # 3. The edited agent has the tool, uses it, and solves the task.
    child_ws = workspace_for(exercise, tmp_path / "child_ws")
    (tmp_path / "r3").mkdir()
    run = solve(child, child_ws, task, env, tmp_path / "r3")
    assert run.trajectory["exit_status"] == "finished"
    used = [c["name"] for s in run.trajectory["steps"] for c in s["tool_calls"]]
    assert used[0] == "search_files" and "def proverb" in run.tool_outputs()[0]
    assert hidden_tests_pass(exercise, child_ws, tmp_path / "judge3")
