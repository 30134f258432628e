"""The real seed agent process against a scripted model: it fixes a bug, and every
mishap (malformed call, unknown tool, timeout, huge output, budget refusal, SIGTERM)
ends in its documented behaviour instead of a crash."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from dgm.scripted.agent_drivers import call, calls_made, last_tool_result, say, tool_results

BUGGY_REPO = {
    "calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
    "test_calc.py": (
        "import unittest\n\nfrom calc import add, mul\n\n\n"
        "class CalcTest(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n"
        "    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n"
    ),
}
RUN_TESTS = "python3 -m unittest -q 2>&1 | tail -3"


def make_repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def bug_fixer(request: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """Run the tests, read the failing code, fix it, rerun the tests, finish."""
    step, result = len(calls_made(request)), last_tool_result(request) or ""
    if step == 0:
        return call(request, "bash", command=RUN_TESTS)
    if step == 1:
        return call(request, "view", path="calc.py") if "FAILED" in result else say("?")
    if step == 2:
        fix = "return a - b" in result  # the view shows the culprit
        return call(request, "str_replace", path="calc.py", old_str="return a - b",
                    new_str="return a + b") if fix else say("?")  # fmt: skip
    if step == 3:
        return call(request, "bash", command=RUN_TESTS)
    if result.strip().endswith("OK\n[exit code 0]".split("\n")[0]) or "\nOK" in result:
        return call(request, "finish", summary="add() subtracted; it adds now")
    return say("the tests still fail")


def test_scripted_model_fixes_a_bug_and_the_repo_tests_pass(
    tmp_path, scripted_gateway, seed_agent_dir, solve
):
    repo = make_repo(tmp_path / "repo", BUGGY_REPO)
    env = scripted_gateway(bug_fixer).env
    run = solve(
        seed_agent_dir, repo, {"id": "calc-1", "problem_statement": "add() is wrong"}, env, tmp_path
    )
    assert run.returncode == 0, run.stderr
    assert run.trajectory["exit_status"] == "finished"
    assert run.trajectory["exit_message"] == "add() subtracted; it adds now"
    tests = subprocess.run([sys.executable, "-m", "unittest", "-q"], cwd=repo, capture_output=True)
    assert tests.returncode == 0, tests.stderr
    assert [s["tool_calls"][0]["name"] for s in run.trajectory["steps"]] == [
        "bash", "view", "str_replace", "bash", "finish"]  # fmt: skip
    assert all(
        s["llm_s"] >= 0 and s["tool_calls"][0]["duration_s"] >= 0 for s in run.trajectory["steps"]
    )


def raw_call(request: dict[str, Any], name: str, arguments: str) -> dict[str, Any]:
    message = call(request, name)
    message["tool_calls"][0]["function"]["arguments"] = arguments
    return message


def mishaps(request: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """One mistake per step, then finish: the agent must survive them all."""
    step = len(calls_made(request))
    if step == 0:
        return raw_call(request, "bash", '{"command": "ls"')  # truncated JSON
    if step == 1:
        return call(request, "teleport", to="mars")
    if step == 2:
        return call(request, "bash", command="sleep 60; echo woke", timeout=1)
    if step == 3:
        return call(request, "bash", command="echo START; seq 1 3000000; echo END")
    if step == 4 and request["messages"][-1]["role"] == "tool":
        return say("Let me think about this without a tool.")
    if step == 4:
        return call(request, "str_replace", path="missing.py", old_str="a", new_str="b")
    return call(request, "finish", summary=f"survived {len(tool_results(request))} mishaps")


def test_mishaps_produce_documented_results_not_crashes(
    tmp_path, scripted_gateway, seed_agent_dir, solve
):
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    env = scripted_gateway(mishaps).env
    started = time.monotonic()
    run = solve(seed_agent_dir, repo, {"id": "m", "problem_statement": "anything"}, env, tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.trajectory["exit_status"] == "finished"
    assert time.monotonic() - started < 30  # the 60 s sleep was killed at its 1 s timeout
    bad_json, unknown, timed_out, huge, missing, _ = run.tool_outputs()
    assert bad_json.startswith("Error: the arguments are not valid JSON")
    assert unknown.startswith("Error: unknown tool 'teleport'") and "str_replace" in unknown
    assert "timed out after 1 s" in timed_out and "woke" not in timed_out
    assert huge.startswith("START") and "END\n[exit code 0]" in huge and "omitted" in huge
    assert len(huge) < 12_000
    assert missing.startswith("Error:") and "does not exist" in missing
    nudge = [m for m in run.trajectory["messages"] if m["role"] == "user"][-1]
    assert "did not call a tool" in nudge["content"]
    assert run.trajectory["usage"]["llm_calls"] == 7  # the prose reply counted as a step


def endless_explorer(request: dict[str, Any], context: Any = None) -> dict[str, Any]:
    return call(request, "bash", command="ls")


def test_budget_refusal_ends_the_run_cleanly(tmp_path, scripted_gateway, seed_agent_dir, solve):
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    env = scripted_gateway(endless_explorer, max_calls=2, socket=False).env  # TCP + token
    run = solve(seed_agent_dir, repo, {"id": "b", "problem_statement": "explore"}, env, tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.trajectory["exit_status"] == "budget_exceeded"
    assert "budget" in run.trajectory["exit_message"]
    assert run.trajectory["usage"]["llm_calls"] == 2
    assert len(run.tool_outputs()) == 2


def test_step_limit_and_sigterm_end_with_a_trajectory(
    tmp_path, scripted_gateway, seed_agent_dir, solve, manifest
):
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    env = scripted_gateway(endless_explorer).env
    run = solve(
        seed_agent_dir, repo, {"id": "s", "problem_statement": "x", "max_steps": 3}, env, tmp_path
    )
    assert run.trajectory["exit_status"] == "step_limit"
    assert run.trajectory["usage"]["llm_calls"] == 3

    pid_file = tmp_path / "sleeper.pid"
    sleeper = f"echo $$ > {pid_file}; sleep 60"
    sleeper_env = scripted_gateway(
        lambda request, ctx=None: call(request, "bash", command=sleeper)
    ).env
    task_file, out = tmp_path / "task2.json", tmp_path / "out2"
    task_file.write_text(json.dumps({"id": "t", "problem_statement": "sleep"}))
    command = manifest(seed_agent_dir, "solve", workdir=repo, task_file=task_file, output_dir=out)
    proc = subprocess.Popen(command, env={**os.environ, **sleeper_env})
    deadline = time.monotonic() + 20
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.terminate()
    assert proc.wait(timeout=10) == 0
    trajectory = json.loads((out / "trajectory.json").read_text())
    assert trajectory["exit_status"] == "interrupted"
    assert not _group_alive(int(pid_file.read_text()))  # the command went down with the agent


def _group_alive(pgid: int) -> bool:
    """Whether a process of the group still runs within 20 s. A zombie does not count:
    once its parent is gone, reaping it is init's business, which a loaded machine
    may do late (`os.killpg(pgid, 0)` still finds a zombie)."""
    deadline = time.monotonic() + 20
    while True:
        if not any(state != "Z" for state in _group_states(pgid)):
            return False
        if time.monotonic() > deadline:
            return True
        time.sleep(0.1)


def _group_states(pgid: int) -> list[str]:
    states = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if int(fields[2]) == pgid:  # (state, ppid, pgrp, ...)
            states.append(fields[0])
    return states
