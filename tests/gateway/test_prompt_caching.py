"""Prompt caching through the gateway, invisible to the agent: breakpoints on the stable
prefix for Anthropic (against a fake that caches the way the API does), cache reads and
writes booked at their own prices, and a budget reservation that stays worst-case safe."""

from __future__ import annotations

import json

import openai
import pytest

from dgm.config import JobBudget, Price
from dgm.gateway import JobBinding
from dgm.gateway.backends.prompt_cache import count_breakpoints, place_breakpoints
from dgm.gateway.protocol import estimate_input_tokens

from .fake_prompt_cache import PromptCacheModel
from .fake_upstream import reply
from .helpers import BASH_TOOL, openai_client

SONNET = "anthropic/claude-sonnet-4-5"
# A system prompt past Sonnet's 1024-token caching minimum, as a real agent's is.
SYSTEM = "You are a careful coding agent. Explore, reproduce, edit, verify, finish. " * 80


@pytest.fixture
def anthropic_upstream(upstream, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", upstream.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    return upstream


def agent_conversation(client: openai.OpenAI, steps: int) -> list:
    """An agent's loop: every step resends the whole conversation plus one tool result."""
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Fix the failing test in parser.py."},
    ]
    answers = []
    for step in range(steps):
        answer = client.chat.completions.create(model="x", messages=messages, tools=[BASH_TOOL])
        answers.append(answer)
        call = answer.choices[0].message.tool_calls[0]
        messages += [
            answer.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": f"output {step}\n" * 40},
        ]
    return answers


def run_agent(gw, upstream, cache: PromptCacheModel, steps: int = 4) -> list:
    endpoint = gw.bind_job(JobBinding("run-1", "job-1", node_id=3, task_id="t", role="solve"))
    upstream.push(
        *[
            reply(tool=("bash", {"command": f"ls {i}"}), usage=(0, 25, 0), cache=cache)
            for i in range(steps)
        ]
    )
    answers = agent_conversation(openai_client(gw.url, endpoint.token), steps)
    gw.unbind(endpoint)
    return answers


def test_second_call_on_reads_the_cache_and_dollars_match_by_hand(
    anthropic_upstream, make_gateway, records
):
    cache = PromptCacheModel()
    gw = make_gateway(SONNET)  # the shipped list prices: $3 in, $3.75 write, $0.30 read, $15 out
    answers = run_agent(gw, anthropic_upstream, cache)

    # Breakpoints: system, the task, the previous turn (read), the latest turn (written).
    assert [r["breakpoints"] for r in anthropic_upstream.requests] == [
        ["system[0]", "messages[0]"],
        ["system[0]", "messages[0]", "messages[2]"],
        ["system[0]", "messages[0]", "messages[2]", "messages[4]"],
        ["system[0]", "messages[0]", "messages[4]", "messages[6]"],
    ]
    # The agent sees OpenAI usage: prompt_tokens counts everything, cached_tokens the reads.
    prompt = [a.usage.prompt_tokens for a in answers]
    cached = [a.usage.prompt_tokens_details.cached_tokens for a in answers]
    assert cached[0] == 0
    assert cached[1:] == prompt[:-1]  # each call reads all that the previous one sent
    assert all(p > 1024 for p in prompt) and prompt == sorted(prompt)

    # By hand: call 1 writes its whole prompt; call k reads call k-1's prompt and writes
    # the new turn. Nothing is left uncached: the last block carries a breakpoint.
    expected = [(prompt[0] * 3.75 + 25 * 15) / 1e6] + [
        (prompt[k - 1] * 0.30 + (prompt[k] - prompt[k - 1]) * 3.75 + 25 * 15) / 1e6
        for k in range(1, len(prompt))
    ]
    assert [r.cost_usd for r in records] == pytest.approx(expected, rel=1e-9)
    assert [(a.cache_read_input_tokens, a.input_tokens) for a in cache.answers] == [
        (c, 0) for c in cached
    ]
    assert [r.cache_write_tokens for r in records] == [
        a.cache_creation_input_tokens for a in cache.answers
    ]
    totals = gw.totals()
    assert totals.run.cost_usd == pytest.approx(sum(expected))
    assert totals.by_job["job-1"].cached_tokens == sum(cached)
    # Without caching the same prompts would cost $3/Mtok throughout.
    uncached = (sum(prompt) * 3.0 + 4 * 25 * 15) / 1e6
    assert totals.run.cost_usd < uncached


