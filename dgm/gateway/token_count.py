"""Anthropic's `POST /v1/messages/count_tokens`, which Claude-based agents call before a
request to see whether it fits: counted per job and logged, never billed and never held
against the job's calls or money (it completes nothing).

Where the job's backend can count (Anthropic: its `count_tokens`, the same request passed
through; free at Anthropic, under its own rate limit) the provider counts; for any other
backend the answer is the gateway's own estimate, the one it reserves budget with (about 3
bytes a token, deliberately high), and the answer says so with `dgm_estimate: true`.
"""

from __future__ import annotations

import time
from typing import Any

from dgm.gateway import anthropic_dialect
from dgm.gateway.protocol import estimate_input_tokens
from dgm.gateway.types import LLMCallError

COUNT_FIELDS = ("messages", "system", "tools", "tool_choice")
"""What of a count_tokens request is counted (it has no max_tokens; thinking is not sent)."""


async def count_tokens(backend: Any, raw: Any) -> dict[str, Any]:
    """`{"input_tokens": N}` for a Messages request, by the provider or estimated."""
    if not isinstance(raw, dict):
        raise LLMCallError("request body must be a JSON object")
    kept = {k: raw[k] for k in COUNT_FIELDS if k in raw}
    chat = anthropic_dialect.to_chat_request(kept | {"max_tokens": 1})
    chat.pop("max_tokens")
    provider_count = getattr(backend, "count_tokens", None)
    if provider_count is not None:
        return {"input_tokens": await provider_count(chat)}
    return {"input_tokens": estimate_input_tokens(chat), "dgm_estimate": True}


def count_log_fields(
    job: Any, raw: Any, answer: dict[str, Any] | None, error: LLMCallError | None,
    started: float, ts: float,
) -> dict[str, Any]:  # fmt: skip
    """The exchange log line of one count: no usage, no cost, the request marked as a count."""
    shown = None if error is None else error.body()["error"] | {"status": error.status}
    return {"ts": ts, "call": job.calls, "binding": job.binding, "model": job.model,
            "latency_s": time.monotonic() - started, "attempts": 1, "usage": None,
            "cost_usd": 0.0, "error": shown, "request": {"count_tokens": raw},
            "response": answer}  # fmt: skip
