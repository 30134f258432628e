"""Turning an official SDK's exceptions into `UpstreamError`s the retry policy reads.

The `anthropic` and `openai` SDKs share one exception layout (APITimeoutError <
APIConnectionError, APIStatusError with `.status_code`, `.response`, `.body`).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from dgm.gateway.retry import retry_after_seconds
from dgm.gateway.types import UpstreamError

# 408 timeout, 409 conflict (lock), 429 rate limit, 5xx (529: Anthropic overloaded)
RETRYABLE_STATUS = {408, 409, 429}


def upstream_error(exc: Exception, sdk: ModuleType) -> UpstreamError | None:
    """The UpstreamError for an SDK exception, or None if it is not an SDK API error."""
    if isinstance(exc, sdk.APITimeoutError):
        return UpstreamError("request timed out", retryable=True, kind="timeout")
    if isinstance(exc, sdk.APIConnectionError):
        return UpstreamError(f"connection failed: {exc}", retryable=True, kind="connection")
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        retryable = status in RETRYABLE_STATUS or status >= 500
        kind = (
            "rate_limit" if status == 429 else "server_error" if status >= 500 else "upstream_error"
        )
        return UpstreamError(
            f"HTTP {status}: {_message(exc.body) or exc.message}",
            status=status,
            retryable=retryable,
            retry_after_s=retry_after_seconds(exc.response.headers) if retryable else None,
            kind=kind,
        )
    return None


def _message(body: Any) -> str | None:
    """The provider's own words from an error body (`{"error": {"message": ...}}` or so)."""
    if isinstance(body, dict):
        if isinstance(body.get("message"), str):
            return body["message"]
        return _message(body.get("error"))
    return None
