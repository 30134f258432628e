"""The official openai client against the gateway (scripted backend), over a unix socket
and over TCP: tool calls round-trip, usage is recorded and attributed to the right job."""

from __future__ import annotations

import json
import threading

import openai
import pytest

from dgm.gateway import JobBinding, register_script
from dgm.gateway.exchange_log import read_exchanges

from .helpers import BASH_TOOL, openai_client, run_agent


def test_tool_calls_round_trip_over_socket_and_tcp(make_gateway, records, short_dir):
    gw = make_gateway("scripted/shell-agent")
    on_socket = gw.bind_job(
        JobBinding("run-1", "job-a", node_id=1, task_id="t1", role="solve"),
        socket_path=short_dir / "a.sock",
    )
    on_tcp = gw.bind_job(JobBinding("run-1", "job-b", node_id=2, task_id="t2", role="self_improve"))
    assert on_socket.env["DGM_LLM_URL"] == "unix:///run/dgm/llm.sock"
    assert on_tcp.env["DGM_LLM_URL"] == gw.url
    assert on_tcp.env["DGM_LLM_MODEL"] == "scripted/shell-agent"

    answers = {}

    def agent(name, client, filename):
        answers[name] = run_agent(client, filename)

    threads = [
        threading.Thread(
            target=agent, args=("a", openai_client(str(on_socket.socket_path), ""), "a.txt")
        ),
        threading.Thread(target=agent, args=("b", openai_client(gw.url, on_tcp.token), "b.txt")),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == {
        "a": "solve saw: contents of a.txt",
        "b": "self_improve saw: contents of b.txt",
    }

    gw.stop()  # drains the usage sink
    by_job = {}
    for record in records:
        by_job.setdefault(record.job_id, []).append(record)
    assert {
        j: [(r.node_id, r.task_id, r.role, r.input_tokens) for r in rs] for j, rs in by_job.items()
    } == {
        "job-a": [(1, "t1", "solve", 40), (1, "t1", "solve", 50)],
        "job-b": [(2, "t2", "self_improve", 40), (2, "t2", "self_improve", 50)],
    }
    totals = gw.totals()
    assert totals.run.calls == 4 and totals.by_node[1].output_tokens == 19
    assert totals.by_role["self_improve"].cached_tokens == 10

    log = list(read_exchanges(on_socket.log_path))
    assert [line["call"] for line in log] == [0, 1]
    assert log[1]["request"]["messages"][-1]["content"] == "contents of a.txt"
    assert log[1]["response"]["choices"][0]["message"]["content"] == "solve saw: contents of a.txt"
    assert log[0]["usage"] == {"input_tokens": 40, "output_tokens": 12, "cached_tokens": 0}


def test_socket_is_bound_to_its_job_whatever_token_is_sent(make_gateway, records, short_dir):
    gw = make_gateway("scripted/echo")
    ep_a = gw.bind_job(JobBinding("run-1", "job-a", role="solve"), socket_path=short_dir / "a.sock")
    ep_b = gw.bind_job(JobBinding("run-1", "job-b", role="solve"))
    client = openai_client(str(ep_a.socket_path), ep_b.token)  # claims to be job-b
    client.chat.completions.create(model="x", messages=[{"role": "user", "content": "hi"}])
    gw.stop()
    assert [r.job_id for r in records] == ["job-a"]


def test_tcp_needs_a_live_token(make_gateway):
    gw = make_gateway("scripted/echo")
    endpoint = gw.bind_job(JobBinding("run-1", "job-a"))
    with pytest.raises(openai.AuthenticationError):
        openai_client(gw.url, "wrong").chat.completions.create(
            model="x", messages=[{"role": "user", "content": "hi"}]
        )
    client = openai_client(gw.url, endpoint.token)
    assert client.models.list().data[0].id == "scripted/echo"
    gw.unbind(endpoint)
    with pytest.raises(openai.AuthenticationError, match="no job is bound"):
        client.chat.completions.create(model="x", messages=[{"role": "user", "content": "hi"}])


def test_streaming_client_gets_the_same_answer(make_gateway):
    gw = make_gateway("scripted/shell-agent")
    endpoint = gw.bind_job(JobBinding("run-1", "job-a"))
    stream = openai_client(gw.url, endpoint.token).chat.completions.create(
        model="x",
        messages=[{"role": "user", "content": "show the file z.txt"}],
        tools=[BASH_TOOL],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    calls = [
        c for chunk in chunks for choice in chunk.choices for c in choice.delta.tool_calls or []
    ]
    assert json.loads(calls[0].function.arguments) == {"command": "cat z.txt"}
    assert chunks[-1].usage.completion_tokens == 12


def test_malformed_requests_are_400s_and_others_keep_being_served(make_gateway, records):
    import http.client

    gw = make_gateway("scripted/echo")
    endpoint = gw.bind_job(JobBinding("run-1", "job-a"))
    headers = {"Authorization": f"Bearer {endpoint.token}", "Content-Type": "application/json"}
    bad_bodies = {
        b"{not json": "not valid JSON",
        b"[1, 2]": "JSON object",
        b'{"messages": []}': "`messages`",
        b'{"messages": [{"role": "wizard", "content": "x"}]}': "`messages.0.role`",
        b'{"messages": [{"role": "tool", "content": "x"}]}': "tool_call_id",
        b'{"messages": [{"role": "user", "content": "x"}], "n": 3}': "`n`",
    }
    for body, expected in bad_bodies.items():
        conn = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=5)
        conn.request("POST", "/v1/chat/completions", body=body, headers=headers)
        response = conn.getresponse()
        error = json.loads(response.read())["error"]
        assert response.status == 400, body
        assert error["type"] == "invalid_request_error" and expected in error["message"], error
    answer = openai_client(gw.url, endpoint.token).chat.completions.create(
        model="x", messages=[{"role": "user", "content": "still there?"}]
    )
    assert answer.choices[0].message.content == "echo: still there?"
    gw.stop()
    assert len(records) == 1  # malformed requests reserve and record nothing


def test_a_crashing_script_fails_only_its_call(make_gateway):
    def flaky(request, ctx):
        if "boom" in request["messages"][-1]["content"]:
            raise RuntimeError("script bug")
        return "ok"

    register_script("flaky", flaky)
    gw = make_gateway("scripted/flaky")
    client = openai_client(gw.url, gw.bind_job(JobBinding("run-1", "j")).token)
    with pytest.raises(openai.InternalServerError, match="script bug"):
        client.chat.completions.create(model="x", messages=[{"role": "user", "content": "boom"}])
    ok = client.chat.completions.create(model="x", messages=[{"role": "user", "content": "hi"}])
    assert ok.choices[0].message.content == "ok"


def test_in_process_complete_is_accounted_like_an_agent_call(make_gateway, records):
    gw = make_gateway("scripted/echo", diagnose_model="scripted/shell-agent")
    answer = gw.complete(
        JobBinding("run-1", "expand-1", node_id=4, role="diagnose"),
        {"messages": [{"role": "user", "content": "diagnose f.txt"}]},
    )
    assert answer["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "bash"
    assert answer["model"] == "scripted/shell-agent"
    gw.stop()
    assert [(r.job_id, r.role, r.model) for r in records] == [
        ("expand-1", "diagnose", "scripted/shell-agent")
    ]
