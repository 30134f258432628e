"""The anthropic and openai backends, through the official SDKs, against a local fake of
each provider's HTTP API: translation, multi-turn tool use, errors, retries, timeouts,
and the resulting accounting."""

from __future__ import annotations

import json
import time

import openai
import pytest

from dgm.config import Price
from dgm.gateway import JobBinding, RetryPolicy
from dgm.gateway.exchange_log import read_exchanges

from .fake_upstream import error, hang, reply
from .helpers import BASH_TOOL, openai_client

PROVIDERS = {
    "anthropic": ("anthropic/claude-sonnet-4-5", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"),
    "openai": ("openai/gpt-5-mini", "OPENAI_BASE_URL", "OPENAI_API_KEY"),
}


@pytest.fixture(params=sorted(PROVIDERS))
def provider(request, upstream, monkeypatch):
    """Point the provider's SDK at the fake upstream; returns (name, model string)."""
    model, url_variable, key_variable = PROVIDERS[request.param]
    base = upstream.url if request.param == "anthropic" else upstream.url + "/v1"
    monkeypatch.setenv(url_variable, base)
    monkeypatch.setenv(key_variable, "test-key")
    return request.param, model


def connect(gw, job_id="job-1"):
    endpoint = gw.bind_job(JobBinding("run-1", job_id, node_id=7, task_id="t", role="solve"))
    return openai_client(gw.url, endpoint.token)


def test_multi_turn_tool_use_and_accounting(provider, upstream, make_gateway, records):
    name, model = provider
    prices = {model: Price(input=2.0, output=10.0, cached_input=0.5)}
    gw = make_gateway(model, prices=prices)
    client = connect(gw)
    upstream.push(
        reply(tool=("bash", {"command": "ls"}), usage=(1000, 50, 400)),
        reply("two files", usage=(1200, 10, 0)),
    )
    messages = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "what is here?"},
    ]
    first = client.chat.completions.create(
        model="x", messages=messages, tools=[BASH_TOOL], max_tokens=300
    )
    call = first.choices[0].message.tool_calls[0]
    assert first.choices[0].finish_reason == "tool_calls"
    assert (call.function.name, json.loads(call.function.arguments)) == ("bash", {"command": "ls"})
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "a.py b.py"},
    ]
    second = client.chat.completions.create(model="x", messages=messages, tools=[BASH_TOOL])
    assert second.choices[0].message.content == "two files"
    assert second.choices[0].finish_reason == "stop"
    assert first.usage.prompt_tokens == 1000 and first.usage.completion_tokens == 50
    assert first.usage.prompt_tokens_details.cached_tokens == 400

    sent = upstream.requests[1]["body"]
    if name == "anthropic":
        assert upstream.requests[0]["body"]["system"] == [
            {"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}
        ]
        assert upstream.requests[0]["body"]["max_tokens"] == 300
        assert upstream.requests[0]["body"]["tools"][0]["input_schema"]["type"] == "object"
        assert sent["messages"][1]["content"][0] == {
            "type": "tool_use",
            "id": call.id,
            "name": "bash",
            "input": {"command": "ls"},
        }
        assert sent["messages"][2] == {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": call.id,
                    "content": "a.py b.py",
                    "cache_control": {"type": "ephemeral"},
                }
            ],
        }
    else:
        assert sent["model"] == "gpt-5-mini"
        assert sent["messages"][-1] == {
            "role": "tool",
            "tool_call_id": call.id,
            "content": "a.py b.py",
        }
        assert sent["max_completion_tokens"] == 8192  # bounded even when the agent did not

    gw.stop()
    # 600 uncached at $2 + 400 cached at $0.5 + 50 out at $10; then 1200 in + 10 out.
    expected = [(600 * 2 + 400 * 0.5 + 50 * 10) / 1e6, (1200 * 2 + 10 * 10) / 1e6]
    assert [r.cost_usd for r in records] == pytest.approx(expected)
    assert [(r.job_id, r.node_id, r.model, r.error) for r in records] == [
        ("job-1", 7, model, None)
    ] * 2
    assert gw.totals().run.cost_usd == pytest.approx(sum(expected))


