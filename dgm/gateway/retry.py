"""Retrying upstream calls: exponential backoff with jitter, honouring `retry-after`."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from dgm.gateway.types import LLMCallError, UpstreamError

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 6
    base_s: float = 1.0
    """First backoff; doubles on each retry, up to `max_backoff_s`."""
    max_backoff_s: float = 60.0
    max_retry_after_s: float = 300.0
    """A provider asking for a longer wait than this gets it capped."""
    timeout_s: float = 300.0
    """One attempt taking longer than this is cut and counts as a retryable timeout."""

    def delay(self, attempt: int, retry_after_s: float | None) -> float:
        """Seconds to wait before retry number `attempt` (0-based): full-jitter backoff,
        but never less than what the provider asked for."""
        backoff = min(self.max_backoff_s, self.base_s * 2**attempt)
        jittered = random.uniform(backoff / 2, backoff)
        if retry_after_s is not None:
            return max(jittered, min(retry_after_s, self.max_retry_after_s))
        return jittered


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """`retry-after-ms` (Anthropic and OpenAI send it) or `retry-after` in seconds."""
    if not headers:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(float(value) / scale, 0.0)
        except ValueError:
            continue  # an HTTP date: rare from LLM providers, fall back to backoff
    return None


async def call_with_retries(
    attempt_fn: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    provider: str,
) -> tuple[T, int]:
    """Run `attempt_fn` until it succeeds or fails for good; returns (result, attempts)."""
    attempt = 0
    while True:
        try:
            result = await asyncio.wait_for(attempt_fn(), policy.timeout_s)
            return result, attempt + 1
        except TimeoutError:
            error = UpstreamError(
                f"no answer within {policy.timeout_s:g}s", retryable=True, kind="timeout"
            )
        except UpstreamError as exc:
            error = exc
        if not error.retryable or attempt >= policy.max_retries:
            raise final_error(error, provider, attempt + 1) from None
        await asyncio.sleep(policy.delay(attempt, error.retry_after_s))
        attempt += 1


def final_error(error: UpstreamError, provider: str, attempts: int) -> LLMCallError:
    """What the agent sees once retrying is over."""
    tried = f" after {attempts} attempts" if attempts > 1 else ""
    message = f"upstream {provider}{tried}: {error.message}"
    if error.kind == "timeout":
        return LLMCallError(message, status=504, type="upstream_timeout")
    if error.kind == "connection":
        return LLMCallError(message, status=502, type="upstream_unreachable")
    status = error.status or 502
    if status >= 500:
        return LLMCallError(message, status=502, type="upstream_error", code=str(status))
    kind = "rate_limit_exceeded" if status == 429 else "upstream_error"
    return LLMCallError(message, status=status, type=kind, code=str(status))
