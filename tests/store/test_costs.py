"""Cost per job, visible: spend per expansion and per evaluation (tokens with cache reads
and writes) and dollars per additional task solved, in `dgm status`, `dgm show`, the
report's data and a database from before the cache-write column."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from dgm.report.costs import cost_per_point
from dgm.report.data import report_data
from dgm.store import Evaluation, Run
from dgm.store.db import MIGRATIONS, Database
from dgm.store.usage import spend_by_kind
from tests.store.conftest import value_diff
from tests.store.test_cli import dgm

SOLVED = {0: {"t1", "t2"}, 1: {"t1", "t2", "t3", "t4"}}  # the child solves 2 more tasks


def usage(job: str, node: int, role: str, inp: int, cached: int, write: int, out: int, usd: float):
    return {
        "job_id": job,
        "node_id": node,
        "role": role,
        "model": "anthropic/claude-sonnet-4-5",
        "input_tokens": inp,
        "cached_tokens": cached,
        "cache_write_tokens": write,
        "output_tokens": out,
        "cost_usd": usd,
    }


@pytest.fixture
def costed(run: Run) -> Run:
    """Seed 2/4, one expansion ($0.30 over two calls), child 4/4; each evaluation $0.05."""
    run.record_usage(usage("expand-0-0", 0, "diagnose", 2000, 0, 0, 300, 0.10))
    run.record_usage(usage("expand-0-0", 0, "self_improve", 9000, 6000, 2000, 500, 0.20))
    child = run.add_node(0, diff=value_diff(1, 2), origin="Make VALUE two", job_id="expand-0-0")
    for node in (0, child.id):
        for task in ("t1", "t2", "t3", "t4"):
            job = f"eval-{node}-{task}"
            run.record_usage(usage(job, node, "solve", 4000, 3000, 500, 100, 0.05))
            tally = {"calls": 2, "input_tokens": 4000, "cached_tokens": 3000}
            tally |= {"cache_write_tokens": 500, "output_tokens": 100, "cost_usd": 0.05}
            run.record_evaluation(
                Evaluation(
                    node_id=node,
                    task_id=task,
                    benchmark="p",
                    resolved=task in SOLVED[node],
                    cost_usd=0.05,
                    job_id=job,
                    details={"usage": tally},
                )
            )
    return run


def test_spend_by_kind_and_cost_per_point(costed: Run) -> None:
    kinds = spend_by_kind(costed)
    assert (kinds["expansion"].jobs, kinds["evaluation"].jobs) == (1, 8)
    assert kinds["expansion"].cost_usd == pytest.approx(0.30)
    assert kinds["expansion"].cache_write_tokens == 2000
    assert kinds["evaluation"].cost_usd == pytest.approx(0.40)
    assert kinds["evaluation"].per_job_usd == pytest.approx(0.05)
    point = cost_per_point(costed, best=1)
    # $0.70 spent in all, 2 more tasks solved than the seed on the 4 both were given.
    assert (point.gained, point.common) == (2, 4)
    assert point.usd_per_task == pytest.approx(0.35)
    assert cost_per_point(costed, best=0) is None


def test_status_and_show_print_the_costs(costed: Run) -> None:
    path = str(costed.path)
    costed.close()
    status = dgm("status", path)
    assert status.returncode == 0, status.stderr
    out = status.stdout
    assert "expand    1 jobs: $0.30, $0.3000 each" in out
    assert "eval      8 jobs: $0.40, $0.0500 each" in out
    assert "43,000 in (30,000 cached, 6,000 cache write), 1,600 out" in out
    assert "$0.35 per additional task solved (node 1 solves 2 more of 4 tasks" in out
    show = dgm("show", path, "1", "--no-diff")
    assert show.returncode == 0, show.stderr
    assert "expansion $0.3000, 2 calls; 11,000 in (6,000 cached, 2,000 cache write)" in show.stdout
    assert "$0.0500  4,000 in (3,000 cached, 500 cache write), 100 out" in show.stdout


def test_report_carries_the_costs(costed: Run, tmp_path: Path) -> None:
    data = report_data(costed, tmp_path)
    assert data["costs"]["perPoint"]["usd_per_task"] == pytest.approx(0.35)
    assert data["costs"]["byKind"]["evaluation"]["jobs"] == 8
    child = next(n for n in data["nodes"] if n["id"] == 1)
    assert child["made"]["cost_usd"] == pytest.approx(0.30)
    assert next(n for n in data["nodes"] if n["id"] == 0)["made"] is None


def test_a_database_from_before_prompt_caching_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "run.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(MIGRATIONS[1])
    conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    conn.execute(
        "INSERT INTO llm_usage(ts, job_id, input_tokens, cost_usd) VALUES (1, 'old', 5, 1)"
    )
    conn.commit()
    conn.close()
    db = Database.open(path)
    row = db.query("SELECT input_tokens, cache_write_tokens FROM llm_usage")[0]
    assert (row["input_tokens"], row["cache_write_tokens"]) == (5, 0)
    db.close()
