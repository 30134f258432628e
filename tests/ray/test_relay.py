"""The per-job relay on a worker node: the job's own token goes through to the head's
gateway (which counts the call), any other token is refused at the relay."""

from __future__ import annotations

import pytest

from dgm.executors.distributed.relay import JobRelay
from dgm.gateway import (
    Gateway,
    GatewaySettings,
    JobBinding,
    LLMCallError,
    register_script,
    short_socket_path,
)
from dgm.jobs.llm_access import LLMAccess, chat

REQUEST = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 20}


def test_the_relay_forwards_the_jobs_token_and_refuses_another(tmp_path) -> None:
    register_script("relay-echo", lambda request, ctx: "ok")
    with Gateway(
        GatewaySettings("scripted/relay-echo", run="t", log_dir=tmp_path, port=0)
    ) as gateway:
        endpoint = gateway.bind_job(JobBinding("t", "job-1", 0, "task", "solve"),
                                    container_socket_path=None)  # fmt: skip
        path = short_socket_path("relay-test-job-1")
        with JobRelay(path, gateway.url, endpoint.token) as relay:
            access = LLMAccess(f"unix://{path}", endpoint.token, "scripted/relay-echo")
            answer = chat(access, REQUEST)
            assert answer["choices"][0]["message"]["content"] == "ok"
            with pytest.raises(LLMCallError, match="wrong or missing token"):
                chat(LLMAccess(f"unix://{path}", "not-the-token", "m"), REQUEST)
            # A real token of another job is refused too: the relay serves one job only.
            other = gateway.bind_job(JobBinding("t", "job-2", 0, "task", "solve"),
                                     container_socket_path=None)  # fmt: skip
            with pytest.raises(LLMCallError, match="wrong or missing token"):
                chat(LLMAccess(f"unix://{path}", other.token, "m"), REQUEST)
            assert relay.refused == 2
        gateway.flush()
        by_job = gateway.totals().by_job
        assert by_job["job-1"].calls == 1 and "job-2" not in by_job
    assert not path.exists()