def test_non_retryable_errors_pass_through_at_once(provider, upstream, make_gateway, records):
    _, model = provider
    gw = make_gateway(model)
    client = connect(gw)
    upstream.push(error(400, "prompt is too long: 250000 tokens > 200000 maximum"))
    with pytest.raises(openai.BadRequestError, match="prompt is too long"):
        client.chat.completions.create(model="x", messages=[{"role": "user", "content": "hi"}])
    upstream.push(error(401, "invalid x-api-key"))
    with pytest.raises(openai.AuthenticationError, match="invalid x-api-key"):
        client.chat.completions.create(model="x", messages=[{"role": "user", "content": "hi"}])
    assert len(upstream.requests) == 2  # neither was retried
    gw.stop()
    assert [r.error.split(":")[0] for r in records] == ["400 upstream_error", "401 upstream_error"]
    assert all(r.cost_usd == 0 for r in records)


def test_429_waits_for_retry_after_then_succeeds(provider, upstream, make_gateway, records):
    _, model = provider
    gw = make_gateway(model)
    client = connect(gw)
    upstream.push(error(429, "slow down", headers={"retry-after": "1"}), reply("ok"))
    started = time.monotonic()
    answer = client.chat.completions.create(model="x", messages=[{"role": "user", "content": "a"}])
    assert answer.choices[0].message.content == "ok"
    assert time.monotonic() - started >= 1.0  # backoff alone would be ~0.01 s
    assert len(upstream.requests) == 2
    gw.stop()
    assert len(records) == 1 and records[0].error is None and records[0].input_tokens == 100


def test_500_then_success_is_one_call(provider, upstream, make_gateway, records):
    _, model = provider
    gw = make_gateway(model)
    client = connect(gw)
    upstream.push(error(500, "internal"), error(503, "overloaded"), reply("ok"))
    answer = client.chat.completions.create(model="x", messages=[{"role": "user", "content": "a"}])
    assert answer.choices[0].message.content == "ok"
    gw.stop()
    assert len(upstream.requests) == 3 and len(records) == 1
    log = list(read_exchanges(gw.log_dir / "job-1" / "llm-solve.jsonl"))
    assert log[0]["attempts"] == 3


def test_persistent_5xx_becomes_502_after_the_retries(provider, upstream, make_gateway, records):
    _, model = provider
    gw = make_gateway(model)  # FAST_RETRY: 3 retries
    client = connect(gw)
    upstream.push(*[error(500, "down")] * 4, reply("never"))
    with pytest.raises(openai.APIStatusError, match="after 4 attempts") as caught:
        client.chat.completions.create(model="x", messages=[{"role": "user", "content": "a"}])
    assert caught.value.status_code == 502
    assert len(upstream.requests) == 4


def test_hung_upstream_is_cut_at_the_timeout(provider, upstream, make_gateway, records):
    _, model = provider
    # 2 s, not less: the second attempt (a new connection to the fake upstream) must fit in
    # it on a loaded 2-core CI machine; 0.5 s failed there once.
    policy = RetryPolicy(max_retries=1, base_s=0.01, timeout_s=2.0)
    gw = make_gateway(model, retry=policy)
    client = connect(gw)
    upstream.push(hang(30), reply("second try"))
    started = time.monotonic()
    answer = client.chat.completions.create(model="x", messages=[{"role": "user", "content": "a"}])
    assert answer.choices[0].message.content == "second try"
    assert 2.0 <= time.monotonic() - started < 15  # the hang lasts 30 s

    upstream.push(hang(30), hang(30))
    with pytest.raises(openai.APIStatusError) as caught:
        client.chat.completions.create(model="x", messages=[{"role": "user", "content": "b"}])
    assert caught.value.status_code == 504
    assert caught.value.body["type"] == "upstream_timeout"


def test_count_tokens_passes_through_to_anthropic(upstream, make_gateway, monkeypatch, records):
    """With an Anthropic backend the provider counts: the request goes to its count_tokens
    with the run's model, and its number comes back as is (no estimate, nothing billed)."""
    import anthropic

    model, url_variable, key_variable = PROVIDERS["anthropic"]
    monkeypatch.setenv(url_variable, upstream.url)
    monkeypatch.setenv(key_variable, "test-key")
    gw = make_gateway(model)
    ep = gw.bind_job(JobBinding("run-1", "job-1"))
    client = anthropic.Anthropic(api_key=ep.token, base_url=gw.url.removesuffix("/v1"),
                                 max_retries=0)  # fmt: skip
    hello = [{"role": "user", "content": "hi"}]
    counted = client.messages.count_tokens(model="any", system="be brief", messages=hello)
    assert counted.input_tokens == 4242
    (seen,) = upstream.requests
    assert seen["api"] == "anthropic_count" and seen["body"]["model"] == "claude-sonnet-4-5"
    assert seen["body"]["messages"][0]["content"][0]["text"] == "hi"
    assert "max_tokens" not in seen["body"]
    gw.flush()
    assert records == []
