"""`dgm init/status/tree/show/diff` as a user runs them, including bad input."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from dgm.store import Evaluation, Run
from tests.store.conftest import value_diff


def dgm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dgm", *args], capture_output=True, text=True, timeout=120
    )


def test_help_lists_every_command() -> None:
    out = dgm("--help").stdout
    for name in (
        "init",
        "status",
        "tree",
        "show",
        "diff",
        "run",
        "resume",
        "eval",
        "bench",
        "sandbox",
        "gateway",
        "simulate",
        "report",
        "export",
    ):
        assert f" {name} " in out


def test_init_then_inspect(tmp_path: Path, seed_dir: Path) -> None:
    run_dir = tmp_path / "r"
    result = dgm("init", str(run_dir), "--seed", str(seed_dir))
    assert result.returncode == 0, result.stderr
    with Run.open(run_dir) as run:
        a = run.add_node(0, diff=value_diff(1, 2), origin="Make VALUE two").id
        b = run.add_node(a, diff=value_diff(2, 3), origin="Make VALUE three").id
        for task, ok in (("t1", True), ("t2", True), ("t3", False)):
            run.record_evaluation(Evaluation(node_id=a, task_id=task, benchmark="p", resolved=ok))
        run.record_evaluation(Evaluation(node_id=0, task_id="t1", benchmark="p", resolved=False))
    tree = dgm("tree", str(run_dir))
    assert tree.returncode == 0
    lines = tree.stdout.splitlines()
    assert lines[0].startswith("0  0/1 (0%)  children 1")
    assert f"└─ {a}  2/3 (67%)  children 1" in lines[1] and "★ best" in lines[1]
    assert f"└─ {b}  -/-  children 0" in lines[2]
    show = dgm("show", str(run_dir), str(a))
    assert show.returncode == 0
    assert "Make VALUE two" in show.stdout and "+VALUE = 2" in show.stdout
    assert "PASS  t1" in show.stdout and "fail  t3" in show.stdout
    assert "score     2/3 (67%)" in show.stdout
    assert "+VALUE = 3" in dgm("diff", str(run_dir), "0", str(b)).stdout
    status = dgm("status", str(run_dir))
    assert "nodes     3 (3 active)" in status.stdout and f"best      node {a}" in status.stdout


def _assert_one_line_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def test_bad_input_gives_one_line_errors(tmp_path: Path, seed_dir: Path) -> None:
    run_dir = tmp_path / "r"
    assert dgm("init", str(run_dir), "--seed", str(seed_dir)).returncode == 0
    _assert_one_line_error(dgm("init", str(run_dir), "--seed", str(seed_dir)), "already holds")
    _assert_one_line_error(dgm("tree", str(tmp_path / "missing")), "does not exist")
    _assert_one_line_error(dgm("show", str(run_dir), "99"), "node 99 does not exist")
    bad_config = tmp_path / "bad.toml"
    bad_config.write_text("[limits]\nmax_eval = 3\n")
    _assert_one_line_error(
        dgm("init", str(tmp_path / "r2"), "--seed", str(seed_dir), "--config", str(bad_config)),
        "limits.max_eval",
        "max_evals",
    )
    (run_dir / "run.sqlite").write_bytes(b"garbage" * 1000)
    for suffix in ("-wal", "-shm"):
        (run_dir / f"run.sqlite{suffix}").unlink(missing_ok=True)
    _assert_one_line_error(dgm("status", str(run_dir)), "not a readable run database")
    debug = dgm("--debug", "status", str(run_dir))
    assert "Traceback" in debug.stderr


def test_newer_schema_is_refused(tmp_path: Path, seed_dir: Path) -> None:
    run_dir = tmp_path / "r"
    assert dgm("init", str(run_dir), "--seed", str(seed_dir)).returncode == 0
    conn = sqlite3.connect(run_dir / "run.sqlite")
    conn.execute("UPDATE meta SET value='999' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    _assert_one_line_error(dgm("tree", str(run_dir)), "schema version 999", "upgrade dgm")
