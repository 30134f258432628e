"""The judge's `tampered` verdict in the store: recorded with its evidence, a failure for
every count, never best (whatever the score), and old run databases upgrade to hold it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from dgm.report import lineage
from dgm.report.progress import run_progress
from dgm.simulate.landscape import LandscapeParams
from dgm.simulate.recorded import load_recorded
from dgm.store import Evaluation, Run, best_node
from dgm.store.best import BestRule, Candidate, pick_best
from dgm.store.db import MIGRATIONS, SCHEMA_VERSION
from dgm.store.selection import CONFIRMATION_KEY
from dgm.strategies import TaskPlan
from dgm.strategies.state import SearchState
from tests.store.conftest import value_diff

EVIDENCE = "log: must-fail canary test_dgm_canary_x7 passed"


def _evals(run: Run, node: int, passed: int, total: int, tampered: tuple[int, ...] = ()) -> None:
    for i in range(total):
        forged = i in tampered
        run.record_evaluation(Evaluation(
            node_id=node, task_id=f"t{i:02d}", benchmark="b", resolved=i < passed,
            tampered=forged, details={"tamper_evidence": EVIDENCE} if forged else {},
        ))  # fmt: skip


def test_a_tampered_evaluation_is_recorded_as_a_failure_with_its_evidence(run: Run) -> None:
    # The caller claims a pass: the store never records a tampered run as one.
    saved = run.record_evaluation(Evaluation(
        node_id=0, task_id="t", benchmark="b", resolved=True, tampered=True, job_id="e1",
        details={"tamper_evidence": EVIDENCE},
    ))  # fmt: skip
    assert saved.tampered and not saved.resolved
    assert saved.tamper_evidence == EVIDENCE
    assert run.score(0).passed == 0 and run.score(0).tampered == 1
    assert run.tampered_nodes() == {0}
    assert [e.id for e in run.tampered_evaluations(0)] == [saved.id]
    assert run.tampered_evaluations(1) == []
    # Every strategy reads the search state, which counts it as a failure; so does the
    # simulator replaying a recorded run.
    state = SearchState.replay(TaskPlan(("t",)), [(0, None)], [(0, "t", saved.resolved)])
    assert state.own_counts(0) == (0, 1)
    assert load_recorded(run.path, LandscapeParams()).results[0] == {"t": False}


def test_a_tampered_node_is_never_best_even_with_a_perfect_score(run: Run) -> None:
    perfect = Candidate(1, "active", 50, 50, tampered=1)
    honest = Candidate(2, "active", 1, 50)
    assert pick_best([perfect, honest]) == 2
    assert pick_best([perfect]) is None
    assert pick_best([perfect, honest], BestRule(confirmed=1)) == 2  # not even confirmed

    a = run.add_node(0, diff=value_diff(1, 2), origin="a").id
    b = run.add_node(0, diff=value_diff(1, 3), origin="b").id
    _evals(run, 0, 2, 12)
    _evals(run, a, 12, 12)
    _evals(run, b, 6, 12)
    assert best_node(run) == a
    # One more evaluation of `a`, tampered: its other 12 passes no longer make it best.
    forged = Evaluation(node_id=a, task_id="t99", benchmark="b", resolved=True, tampered=True)
    run.record_evaluation(forged)
    graph = lineage.build_lineage(run)
    assert best_node(run) == b == lineage.best_node(graph)
    assert graph.nodes[a]["tampered"] == 1 and graph.nodes[a]["passed"] == 12
    run.db.set_meta(CONFIRMATION_KEY, json.dumps({"node": a}))  # a confirmed tampered node
    assert best_node(run) == b == lineage.best_node(lineage.build_lineage(run))
    # The progress chart's "best so far" drops it from the moment it was caught.
    progress = run_progress(run)
    assert progress.best_node[-2] == a  # just before: best
    assert progress.best_node[-1] == b != a


def _v2_database(path: Path) -> None:
    """A run.sqlite as dgm wrote it at schema version 2 (before `tampered`)."""
    conn = sqlite3.connect(path)
    for version in (1, 2):
        conn.executescript(MIGRATIONS[version])
    conn.execute("INSERT INTO meta VALUES ('schema_version', '2')")
    conn.commit()
    conn.close()


def test_a_run_made_before_the_column_opens_upgraded_and_resumes(run: Run) -> None:
    assert SCHEMA_VERSION >= 3
    path, seed = run.path, run.node(0)
    child = run.add_node(0, diff=value_diff(1, 2), origin="c")
    run.close()
    old = path / "run.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{old}{suffix}").unlink(missing_ok=True)
    _v2_database(old)
    conn = sqlite3.connect(old)
    for node in (seed, child):
        conn.execute(
            "INSERT INTO nodes(id, parent_id, commit_sha, depth, created_at, status, origin)"
            " VALUES (?,?,?,?,?,?,?)",
            (node.id, node.parent_id, node.commit, node.depth, 1.0, "active", node.origin),
        )
    conn.execute(
        "INSERT INTO evaluations(node_id, task_id, benchmark, resolved, created_at, job_id)"
        " VALUES (1, 't1', 'b', 1, 2.0, 'old-eval')"
    )
    conn.commit()
    columns = [r[1] for r in conn.execute("PRAGMA table_info(evaluations)")]
    assert "tampered" not in columns
    conn.close()

    with Run.open(path) as upgraded:
        assert upgraded.db.schema_version() == SCHEMA_VERSION
        (old_eval,) = upgraded.evaluations()
        assert old_eval.resolved and not old_eval.tampered
        assert upgraded.score(1).passed == 1 and upgraded.tampered_nodes() == set()
        assert best_node(upgraded) == 1
        # The upgraded run goes on recording, tampered verdicts included.
        forged = Evaluation(node_id=1, task_id="t2", benchmark="b", resolved=False, tampered=True)
        upgraded.record_evaluation(forged)
        assert upgraded.tampered_nodes() == {1} and best_node(upgraded) is None
    with Run.open(path) as again:  # opening an upgraded run migrates nothing twice
        assert again.db.schema_version() == SCHEMA_VERSION
        assert len(again.evaluations()) == 2


def test_gea_group_experience_names_a_member_caught_tampering(run: Run) -> None:
    from dgm.loop.group_experience import group_experience_from_run

    a = run.add_node(0, diff=value_diff(1, 2), origin="patch the test runner").id
    b = run.add_node(0, diff=value_diff(1, 3), origin="read the task twice").id
    _evals(run, 0, 1, 3)
    _evals(run, a, 3, 3, tampered=(2,))
    _evals(run, b, 2, 3)
    text = group_experience_from_run(run, [str(a), str(b)])
    forged, honest = text.split("- agent ")[1:]
    assert forged.splitlines()[1:] == [
        "  fixed (solved where its parent failed): t01",  # t02 was forged, not fixed
        "  broke (failed where its parent solved): none",
        "  CAUGHT TAMPERING with the tests (never rewarded; do not reuse this change) on: t02",
    ]
    assert "TAMPERING" not in honest
