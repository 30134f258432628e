"""An LLM outage in the middle of a run (no Docker: deterministic fake jobs that call a
real gateway bound to a stand-in provider on 127.0.0.1 that fails for a window).

The run pauses, resumes by itself, records nothing from the outage against any node, and
ends with the same lineage and per-task results as the undisturbed run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dgm.config import Price, RunConfig
from dgm.gateway import Gateway
from dgm.loop.meta_loop import MetaLoop
from dgm.store import Run
from tests.loop.fake_jobs import FakeJobs
from tests.outages.standin import StandIn


def _config(model: str, strategy: str = "hgm", llm: dict | None = None, **limits: Any) -> RunConfig:
    overrides = {"workers": 1, "strategy.name": strategy, "limits.max_evals": 14,
                 "llm.model": model, "llm.max_retries": 1, "sandbox.backend": "local"}  # fmt: skip
    overrides |= {f"limits.{k}": v for k, v in limits.items()}
    overrides |= {f"llm.{k}": v for k, v in (llm or {}).items()}
    return RunConfig(name="t").with_overrides(overrides).with_price(model, Price(input=1, output=1))


def _run(path: Path, seed: Path, standin: StandIn, **kw: Any) -> tuple[Run, MetaLoop, Any]:
    config = _config(standin.model, kw.pop("strategy", "hgm"), kw.pop("llm", None),
                     **kw.pop("limits", {}))  # fmt: skip
    run = Run.create(path, config, seed)
    gateway = Gateway.from_config(run.config, run="t", log_dir=None, on_usage=run.record_usage)
    gateway.retry = gateway.retry.__class__(max_retries=1, base_s=0.05, timeout_s=5)
    gateway._calls.retry = gateway.retry
    gateway.start().watch_outages()
    loop = MetaLoop(run, jobs=FakeJobs(run, gateway=gateway, gives_up=True, **kw))
    loop.breakers.first_probe_s = 0.3
    try:
        summary = loop.run()
    finally:
        gateway.stop()
    return run, loop, summary


def lineage(run: Run) -> list[tuple[Any, ...]]:
    return [(n.id, n.parent_id, run.diff(n.id) if n.parent_id is not None else "")
            for n in run.nodes()]  # fmt: skip


def results(run: Run) -> list[tuple[int, str, bool]]:
    return sorted((e.node_id, e.task_id, e.resolved) for e in run.evaluations())


def test_an_outage_pauses_the_run_and_changes_nothing_but_the_time(
    tmp_path: Path, tiny_seed: Path, standin: StandIn
) -> None:
    calm, _, calm_summary = _run(tmp_path / "calm", tiny_seed, standin)
    assert standin.failed == 0
    standin.calls = 0
    standin.down_after_calls = (9, 2.5)  # down from the 9th call for 2.5 s, then back
    stormy, loop, summary = _run(tmp_path / "stormy", tiny_seed, standin)

    assert standin.failed > 0, "the outage window was never hit"
    assert lineage(stormy) == lineage(calm)
    assert results(stormy) == results(calm)
    assert summary.stop_reason == calm_summary.stop_reason
    kinds = [e["kind"] for e in stormy.events(limit=None)]
    assert "paused" in kinds and "resumed" in kinds
    assert kinds.index("paused") < kinds.index("resumed")
    infra = stormy.events(limit=None, kinds=["job_infra"])
    assert len(infra) >= 3 and all(e["dependency"] == "llm:openai-compatible" for e in infra)
    assert all("LLM upstream unavailable" in e["reason"] for e in infra)
    # Nothing from the outage window is anyone's failure; the money it cost is shown.
    assert not any("upstream" in (e.error or "") for e in stormy.evaluations())
    assert loop.paused_s() > 0
    # --max-hours does not count the pause, unless [limits] count_pauses says so.
    assert loop.limit_s() == pytest.approx(loop.elapsed_s() - loop.paused_s(), abs=0.05)
    loop.config = loop.config.with_overrides({"limits.count_pauses": True})
    assert loop.limit_s() == pytest.approx(loop.elapsed_s(), abs=0.05)
    # What `dgm status` and `dgm show JOB` say about it.
    from dgm.report.outages import job_lines, outage_lines

    status = "\n".join(outage_lines(stormy))
    assert f"{len(infra)} job(s) re-queued (llm:openai-compatible {len(infra)})" in status
    assert "PAUSED" not in status  # it is back
    probes = stormy.usage_by("role")["probe"]  # the probes' calls are in the spend, shown
    assert probes["calls"] >= 2 and probes["cost_usd"] > 0  # failed ones and the answer
    assert f"probes    {probes['calls']} call(s) asking the provider" in status
    shown = "\n".join(job_lines(stormy, infra[0]["job"]))
    assert "state     done" in shown and "outage" in shown and "LLM upstream unavailable" in shown


def test_money_spent_before_an_outage_is_counted_and_shown_as_lost(
    tmp_path: Path, tiny_seed: Path, standin: StandIn
) -> None:
    standin.down_after_calls = (2, 1.5)  # the first call answers, then down
    run, _, _ = _run(tmp_path / "m", tiny_seed, standin, calls=2, limits={"max_evals": 2})
    lost = run.lost_to_outages_usd()
    assert lost > 0
    assert run.spend_usd() >= lost  # still counted in the budget


def test_each_attempt_after_an_outage_has_its_own_job_budget(
    tmp_path: Path, tiny_seed: Path, standin: StandIn
) -> None:
    """Each job makes 2 calls and may make 2 (`[llm.job_budget] max_calls`). A job that made
    them into an outage runs again with 2 calls of its own, not 0 left: it ends as in the
    undisturbed run, and the first attempt's spend is in the run's, shown as lost."""
    budget = {"job_budget.max_calls": 2}
    calm, _, _ = _run(tmp_path / "calm", tiny_seed, standin, calls=2, llm=budget,
                      strategy="greedy", limits={"max_evals": 4})  # fmt: skip
    assert not any("allowed calls" in (e.error or "") for e in calm.evaluations())
    standin.calls = 0
    standin.down_after_calls = (4, 1.0)  # the 2nd job's 2nd call fails for good
    run, _, _ = _run(tmp_path / "o", tiny_seed, standin, calls=2, llm=budget,
                     strategy="greedy", limits={"max_evals": 4})  # fmt: skip
    assert run.events(limit=None, kinds=["job_infra"]), "no job met the outage"
    assert not any("allowed calls" in (e.error or "") for e in run.evaluations())
    assert results(run) == results(calm) and lineage(run) == lineage(calm)
    lost = run.lost_to_outages_usd()
    probes = run.usage_by("role")["probe"]  # the breaker's "are you back?" calls cost too
    assert lost > 0 and probes["calls"] >= 1
    assert run.spend_usd() == pytest.approx(calm.spend_usd() + lost + probes["cost_usd"])


def test_an_outage_longer_than_the_requeue_limit_is_scored_with_its_reason(
    tmp_path: Path, tiny_seed: Path, standin: StandIn
) -> None:
    standin.down = True  # it never comes back: a job re-queued 1 time more is scored
    run, loop, _ = _run(tmp_path / "r", tiny_seed, standin,
                        limits={"max_requeues": 1, "max_evals": 2})  # fmt: skip
    loop.breakers.first_probe_s = 0.1
    scored = [e for e in run.evaluations() if e.error and "met an outage" in (e.error or "")]
    assert scored, [e.error for e in run.evaluations()]


def test_a_flooding_agent_owns_its_rate_limits(tmp_path: Path, tiny_seed: Path) -> None:
    standin = StandIn(max_per_second=20).start()
    try:
        run, _, _ = _run(tmp_path / "f", tiny_seed, standin, calls=200,
                         limits={"max_evals": 2})  # fmt: skip
    finally:
        standin.stop()
    assert standin.failed > 0  # the provider rate-limited the flood
    # Each flood is its flooder's failure, scored against it; a job that only met the
    # rate limit another job's flood left behind (its first call) may be re-queued.
    evaluations = run.evaluations()
    assert [e.resolved for e in evaluations] == [False, False]
    assert not any("met an outage" in (e.error or "") for e in evaluations)


def test_giving_up_on_a_pause_then_resuming_loses_nothing(
    tmp_path: Path, tiny_seed: Path, standin: StandIn
) -> None:
    import threading

    # greedy: a resumed run reseeds its strategy's random choices, greedy makes none, so
    # the resumed run must end exactly as the undisturbed one
    calm, _, _ = _run(tmp_path / "calm", tiny_seed, standin, strategy="greedy")
    standin.calls = 0
    standin.down_after_calls = (9, 3600.0)  # down for good, until the test says otherwise
    run_dir = tmp_path / "stopped"
    stopped: list[MetaLoop] = []

    def ctrl_c_once_paused() -> None:  # what the first Ctrl-C does
        while not stopped or not stopped[0].breakers.held():
            threading.Event().wait(0.05)
        stopped[0].request_stop()

    original = MetaLoop.__init__

    def keep(self: MetaLoop, *a: Any, **k: Any) -> None:
        original(self, *a, **k)
        stopped.append(self)

    MetaLoop.__init__ = keep  # type: ignore[method-assign]
    threading.Thread(target=ctrl_c_once_paused, daemon=True).start()
    try:
        run, _, summary = _run(run_dir, tiny_seed, standin, strategy="greedy")
    finally:
        MetaLoop.__init__ = original  # type: ignore[method-assign]
    assert summary.stop_reason == "interrupted"
    assert run.jobs(["queued"]), "the re-queued jobs wait in the store for the resume"

    standin.down_window = None  # back
    run = Run.open(run_dir)
    gateway = Gateway.from_config(run.config, run="t", log_dir=None, on_usage=run.record_usage)
    gateway.start().watch_outages()
    try:
        MetaLoop(run, jobs=FakeJobs(run, gateway=gateway, gives_up=True)).run()
    finally:
        gateway.stop()
    assert lineage(run) == lineage(calm)
    assert results(run) == results(calm)
