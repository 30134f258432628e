"""Selection features that need the loop: the held-out split and the confirmation stage
(recorded in the run, used by status/export), GEA's group experience in the expand input."""

from __future__ import annotations

import json
from pathlib import Path

from dgm.jobs.diagnose import GROUP_HEADER, ImprovementTarget, diagnosis_request, problem_statement
from dgm.loop.meta_loop import MetaLoop
from dgm.report import lineage
from dgm.report.export import resolve_node
from dgm.store import Run
from dgm.store.selection import CONFIRMATION_KEY, SPLIT_KEY
from tests.loop.fake_jobs import TASKS, FakeJobs

CONFIRM = {
    "strategy.name": "hgm",
    "limits.max_evals": 30,
    "workers": 2,
    "strategy.final.confirm_top_k": 2,
    "strategy.final.held_out_fraction": 0.34,
}


def test_confirmation_stage_uses_held_out_tasks_only_and_ships_its_verdict(make_run) -> None:
    run = make_run(**CONFIRM)
    summary = MetaLoop(run, jobs=FakeJobs(run)).run()
    split = json.loads(run.db.get_meta(SPLIT_KEY))
    held = set(split["held_out"])
    assert len(held) == 2 and held | set(split["search"]) == set(TASKS)
    verdict = json.loads(run.db.get_meta(CONFIRMATION_KEY))
    candidates = set(verdict["candidates"])
    assert len(candidates) == 2
    # Held-out tasks were evaluated only by the candidates, each on all of them, after
    # the search: the search itself never saw them.
    on_held = [(str(e.node_id), e.task_id) for e in run.evaluations() if e.task_id in held]
    assert sorted(on_held) == sorted((c, t) for c in candidates for t in held)
    search_evals = [e for e in run.evaluations() if e.task_id not in held]
    assert len(search_evals) <= 30
    # `best` everywhere is the confirmed node.
    assert summary.best_node == verdict["node"]
    graph = lineage.build_lineage(run)
    assert lineage.best_node(graph) == verdict["node"]
    assert resolve_node(run, "best").id == verdict["node"]
    # The candidate that solves more held-out tasks wins (fake agents: deeper is better).
    scores = {c: s for c, (s, _) in verdict["candidates"].items()}
    assert scores[str(verdict["node"])] == max(scores.values())


def test_export_follows_a_recorded_verdict_over_the_scores(make_run) -> None:
    run = make_run(**CONFIRM)
    MetaLoop(run, jobs=FakeJobs(run)).run()
    run.db.set_meta(CONFIRMATION_KEY, json.dumps({"node": 0}))  # the seed, worst by score
    assert resolve_node(run, "best").id == 0


def test_resume_keeps_the_recorded_split_and_redoes_no_confirmation_eval(make_run) -> None:
    run = make_run(**CONFIRM)
    MetaLoop(run, jobs=FakeJobs(run)).run()
    split = run.db.get_meta(SPLIT_KEY)
    before = len(run.evaluations())
    path = run.path
    run.close()
    again = Run.open(path)
    jobs = FakeJobs(again)
    MetaLoop(again, jobs=jobs).run()
    assert again.db.get_meta(SPLIT_KEY) == split
    assert len(again.evaluations()) == before  # budget spent, confirmation complete
    assert not [c for c in jobs.calls if c[0] == "eval"]


def test_without_confirmation_nothing_is_held_out(make_run) -> None:
    run = make_run(**{"strategy.name": "hgm", "limits.max_evals": 20})
    MetaLoop(run, jobs=FakeJobs(run)).run()
    assert json.loads(run.db.get_meta(SPLIT_KEY))["held_out"] == []
    assert run.db.get_meta(CONFIRMATION_KEY) is None


class RecordingJobs(FakeJobs):
    def __init__(self, run: Run) -> None:
        super().__init__(run)
        self.targets: list[tuple[int, ImprovementTarget]] = []

    def expand_job(self, job_id: str, parent: int, code: Path, target: ImprovementTarget,
                   log_dir: Path, history_dir: Path | None = None):  # fmt: skip
        self.targets.append((parent, target))
        return super().expand_job(job_id, parent, code, target, log_dir, history_dir)


def test_gea_group_experience_reaches_the_improvement_input(make_run, tmp_path) -> None:
    run = make_run(**{"strategy.name": "gea", "limits.max_evals": 60, "workers": 1,
                      "strategy.gea.group_size": 2})  # fmt: skip
    jobs = RecordingJobs(run)
    MetaLoop(run, jobs=jobs).run()
    grouped = [(p, t) for p, t in jobs.targets if t.group_experience]
    assert grouped, "no expansion of a group was made"
    parent, target = grouped[-1]
    job = next(j for j in run.jobs() if j.kind == "expand" and j.inputs.get("group"))
    others = job.inputs["group"]
    # Every member is described: what changed it, which tasks it fixed against its parent.
    for member in [job.inputs["parent"], *others]:
        assert f"agent {member}:" in job.inputs["target"]["group_experience"]
    child = next(n for n in run.nodes() if n.parent_id is not None)
    fixed = TASKS[2 + child.depth - 1]  # a depth-d fake agent solves the first 2 + d tasks
    assert any(fixed in t.group_experience for _, t in grouped if f"agent {child.id}:" in
               t.group_experience)  # fmt: skip
    # ...and it reaches both the diagnosis request and the improvement task.
    request = diagnosis_request(target, run.path / "work" / "nodes" / str(parent))
    assert GROUP_HEADER in request["messages"][1]["content"]
    assert target.group_experience in problem_statement(
        target, None if target.kind != "task" else {"problem_description": "x"}
    )
