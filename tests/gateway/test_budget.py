"""Budgets: the run's dollar cap holds against parallel jobs, job limits refuse with 402,
and a refused call leaves no accounting behind."""

from __future__ import annotations

import asyncio
import json
import random
import threading

import openai
import pytest

from dgm.config import JobBudget, Price
from dgm.errors import BudgetExceeded
from dgm.gateway import JobBinding, UsageRecord, register_script
from dgm.gateway.budget import Ledger
from dgm.gateway.exchange_log import read_exchanges

from .helpers import openai_client

# Each call bills 1000 tokens in at $1/M and 500 out at $10/M: $0.006.
PRICES = {"scripted/": Price(input=1.0, output=10.0)}
CALL_COST = 0.006


async def slow_worker(request, ctx):
    await asyncio.sleep(random.uniform(0.01, 0.05))  # many calls in flight at once
    return {"content": "ok", "usage": {"input_tokens": 1000, "output_tokens": 500}}


register_script("worker", slow_worker)
ASK = {"messages": [{"role": "user", "content": "work"}], "max_tokens": 1000}


def ask(client: openai.OpenAI) -> None:
    client.chat.completions.create(model="x", **ASK)


def test_parallel_jobs_never_push_the_run_past_its_cap(make_gateway, records):
    cap = 0.1
    gw = make_gateway("scripted/worker", prices=PRICES, run_budget_usd=cap)
    refusals: list[dict] = []

    def job(i: int) -> None:
        endpoint = gw.bind_job(JobBinding("run-1", f"job-{i}", node_id=i))
        client = openai_client(gw.url, endpoint.token)
        while True:
            try:
                ask(client)
            except openai.APIStatusError as exc:
                assert exc.status_code == 402
                refusals.append(exc.body)
                return

    threads = [threading.Thread(target=job, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    gw.stop()

    spent = sum(r.cost_usd for r in records)
    # The worst case of one call: 1000 output tokens at $10/M plus a high input estimate.
    max_call = 1000 * 10 / 1e6 + 100 * 1 / 1e6
    assert spent <= cap + max_call  # the promise ...
    assert spent <= cap  # ... and in fact reservations keep it under the cap itself
    assert spent > cap - max_call  # calls were only refused when they could overshoot
    assert spent == pytest.approx(gw.totals().run.cost_usd)
    assert len(records) == round(spent / CALL_COST)
    assert len(refusals) == 8
    assert all(body["type"] == "budget_exceeded" for body in refusals)
    assert "limits.budget_usd" not in refusals[0]["message"]  # the hint is for the user...
    assert "could cost up to" in refusals[0]["message"]  # ... the message explains


def test_refused_call_leaves_no_partial_accounting(make_gateway, records):
    gw = make_gateway("scripted/worker", prices=PRICES)
    endpoint = gw.bind_job(JobBinding("run-1", "job-1"), JobBudget(max_calls=2))
    client = openai_client(gw.url, endpoint.token)
    ask(client)
    ask(client)
    before = gw.totals()
    with pytest.raises(openai.APIStatusError) as caught:
        ask(client)
    assert caught.value.status_code == 402
    assert caught.value.body == {
        "message": "budget exceeded: job job-1 has made its 2 allowed calls",
        "type": "budget_exceeded",
        "code": "budget_exceeded",
    }
    after = gw.totals()
    assert after.run == before.run and after.by_job == before.by_job
    assert after.refused == 1
    gw.stop()
    assert len(records) == 2
    log = list(read_exchanges(endpoint.log_path))
    assert [line["error"] and line["error"]["type"] for line in log] == [
        None,
        None,
        "budget_exceeded",
    ]
    assert log[-1]["usage"] is None and log[-1]["cost_usd"] == 0


def test_job_token_and_dollar_limits(make_gateway, records):
    gw = make_gateway("scripted/worker", prices=PRICES)
    by_tokens = openai_client(
        gw.url, gw.bind_job(JobBinding("run-1", "a"), JobBudget(max_tokens=2000)).token
    )
    ask(by_tokens)  # 1500 tokens used; the next request could not fit in 500
    with pytest.raises(openai.APIStatusError, match="of its 2000 tokens"):
        ask(by_tokens)
    by_dollars = openai_client(
        gw.url, gw.bind_job(JobBinding("run-1", "b"), JobBudget(max_usd=0.02)).token
    )
    ask(by_dollars)  # $0.006 spent; a call may cost up to ~$0.0101: one more fits
    ask(by_dollars)
    with pytest.raises(openai.APIStatusError, match=r"spent \$0.0120 of its \$0.02"):
        ask(by_dollars)
    gw.stop()
    assert [r.job_id for r in records] == ["a", "b", "b"]


def test_resumed_run_counts_what_it_spent_before(make_gateway, records):
    gw = make_gateway("scripted/worker", prices=PRICES, run_budget_usd=1.0, spent_usd=0.995)
    with pytest.raises(BudgetExceeded, match=r"spent \$0.9950 of its \$1"):
        gw.complete(JobBinding("run-1", "diag", role="diagnose"), ASK)
    assert gw.totals().spent_usd == pytest.approx(0.995)
    assert records == []


def test_a_budget_raised_while_running_admits_calls_again(make_gateway, records):
    gw = make_gateway("scripted/worker", prices=PRICES, run_budget_usd=1.0, spent_usd=0.995)
    with pytest.raises(BudgetExceeded):
        gw.complete(JobBinding("run-1", "diag", role="diagnose"), ASK)
    assert gw.run_budget_exhausted()
    gw.set_run_budget(5.0)  # `dgm steer RUN budget 5`, applied by the loop
    assert not gw.run_budget_exhausted()
    gw.complete(JobBinding("run-1", "diag", role="diagnose"), ASK)
    gw.stop()
    assert len(records) == 1


def test_calls_held_back_by_reservations_wait_instead_of_failing():
    async def scenario() -> list[str]:
        ledger = Ledger(run_cap_usd=1.0)
        ledger.open_job("a", JobBudget())
        events = []
        first = await ledger.reserve("a", 0.6, 10)  # worst case 0.6, in flight

        async def second() -> None:
            reservation = await ledger.reserve("a", 0.6, 10)  # 0.6 + 0.6 > 1.0: must wait
            events.append("second admitted")
            ledger.settle(reservation, None)

        waiter = asyncio.create_task(second())
        await asyncio.sleep(0.05)
        events.append("first settles")
        ledger.settle(first, _record(cost=0.1))
        await asyncio.wait_for(waiter, 1)
        return events

    assert asyncio.run(scenario()) == ["first settles", "second admitted"]


def _record(cost: float) -> UsageRecord:
    return UsageRecord("r", "a", None, None, "solve", "m", 1, 1, 0, cost, 0.1, None, 0.0)


def test_usage_records_are_json_friendly_for_the_store(make_gateway, records):
    gw = make_gateway("scripted/worker", prices=PRICES)
    gw.complete(JobBinding("run-1", "j", node_id=3, task_id="t"), ASK)
    gw.stop()
    row = json.loads(json.dumps(records[0].as_dict()))
    assert row["cost_usd"] == pytest.approx(CALL_COST) and row["node_id"] == 3
