"""The replay backend: answers recorded in earlier exchange logs, keyed by request.

The same request (ignoring `model`, `stream` and such) gets the recorded answers in the
order they were recorded, then the last one again. A request never seen is an error
the agent sees (HTTP 400, type `replay_miss`), never a made-up answer.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from dgm.errors import ConfigError
from dgm.gateway.backends.base import BackendResult, CallContext
from dgm.gateway.exchange_log import read_exchanges
from dgm.gateway.protocol import request_key
from dgm.gateway.types import LLMCallError, Usage


class ReplayBackend:
    def __init__(self, source: Path) -> None:
        self.name = f"replay/{source}"
        self.source = source
        self._answers: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self._served: dict[str, int] = defaultdict(int)
        files = self._log_files(source)
        for path in files:
            for line in read_exchanges(path):
                if line.get("response") and isinstance(line.get("request"), dict):
                    self._answers[request_key(line["request"])].append(line)
        if not self._answers:
            raise ConfigError(
                f"no recorded answers found in {source} ({len(files)} log files)",
                "point replay/ at a run directory or a folder of gateway exchange logs",
            )

    @staticmethod
    def _log_files(source: Path) -> list[Path]:
        if source.is_file():
            return [source]
        if not source.is_dir():
            raise ConfigError(f"replay source {source} does not exist", "check the path")
        logs = source / "logs" if (source / "logs").is_dir() else source
        return sorted(logs.rglob("*.jsonl"))

    async def complete(self, request: dict[str, Any], ctx: CallContext) -> BackendResult:
        key = request_key(request)
        recorded = self._answers.get(key)
        if not recorded:
            raise LLMCallError(
                f"replay: no recorded answer for this request (key {key[:12]}, job "
                f"{ctx.binding.job_id}, call {ctx.call_index}) in {self.source}",
                status=400,
                type="replay_miss",
                code="replay_miss",
            )
        index = min(self._served[key], len(recorded) - 1)
        self._served[key] += 1
        line = recorded[index]
        choice = line["response"]["choices"][0]
        usage = Usage(**(line.get("usage") or {}))
        return BackendResult(choice["message"], choice["finish_reason"], usage, line.get("model"))

    async def close(self) -> None:
        return None
