"""Gateway hardening (issue 12): private sockets, per-job refusals that never stop the run,
body and concurrency caps, an allowlist of upstream fields, keys out of every log line."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from dgm import key_redaction
from dgm.config import JobBudget, Price
from dgm.errors import DgmError
from dgm.gateway import (
    BudgetRefused,
    Gateway,
    GatewaySettings,
    JobBinding,
    register_script,
    short_socket_path,
)
from dgm.gateway.exchange_log import read_exchanges
from dgm.sandbox.docker_backend import grant_socket_access

from .fake_upstream import reply
from .helpers import is_root, openai_client

FAKE_KEY = "sk-ant-FAKE-gw-canary-0000"
PRICED = {"scripted/echo": Price(input=3.0, output=15.0, max_output_tokens=64_000)}
HI = [{"role": "user", "content": "hi"}]


def post(url: str, token: str, body: bytes) -> tuple[int, dict]:
    request = urllib.request.Request(
        url + "/chat/completions",
        data=body,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


# -- sockets -------------------------------------------------------------------------
def test_job_sockets_are_0600_in_a_private_unpredictable_folder(make_gateway):
    gw = make_gateway("scripted/echo")
    endpoint = gw.bind_job(JobBinding("run-1", "job-a"), socket_path=short_socket_path("job-a"))
    folder = endpoint.socket_path.parent
    assert folder.name != f"dgm-llm-{os.getuid()}"  # not a name another user can pre-create
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and folder.stat().st_uid == os.geteuid()
    assert stat.S_IMODE(endpoint.socket_path.stat().st_mode) == 0o600
    client = openai_client(str(endpoint.socket_path), "")
    assert client.chat.completions.create(model="x", messages=HI).choices[0].message.content


@pytest.mark.skipif(not is_root(), reason="needs root to act as another uid")
def test_another_user_cannot_reach_a_job_socket(make_gateway):
    gw = make_gateway("scripted/echo")
    endpoint = gw.bind_job(JobBinding("run-1", "job-a"), socket_path=short_socket_path("job-a"))
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        pytest.skip("no system python3 to probe as another uid")
    probe = "import socket,sys;socket.socket(socket.AF_UNIX).connect(sys.argv[1])"
    out = subprocess.run(
        [python, "-c", probe, str(endpoint.socket_path)],
        capture_output=True,
        text=True,
        timeout=30,
        preexec_fn=lambda: (os.setgid(65534), os.setuid(65534)),
    )
    assert out.returncode != 0 and "PermissionError" in out.stderr
    # What the sandbox layer does for its container uid: the socket stays 0600.
    grant_socket_access(endpoint.socket_path, "1000:1000")
    st = endpoint.socket_path.stat()
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (1000, 0o600)


def test_a_shared_or_foreign_socket_folder_is_refused(make_gateway, tmp_path):
    gw = make_gateway("scripted/echo")
    shared = Path(tempfile.mkdtemp(prefix="dgmgw-"))
    try:
        shared.chmod(0o777)
        with pytest.raises(DgmError, match=r"has mode 0o777.*chmod 700") as caught:
            gw.bind_job(JobBinding("r", "j1"), socket_path=shared / "a.sock")
        assert str(shared) in str(caught.value)
        if is_root():
            shared.chmod(0o700)
            os.chown(shared, 65534, 65534)
            with pytest.raises(DgmError, match="belongs to uid 65534, not to you"):
                gw.bind_job(JobBinding("r", "j2"), socket_path=shared / "a.sock")
        link = Path(tempfile.mkdtemp(prefix="dgmgw-")) / "l"
        link.symlink_to(tempfile.mkdtemp(prefix="dgmgw-"))
        with pytest.raises(DgmError, match="not a plain folder"):
            gw.bind_job(JobBinding("r", "j3"), socket_path=link / "a.sock")
    finally:
        shutil.rmtree(shared, ignore_errors=True)
    assert not list(shared.glob("*.sock")) if shared.exists() else True


# -- budgets ---------------------------------------------------------------------------
def test_huge_max_tokens_is_refused_for_the_job_alone(make_gateway):
    # Clamped to the model's 64,000 tokens the call could still cost $0.96: over the
    # $0.50 the run has, while a modest call ($0.02) would fit.
    gw = make_gateway("scripted/echo", prices=PRICED, run_budget_usd=0.5)
    greedy = gw.bind_job(JobBinding("run-1", "greedy"))
    status, body = post(gw.url, greedy.token, json.dumps(
        {"messages": HI, "max_tokens": 10**9}).encode())  # fmt: skip
    assert status == 402 and body["error"]["type"] == "budget_exceeded"
    assert "more than" in body["error"]["message"]
    assert not gw.run_budget_exhausted()  # the run goes on
    other = gw.bind_job(JobBinding("run-1", "modest"))
    status, body = post(gw.url, other.token, json.dumps({"messages": HI}).encode())
    assert status == 200 and body["choices"][0]["message"]["content"] == "echo: hi"


def test_default_job_budget_refuses_a_runaway_job_without_a_run_cap(make_gateway):
    unlimited = {"scripted/echo": Price(input=3.0, output=15.0)}  # no known output limit
    gw = make_gateway("scripted/echo", prices=unlimited)  # no run budget: the default
    assert gw.job_budget.max_usd == JobBudget().max_usd == 10.0
    job = JobBinding("run-1", "runaway")
    assert gw.complete(job, {"messages": HI, "max_tokens": 4096})["choices"]
    with pytest.raises(BudgetRefused, match=r"job runaway has spent \$0\.\d+ of its \$10;"):
        gw.complete(job, {"messages": HI, "max_tokens": 10**9})  # up to $15,000
    assert not gw.run_budget_exhausted()


def test_the_run_stops_only_when_a_modest_call_no_longer_fits(make_gateway):
    gw = make_gateway("scripted/echo", prices=PRICED, run_budget_usd=0.0001)
    with pytest.raises(BudgetRefused, match="of its \\$0.0001 budget"):
        gw.complete(JobBinding("run-1", "j"), {"messages": HI, "max_tokens": 50})
    assert gw.run_budget_exhausted()


# -- body and concurrency caps -----------------------------------------------------
def test_request_bodies_over_4_mib_are_413(make_gateway):
    gw = make_gateway("scripted/echo")
    endpoint = gw.bind_job(JobBinding("run-1", "big"))
    body = json.dumps({"messages": [{"role": "user", "content": "x" * (5 * 2**20)}]}).encode()
    status, answer = post(gw.url, endpoint.token, body)
    assert status == 413 and "larger than 4 MiB" in answer["error"]["message"]
    status, _ = post(gw.url, endpoint.token, json.dumps({"messages": HI}).encode())
    assert status == 200


async def _slow(request, ctx):
    await asyncio.sleep(4.0)  # long enough for all six requests to arrive, even under load
    return "slow answer"


register_script("slow", lambda request, ctx: _slow(request, ctx))


def test_a_job_may_have_only_its_cap_of_calls_in_flight(make_gateway):
    gw = make_gateway("scripted/slow")
    endpoint = gw.bind_job(JobBinding("run-1", "busy"), JobBudget(max_concurrent=2))
    other = gw.bind_job(JobBinding("run-1", "other"), JobBudget(max_concurrent=2))
    statuses: list[int] = []
    body = json.dumps({"messages": HI}).encode()

    def call(token: str) -> None:
        statuses.append(post(gw.url, token, body)[0])

    threads = [threading.Thread(target=call, args=(endpoint.token,)) for _ in range(5)]
    threads.append(threading.Thread(target=call, args=(other.token,)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(statuses) == [200, 200, 200, 429, 429, 429]


# -- what reaches the upstream ---------------------------------------------------------
def test_only_allowlisted_fields_reach_the_upstream(upstream, make_gateway, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", upstream.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    upstream.push(reply("openai", "fine"))
    gw = make_gateway("openai/gpt-5-mini")
    endpoint = gw.bind_job(JobBinding("run-1", "sneaky"))
    hostile = {
        "messages": HI,
        "max_tokens": 10**7,
        "temperature": 0.5,
        "extra_headers": {"X-Evil": "1", "Authorization": "Bearer stolen"},
        "extra_query": {"q": "1"},
        "extra_body": {"smuggled": True},
        "timeout": 0.001,
        "service_tier": "priority",
        "base_url": "http://attacker.invalid",
        "store": True,
    }
    status, answer = post(gw.url, endpoint.token, json.dumps(hostile).encode())
    assert status == 200, answer
    dropped = ["base_url", "extra_body", "extra_headers", "extra_query", "service_tier",
               "store", "timeout"]  # fmt: skip
    assert answer["dgm_dropped_fields"] == dropped
    seen = upstream.requests[-1]
    assert "X-Evil" not in seen["headers"] and "stolen" not in json.dumps(seen["headers"])
    # prompt_cache_key is the gateway's own (one opaque key per job, for OpenAI's cache).
    assert set(seen["body"]) <= {"model", "messages", "max_tokens", "max_completion_tokens",
                                 "temperature", "prompt_cache_key"}  # fmt: skip
    assert seen["body"]["prompt_cache_key"].startswith("dgm-")
    assert seen["body"]["temperature"] == 0.5
    assert seen["body"]["max_tokens"] == 128_000  # clamped to the model's output limit
    gw.unbind(endpoint)
    line = list(read_exchanges(endpoint.log_path))[-1]
    assert line["dropped_fields"] == dropped and "extra_headers" not in line["request"]


# -- keys in logs ----------------------------------------------------------------------
def _leaky(request, ctx):
    key = os.environ["ANTHROPIC_API_KEY"]  # noqa: F841 - a local a traceback could show
    raise RuntimeError(f"provider said: bad key {os.environ['ANTHROPIC_API_KEY']}")


register_script("leaky", _leaky)


def test_a_gateway_changes_nothing_process_wide_until_asked(monkeypatch) -> None:
    """Constructing (and starting) a gateway leaves the process's log records alone: key
    redaction is the serving process's explicit step, not a constructor's side effect."""
    unshaped = "plain-secret-not-key-shaped-0042"  # only a registered key is scrubbed
    monkeypatch.setenv("ANTHROPIC_API_KEY", unshaped)
    factory, hook = logging.getLogRecordFactory(), sys.excepthook
    Gateway(GatewaySettings("scripted/echo", port=None)).start().stop()
    assert (logging.getLogRecordFactory(), sys.excepthook) == (factory, hook)
    assert key_redaction.scrub(unshaped) == unshaped


def test_keys_are_redacted_in_every_log_line_and_traceback(make_gateway, monkeypatch, tmp_path):
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    key_redaction.install_from_environment()  # the serving process's first step (the CLI's)
    gw = make_gateway("scripted/leaky")
    handler_out = tmp_path / "dgm.log"
    handler = logging.FileHandler(handler_out)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
    logging.getLogger().addHandler(handler)
    try:
        endpoint = gw.bind_job(JobBinding("run-1", "leaky"))
        status, answer = post(gw.url, endpoint.token, json.dumps({"messages": HI}).encode())
        try:
            raise ValueError(f"elsewhere in dgm: {FAKE_KEY!r}")
        except ValueError:
            logging.getLogger("dgm.somewhere").exception("a failure quoting %s", FAKE_KEY)
        gw.unbind(endpoint)
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()
    text = handler_out.read_text()
    assert status == 500 and FAKE_KEY not in json.dumps(answer)
    assert "Traceback" in text and "RuntimeError" in text and "[redacted]" in text
    assert FAKE_KEY not in text
    assert FAKE_KEY not in endpoint.log_path.read_text()
    assert "sk-ant-FAKE" not in text + sys.version  # no prefix of the key either
