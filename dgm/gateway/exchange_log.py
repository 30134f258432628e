"""The per-job exchange log: one JSON line per call, the raw material of a trajectory.

Each line: `ts, call, job_id, node_id, task_id, role, model, latency_s, attempts,
usage, cost_usd, error, dropped_fields, request, response`. Identification first, the
bulky request and response last, so `head`/`less` show what happened at a glance.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from dgm.gateway.types import JobBinding, Usage
from dgm.key_redaction import scrub


class ExchangeLog:
    """Appends to one JSONL file, flushed per line so a crash loses at most one."""

    def __init__(self, path: Path, secrets: tuple[str, ...] = ()) -> None:
        self.path = path
        self._secrets = tuple(s for s in secrets if s)
        self._file: TextIO | None = None
        path.parent.mkdir(parents=True, exist_ok=True)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def append(
        self,
        *,
        ts: float,
        call: int,
        binding: JobBinding,
        dropped_fields: list[str] | None = None,
        model: str,
        latency_s: float,
        attempts: int,
        usage: Usage | None,
        cost_usd: float,
        error: dict[str, Any] | None,
        request: Any,
        response: dict[str, Any] | None,
    ) -> None:
        line = {
            "ts": round(ts, 3),
            "call": call,
            "job_id": binding.job_id,
            "node_id": binding.node_id,
            "task_id": binding.task_id,
            "role": binding.role,
            "model": model,
            "latency_s": round(latency_s, 4),
            "attempts": attempts,
            "usage": None if usage is None else usage.__dict__,
            "cost_usd": cost_usd,
            "error": error,
            "dropped_fields": dropped_fields or None,
            "request": request,
            "response": response,
        }
        text = json.dumps(line, ensure_ascii=False, default=str)
        for secret in self._secrets:  # belt and braces: keys must never reach the disk
            text = text.replace(secret, "[redacted]")
        text = scrub(text)
        if self._file is None:  # first line, or a late call after the job was unbound
            self._file = self.path.open("a", encoding="utf-8")
        self._file.write(text + "\n")
        self._file.flush()


def read_exchanges(path: Path) -> Iterator[dict[str, Any]]:
    """The lines of an exchange log, skipping a torn last line."""
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue
