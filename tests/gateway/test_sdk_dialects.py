"""Both API dialects through the official SDKs, unmodified, against the gateway over TCP:
the `openai` client on Chat Completions and the `anthropic` client on the Messages API,
streaming and not, tool calls, usage (prompt caching included), and the budget refusal
surfacing as each SDK's own error with HTTP 402."""

from __future__ import annotations

import json

import anthropic
import openai
import pytest

from dgm.config import JobBudget
from dgm.gateway import CallContext, JobBinding, register_script
from dgm.gateway.exchange_log import read_exchanges

BASH = {"name": "bash", "description": "Run a shell command.",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}},
                         "required": ["command"]}}  # fmt: skip


def _shell_then_done(request: dict, ctx: CallContext) -> dict:
    """First asks for `ls`, then answers with what the tool said; reports cache use."""
    last = request["messages"][-1]
    usage = {"input_tokens": 1200, "output_tokens": 30, "cached_tokens": 1000,
             "cache_write_tokens": 150}  # fmt: skip
    if last["role"] == "tool":
        return {"content": f"done after {last['content']}", "usage": usage}
    return {"tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}], "usage": usage}


register_script("sdk-shell", _shell_then_done)


def _anthropic(gw, token: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=token, base_url=gw.url.removesuffix("/v1"), max_retries=0)


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_sdk_tool_round_trip_with_cache_usage(make_gateway, records, stream):
    gw = make_gateway("scripted/sdk-shell")
    ep = gw.bind_job(JobBinding("run-1", "job-a", node_id=3, task_id="t", role="solve"))
    client = _anthropic(gw, ep.token)
    messages: list = [{"role": "user", "content": "list the files"}]

    def ask():
        kwargs = dict(model="claude-x", max_tokens=512, system="be brief", tools=[BASH],
                      messages=messages)  # fmt: skip
        if not stream:
            return client.messages.create(**kwargs)
        with client.messages.stream(**kwargs) as events:
            return events.get_final_message()

    first = ask()
    assert first.stop_reason == "tool_use"
    use = next(b for b in first.content if b.type == "tool_use")
    assert (use.name, use.input) == ("bash", {"command": "ls"})
    assert (first.usage.input_tokens, first.usage.output_tokens) == (50, 30)
    assert first.usage.cache_read_input_tokens == 1000
    assert first.usage.cache_creation_input_tokens == 150
    messages += [
        {"role": "assistant", "content": [b.model_dump() for b in first.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                      "content": "a.py b.py"}]},
    ]  # fmt: skip
    second = ask()
    assert second.stop_reason == "end_turn"
    assert second.content[0].text == "done after a.py b.py"
    gw.flush()
    assert [(r.job_id, r.input_tokens, r.cached_tokens, r.cache_write_tokens) for r in records] == [
        ("job-a", 1200, 1000, 150)
    ] * 2
    logged = list(read_exchanges(ep.log_path))
    assert len(logged) == 2 and logged[1]["request"]["messages"][0]["content"] == "be brief"


@pytest.mark.parametrize("stream", [False, True])
def test_openai_sdk_tool_call_and_usage(make_gateway, stream):
    gw = make_gateway("scripted/sdk-shell")
    ep = gw.bind_job(JobBinding("run-1", "job-o"))
    client = openai.OpenAI(api_key=ep.token, base_url=gw.url, max_retries=0)
    tool = {"type": "function", "function": {"name": "bash", "parameters": BASH["input_schema"]}}
    messages = [{"role": "user", "content": "list the files"}]
    if not stream:
        answer = client.chat.completions.create(model="m", messages=messages, tools=[tool])
        call, usage = answer.choices[0].message.tool_calls[0], answer.usage
    else:
        chunks = list(
            client.chat.completions.create(model="m", messages=messages, tools=[tool],
                                           stream=True, stream_options={"include_usage": True})
        )  # fmt: skip
        call = next(c.choices[0].delta.tool_calls[0] for c in chunks if c.choices)
        usage = chunks[-1].usage
    assert call.function.name == "bash" and call.function.arguments == '{"command": "ls"}'
    assert usage.prompt_tokens == 1200 and usage.prompt_tokens_details.cached_tokens == 1000


def test_budget_refusal_is_each_sdks_own_402_error(make_gateway):
    gw = make_gateway("scripted/sdk-shell")
    ep = gw.bind_job(JobBinding("run-1", "job-b"), JobBudget(max_calls=1))
    client = _anthropic(gw, ep.token)
    say = [{"role": "user", "content": "x"}]
    client.messages.create(model="c", max_tokens=64, messages=say)
    with pytest.raises(anthropic.APIStatusError) as refused:
        client.messages.create(model="c", max_tokens=64, messages=say)
    assert refused.value.status_code == 402
    assert refused.value.body["error"]["type"] == "budget_exceeded"
    oai = openai.OpenAI(api_key=ep.token, base_url=gw.url, max_retries=0)
    with pytest.raises(openai.APIStatusError) as refused_oai:
        oai.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert refused_oai.value.status_code == 402
    assert refused_oai.value.body["type"] == "budget_exceeded"


def test_anthropic_bad_request_and_unknown_token_are_named(make_gateway):
    gw = make_gateway("scripted/echo")
    ep = gw.bind_job(JobBinding("run-1", "job-c"))
    with pytest.raises(anthropic.BadRequestError, match="max_tokens"):
        _anthropic(gw, ep.token).messages.create(
            model="c", max_tokens=0, messages=[{"role": "user", "content": "x"}]
        )
    with pytest.raises(anthropic.AuthenticationError, match="no job is bound"):
        _anthropic(gw, "not-a-token").messages.create(
            model="c", max_tokens=5, messages=[{"role": "user", "content": "x"}]
        )


FUNCTION = {"type": "function", "name": "bash", "description": "Run a shell command.",
            "parameters": BASH["input_schema"]}  # fmt: skip


@pytest.mark.parametrize("stream", [False, True])
def test_openai_responses_api_tool_round_trip(make_gateway, records, stream):
    """`client.responses.create` (and the streaming helper): a function call, its output
    sent back as items, the answer; each call counted and logged like any other."""
    gw = make_gateway("scripted/sdk-shell")
    ep = gw.bind_job(JobBinding("run-1", "job-r", node_id=1, task_id="t"))
    client = openai.OpenAI(api_key=ep.token, base_url=gw.url, max_retries=0)
    turns: list = [{"role": "user", "content": "list the files"}]

    def ask():
        kwargs = dict(model="gpt-x", instructions="be brief", input=turns, tools=[FUNCTION])
        if not stream:
            return client.responses.create(**kwargs)
        with client.responses.stream(**kwargs) as events:
            return events.get_final_response()

    first = ask()
    call = next(item for item in first.output if item.type == "function_call")
    assert (call.name, json.loads(call.arguments)) == ("bash", {"command": "ls"})
    assert (first.usage.input_tokens, first.usage.output_tokens) == (1200, 30)
    assert first.usage.input_tokens_details.cached_tokens == 1000
    turns += [
        *first.output,
        {"type": "function_call_output", "call_id": call.call_id, "output": "a.py b.py"},
    ]
    second = ask()
    assert second.status == "completed" and second.output_text == "done after a.py b.py"
    gw.flush()
    assert [r.job_id for r in records] == ["job-r", "job-r"]
    logged = list(read_exchanges(ep.log_path))
    sent = logged[1]["request"]["messages"]
    assert sent[0] == {"role": "system", "content": "be brief"}
    assert sent[2]["tool_calls"][0]["id"] == call.call_id and sent[3]["role"] == "tool"


def test_responses_api_refuses_what_it_cannot_serve_with_the_reason(make_gateway):
    gw = make_gateway("scripted/sdk-shell")
    ep = gw.bind_job(JobBinding("run-1", "job-r2"))
    client = openai.OpenAI(api_key=ep.token, base_url=gw.url, max_retries=0)
    with pytest.raises(openai.BadRequestError, match="previous_response_id is not served"):
        client.responses.create(model="x", input="hi", previous_response_id="resp_1")
    with pytest.raises(openai.BadRequestError, match="'web_search' tool"):
        client.responses.create(model="x", input="hi", tools=[{"type": "web_search"}])


def test_count_tokens_and_models_are_served_logged_and_not_billed(make_gateway, records):
    """A scripted backend cannot count: the gateway's estimate, said to be one; the count
    is in the job's log, costs nothing and is no call. `models.list` in both SDKs' shapes."""
    gw = make_gateway("scripted/sdk-shell")
    ep = gw.bind_job(JobBinding("run-1", "job-c", node_id=2, task_id="t"),
                     JobBudget(max_calls=1))  # fmt: skip
    claude = _anthropic(gw, ep.token)
    counted = claude.messages.count_tokens(
        model="x", system="be brief", tools=[BASH],
        messages=[{"role": "user", "content": "list the files " * 50}],
    )  # fmt: skip
    shorter = claude.messages.count_tokens(model="x", messages=[{"role": "user", "content": "hi"}])
    assert counted.input_tokens > shorter.input_tokens > 0
    assert claude.models.list().data[0].id == "scripted/sdk-shell"
    oai = openai.OpenAI(api_key=ep.token, base_url=gw.url, max_retries=0)
    assert [m.id for m in oai.models.list()] == ["scripted/sdk-shell"]
    claude.messages.create(model="x", max_tokens=64, messages=[{"role": "user", "content": "a"}])
    gw.flush()
    assert len(records) == 1  # the one completion; counts are not calls (max_calls=1 held)
    logged = list(read_exchanges(ep.log_path))
    counts = [line for line in logged if "count_tokens" in line["request"]]
    assert len(counts) == 2 and all(c["cost_usd"] == 0 and c["usage"] is None for c in counts)
    assert counts[0]["response"] == {"input_tokens": counted.input_tokens, "dgm_estimate": True}
