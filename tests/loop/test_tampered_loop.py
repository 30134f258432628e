"""A `tampered` verdict in a running loop: a failure for the strategy, never a confirmation
candidate's win, never best, named in the run summary; and a run made before the column
existed resumes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from dgm.loop.meta_loop import MetaLoop
from dgm.report import lineage
from dgm.report.export import resolve_node
from dgm.store import Evaluation, Run, best_node
from dgm.store.selection import CONFIRMATION_KEY, SPLIT_KEY
from tests.loop.fake_jobs import FakeJob, FakeJobs
from tests.loop.test_selection import CONFIRM


class TamperingJobs(FakeJobs):
    """The confirmation stage's candidates tamper on the held-out tasks (with `first_only`,
    only the search's own choice): their patch makes the judge's canaries pass, so they
    claim every held-out task."""

    first_only = False

    def settle(self, job: FakeJob, result: dict[str, Any]) -> Any:
        settled = super().settle(job, result)
        held = json.loads(self.run.db.get_meta(SPLIT_KEY) or '{"held_out": []}')["held_out"]
        started = [e for e in self.run.events(500) if e["kind"] == "confirmation_started"]
        candidates = started[-1]["candidates"] if started else []
        picked = job.node in (candidates[:1] if self.first_only else candidates)
        if job.kind == "eval" and picked and job.task in held:
            return Evaluation(
                node_id=job.node, task_id=job.task, benchmark="fake", resolved=True,
                tampered=True, job_id=job.job_id,
                details={"tamper_evidence": "report: must-fail canary test_c_91 passed"},
            )  # fmt: skip
        return settled


@pytest.mark.parametrize("first_only", [True, False], ids=["search-choice", "every-candidate"])
def test_confirmation_never_ships_a_node_caught_tampering(make_run, first_only: bool) -> None:
    run = make_run(**CONFIRM)
    jobs = TamperingJobs(run)
    jobs.first_only = first_only
    summary = MetaLoop(run, jobs=jobs).run()
    forged = run.tampered_nodes()
    started = next(e for e in run.events(200) if e["kind"] == "confirmation_started")
    candidates = {int(c) for c in started["candidates"]}
    assert forged == ({int(started["candidates"][0])} if first_only else candidates)
    verdict = run.db.get_meta(CONFIRMATION_KEY)
    if first_only:  # the honest candidate ships, though the tampering one "solved" more
        assert verdict is not None and json.loads(verdict)["node"] in candidates - forged
    else:  # every candidate caught: no verdict; the best rule (tampering excluded) decides
        assert verdict is None
        assert any(e["kind"] == "confirmation_incomplete" and "tampering" in e["reason"]
                   for e in run.events(200))  # fmt: skip
    best = best_node(run)
    assert best is not None and best not in forged
    assert lineage.best_node(lineage.build_lineage(run)) == best == summary.best_node
    assert resolve_node(run, "best").id == best
    # Tampered held-out evaluations count as failures in the recorded scores.
    for node in forged:
        held = [e for e in run.evaluations(node) if e.tampered]
        assert held and not any(e.resolved for e in held)
    assert summary.tampered == {n: run.score(n).tampered for n in forged}
    assert any(line.startswith("TAMPERED: ") for line in summary.lines())


def _downgrade_to_v2(db: Path) -> None:
    """The database as dgm wrote it before migration 3 (no `evaluations.tampered`, nor what
    later migrations add)."""
    conn = sqlite3.connect(db)
    conn.execute("ALTER TABLE evaluations DROP COLUMN tampered")
    conn.execute("DROP TABLE steering")  # migration 4
    conn.execute("UPDATE meta SET value='2' WHERE key='schema_version'")
    conn.commit()
    conn.close()


def test_a_run_from_before_the_tampered_column_resumes(make_run) -> None:
    run = make_run(**{"strategy.name": "hgm", "limits.max_evals": 8})
    MetaLoop(run, jobs=FakeJobs(run)).run()
    path, before = run.path, len(run.evaluations())
    run.close()
    _downgrade_to_v2(path / "run.sqlite")
    resumed = Run.open(path)
    config = resumed.config.with_overrides({"limits.max_evals": 16})
    resumed.update_config(config)
    summary = MetaLoop(resumed, jobs=FakeJobs(resumed)).run()
    assert len(resumed.evaluations()) > before
    assert not any(e.tampered for e in resumed.evaluations())
    assert summary.tampered == {} and summary.best_node is not None
