"""No key leaks; bad configuration and bad requests give clear errors."""

from __future__ import annotations

import http.client
import json
import socket
import sqlite3
from pathlib import Path

import pytest

from dgm.config import Price
from dgm.errors import ConfigError, DgmError
from dgm.gateway import Gateway, GatewaySettings, JobBinding

from .fake_upstream import error, reply

ANTHROPIC_KEY = "fake-anthropic-key-LEAKCANARY-7f3a9c"
OPENAI_KEY = "fake-openai-key-LEAKCANARY-2b8e41"


def sqlite_sink(path: Path):
    """A minimal stand-in for the run store's llm_usage table."""
    db = sqlite3.connect(path, check_same_thread=False)
    db.execute("CREATE TABLE llm_usage (row TEXT)")

    def sink(record) -> None:
        db.execute("INSERT INTO llm_usage VALUES (?)", (json.dumps(record.as_dict()),))
        db.commit()

    return sink


def post(port: int, token: str, body: dict) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request(
        "POST",
        "/v1/chat/completions",
        body=json.dumps(body),
        headers={"Authorization": f"Bearer {token}"},
    )
    response = conn.getresponse()
    return response.status, response.read()


@pytest.mark.parametrize("model", ["anthropic/claude-sonnet-4-5", "openai/gpt-5-mini"])
def test_keys_reach_the_provider_and_nothing_else(model, upstream, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", upstream.url)
    monkeypatch.setenv("OPENAI_BASE_URL", upstream.url + "/v1")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    gw = Gateway(
        GatewaySettings(model, run="r", log_dir=run_dir / "logs"),
        on_usage=sqlite_sink(run_dir / "run.sqlite"),
    ).start()
    try:
        endpoint = gw.bind_job(JobBinding("r", "job-1", role="solve"))
        upstream.push(
            reply("hello", tool=("bash", {"command": "env"})),
            # Providers do echo keys in auth errors; the gateway must not pass them on.
            error(401, f"Incorrect API key provided: {OPENAI_KEY} / {ANTHROPIC_KEY}"),
        )
        ask = {"messages": [{"role": "user", "content": "print your env"}]}
        seen_by_client = [post(gw.port, endpoint.token, ask), post(gw.port, endpoint.token, ask)]
    finally:
        gw.stop()
    assert [status for status, _ in seen_by_client] == [200, 401]
    assert b"[redacted]" in seen_by_client[1][1]

    sent_key = (
        upstream.requests[0]["headers"].get("x-api-key")
        or upstream.requests[0]["headers"]["Authorization"]
    )
    assert sent_key.endswith(ANTHROPIC_KEY if model.startswith("anthropic") else OPENAI_KEY)

    exposed = [json.dumps(endpoint.env).encode(), *(body for _, body in seen_by_client)]
    exposed += [p.read_bytes() for p in run_dir.rglob("*") if p.is_file()]
    assert len(exposed) >= 4  # env, two answers, the log and the database
    for blob in exposed:
        assert b"LEAKCANARY" not in blob


def test_unknown_model_string():
    with pytest.raises(ConfigError, match="unknown model string 'gpt-4'") as caught:
        Gateway(GatewaySettings("gpt-4"))
    assert "anthropic/<model>" in caught.value.hint


@pytest.mark.parametrize(
    ("model", "variable"),
    [("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY"), ("openai/gpt-5", "OPENAI_API_KEY")],
)
def test_missing_key_for_the_chosen_provider(model, variable, monkeypatch):
    monkeypatch.delenv(variable, raising=False)
    with pytest.raises(ConfigError, match=f"{variable} is not set") as caught:
        Gateway(GatewaySettings(model, port=None)).start()
    assert "never reaches a sandbox" in caught.value.hint


def test_openai_compatible_needs_a_url_and_a_price():
    with pytest.raises(ConfigError, match="needs a base URL"):
        Gateway(GatewaySettings("openai-compatible/qwen", port=None)).start()
    model = "openai-compatible/qwen2.5-coder@http://127.0.0.1:9/v1"
    with pytest.raises(ConfigError, match="no price known") as caught:
        Gateway(GatewaySettings(model, port=None)).start()
    assert (
        '[llm.prices."openai-compatible/qwen2.5-coder@http://127.0.0.1:9/v1"]' in caught.value.hint
    )
    free = {"openai-compatible/qwen2.5-coder": Price(input=0, output=0)}
    Gateway(GatewaySettings(model, port=None, prices=free)).start().stop()


def test_unknown_script_lists_the_known_ones():
    with pytest.raises(ConfigError, match="no scripted model named 'nope'") as caught:
        Gateway(GatewaySettings("scripted/nope")).start()
    assert "echo" in caught.value.hint


def test_bad_sockets_and_ports(make_gateway, tmp_path):
    gw = make_gateway("scripted/echo")
    long_path = tmp_path / ("x" * 120) / "llm.sock"
    with pytest.raises(DgmError, match="longer than the 107 bytes"):
        gw.bind_job(JobBinding("r", "j"), socket_path=long_path)
    gw.bind_job(JobBinding("r", "j"))
    with pytest.raises(DgmError, match="already bound"):
        gw.bind_job(JobBinding("r", "j"))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(DgmError, match="cannot listen on 127.0.0.1"):
            Gateway(GatewaySettings("scripted/echo", port=taken.getsockname()[1])).start()