def test_caching_off_sends_no_breakpoints_and_pays_plain_input(
    anthropic_upstream, make_gateway, records
):
    cache = PromptCacheModel()
    gw = make_gateway(SONNET, prompt_caching=False)
    answers = run_agent(gw, anthropic_upstream, cache, steps=3)
    assert all(r["breakpoints"] == [] for r in anthropic_upstream.requests)
    assert anthropic_upstream.requests[0]["body"]["system"] == SYSTEM
    assert all(a.usage.prompt_tokens_details.cached_tokens == 0 for a in answers)
    expected = [(a.usage.prompt_tokens * 3.0 + 25 * 15) / 1e6 for a in answers]
    assert [r.cost_usd for r in records] == pytest.approx(expected, rel=1e-9)


def test_openai_cached_tokens_booked_at_the_cached_price(
    upstream, make_gateway, records, monkeypatch
):
    monkeypatch.setenv("OPENAI_BASE_URL", upstream.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    gw = make_gateway("openai/gpt-5-mini")  # $0.25 in, $0.025 cached, $2 out
    endpoint = gw.bind_job(JobBinding("run-1", "job-9", role="solve"))
    client = openai_client(gw.url, endpoint.token)
    upstream.push(reply("a", usage=(3000, 10, 0)), reply("b", usage=(3200, 10, 2944)))
    for _ in range(2):
        client.chat.completions.create(model="x", messages=[{"role": "user", "content": "hi"}])
    gw.unbind(endpoint)
    keys = {r["body"]["prompt_cache_key"] for r in upstream.requests}
    assert len(keys) == 1 and "job-9" not in keys.pop()  # one opaque key per job
    assert [r.cost_usd for r in records] == pytest.approx(
        [(3000 * 0.25 + 10 * 2) / 1e6, (256 * 0.25 + 2944 * 0.025 + 10 * 2) / 1e6]
    )
    assert [r.cache_write_tokens for r in records] == [0, 0]


def test_reservation_assumes_every_input_token_is_a_cache_write(make_gateway, records):
    # A model whose cache writes cost 4x its input: a budget that covers the input at the
    # plain price but not as cache writes must refuse before anything is spent.
    prices = {"scripted/": Price(input=1.0, output=0.0, cache_read=0.1, cache_write=4.0)}
    request = {"messages": [{"role": "user", "content": "x" * 3000}], "max_tokens": 1}
    estimate = estimate_input_tokens(request)
    budget = JobBudget(max_usd=estimate * 2.0 / 1e6)  # plain input fits, writes do not
    gw = make_gateway("scripted/echo", prices=prices)
    endpoint = gw.bind_job(JobBinding("run-1", "job-b"), budget=budget)
    with pytest.raises(openai.APIStatusError) as refused:
        openai_client(gw.url, endpoint.token).chat.completions.create(model="x", **request)
    assert refused.value.status_code == 402
    assert records == []


def test_breakpoints_never_pass_four_and_leave_the_request_untouched():
    params = {
        "system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}],
        "tools": [{"name": "bash", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"}
            for i in range(9)
        ],
    }
    params["messages"][3] = {
        "role": "assistant",
        "content": [{"type": "text", "text": "t", "cache_control": {"type": "ephemeral"}}],
    }
    before = json.dumps(params, sort_keys=True)
    marked = place_breakpoints(params)
    assert json.dumps(params, sort_keys=True) == before
    assert count_breakpoints(marked) == 4
    # The two free marks go to the latest turn and the turn before it.
    assert "cache_control" in marked["messages"][8]["content"][-1]
    assert "cache_control" in marked["messages"][6]["content"][-1]
    assert isinstance(marked["messages"][0]["content"], str)  # the task is not marked


def test_the_configured_context_window_reaches_the_agent_environment(make_gateway):
    from dgm.config import RunConfig
    from dgm.gateway import Gateway

    config = RunConfig.from_dict(
        {"llm": {"model": "scripted/echo", "context_window_tokens": 32000}}
    )
    gw = Gateway.from_config(config, run="r", log_dir=None, on_usage=None).start()
    try:
        env = gw.bind_job(JobBinding("r", "job-c")).env
    finally:
        gw.stop()
    assert env["DGM_LLM_CONTEXT_TOKENS"] == "32000"
    assert (
        "DGM_LLM_CONTEXT_TOKENS"
        not in make_gateway("scripted/echo").bind_job(JobBinding("r", "job-d")).env
    )
