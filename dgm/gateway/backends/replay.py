"""The replay backend: the answers an earlier run's jobs got, matched by job and position.

A call is answered with what the recorded run answered the same job (job id and role)
at the same call index; the request's text is not the key, because agents' tool outputs
hold timings that differ on every run. The index counts within the job's last recorded
attempt. A call the recording lacks is an error the agent sees (HTTP 400, type
`replay_miss`, naming the job, role and call), remembered per job so the meta loop fails
that job with the reason and stops the run (`misses`); never a made-up answer.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from dgm.errors import ConfigError
from dgm.gateway.backends.base import BackendResult, CallContext
from dgm.gateway.exchange_log import read_exchanges
from dgm.gateway.faults import raise_if_down
from dgm.gateway.protocol import request_key
from dgm.gateway.types import LLMCallError, Usage

log = logging.getLogger(__name__)

Key = tuple[str, str, int]
"""(job id, role, call index)"""


class ReplayBackend:
    def __init__(self, source: Path) -> None:
        self.name = f"replay/{source}"
        self.source = source
        self._answers: dict[Key, dict[str, Any]] = {}
        self.misses: dict[str, str] = {}
        """job id -> why its replay failed (the first call the recording lacked)."""
        self.differing: set[Key] = set()
        """Calls whose request text differed from the recorded one (answered anyway)."""
        files = self._log_files(source)
        for path in files:
            self._load(path)
        if not self._answers:
            raise ConfigError(
                f"no recorded answers found in {source} ({len(files)} log files)",
                "point replay/ at a run directory or a folder of gateway exchange logs",
            )

    def _load(self, path: Path) -> None:
        """One exchange log; a job that ran again (after a crash or a resume) appended to
        it with call indices from 0 again: its last attempt wins."""
        attempt: dict[Key, dict[str, Any]] = {}
        previous: dict[tuple[str, str], int] = {}
        for line in read_exchanges(path):
            job, role, call = line.get("job_id"), line.get("role"), line.get("call")
            if not isinstance(job, str) or not isinstance(call, int):
                continue
            who = (job, str(role))
            if call < previous.get(who, -1):  # a new attempt of this job
                attempt = {k: v for k, v in attempt.items() if k[:2] != who}
            previous[who] = call
            answer, asked = line.get("response"), line.get("request")
            if isinstance(answer, dict) and "choices" in answer and isinstance(asked, dict):
                attempt[(job, str(role), call)] = line  # a completion (a token count is none)
        self._answers.update(attempt)

    @staticmethod
    def _log_files(source: Path) -> list[Path]:
        if source.is_file():
            return [source]
        if not source.is_dir():
            raise ConfigError(f"replay source {source} does not exist", "check the path")
        logs = source / "logs" if (source / "logs").is_dir() else source
        return sorted(logs.rglob("*.jsonl"))

    async def complete(self, request: dict[str, Any], ctx: CallContext) -> BackendResult:
        raise_if_down()  # a simulated provider outage (soak tests)
        b = ctx.binding
        key = (b.job_id, b.role, ctx.call_index)
        line = self._answers.get(key)
        if line is None:
            message = (
                f"replay: the recording has no answer for job {b.job_id} ({b.role}) "
                f"call {ctx.call_index} in {self.source}"
            )
            self.misses.setdefault(b.job_id, message)
            raise LLMCallError(message, status=400, type="replay_miss", code="replay_miss")
        if request_key(request) != request_key(line["request"]) and key not in self.differing:
            self.differing.add(key)
            log.info("replay: job %s call %s asked differently; answered as recorded", *key[::2])
        choice = line["response"]["choices"][0]
        usage = Usage(**(line.get("usage") or {}))
        return BackendResult(choice["message"], choice["finish_reason"], usage, line.get("model"))

    async def close(self) -> None:
        return None
