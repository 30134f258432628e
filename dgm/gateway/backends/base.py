"""What every backend offers: turn one validated request into one answer and its usage."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from dgm.gateway.types import JobBinding, Usage


@dataclass(frozen=True)
class CallContext:
    """What a backend (and a script) knows about the call beyond the request itself."""

    binding: JobBinding
    model: str
    """The model string the job is bound to, e.g. `anthropic/claude-sonnet-4-5`."""
    call_index: int
    """0 for the job's first call, 1 for its second, ..."""
    max_output_tokens: int
    """The output cap the gateway reserved budget for; backends must not exceed it."""


@dataclass(frozen=True)
class BackendResult:
    message: dict[str, Any]
    """An OpenAI assistant message: role, content, tool_calls."""
    finish_reason: str
    usage: Usage
    priced_as: str | None = None
    """Price the call as this model instead of the bound one (replay of a recorded run)."""


class Backend(Protocol):
    name: str

    async def complete(self, request: dict[str, Any], ctx: CallContext) -> BackendResult:
        """Answer one request or raise `UpstreamError` (retry decides) / `LLMCallError`."""
        ...

    async def close(self) -> None: ...
