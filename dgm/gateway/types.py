"""Plain records the gateway hands to the rest of dgm, and the errors a call can end in."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dgm.errors import BudgetExceeded, DgmError


@dataclass(frozen=True)
class JobBinding:
    """Who a call is made for. The gateway attributes calls by binding, never by what the
    caller claims in its request."""

    run: str
    job_id: str
    node_id: int | None = None
    task_id: str | None = None
    role: str = "solve"
    """`solve`, `self_improve`, `diagnose`, ...: free text, used for totals and scripts."""


@dataclass(frozen=True)
class Endpoint:
    """What a sandbox needs to reach the gateway for one bound job."""

    binding: JobBinding
    model: str
    token: str
    env: dict[str, str]
    """Set these in the agent's environment: DGM_LLM_URL, DGM_LLM_TOKEN, DGM_LLM_MODEL."""
    socket_path: Path | None
    """Host path of the job's unix socket (mount it into the container), or None."""
    container_socket_path: str | None
    """Where the socket appears inside the container (what DGM_LLM_URL names)."""
    log_path: Path | None
    """The job's exchange log (JSONL), or None when the gateway keeps no logs."""


@dataclass(frozen=True)
class Usage:
    """Tokens of one call. `input_tokens` counts every input token: those read from the
    prompt cache (`cached_tokens`), those written to it (`cache_write_tokens`) and the
    rest, each priced at its own rate."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def uncached_tokens(self) -> int:
        return max(self.input_tokens - self.cached_tokens - self.cache_write_tokens, 0)

    def openai_dict(self) -> dict[str, Any]:
        """The OpenAI shape agents expect: cache writes are plain prompt tokens there."""
        return {
            "prompt_tokens": self.input_tokens,
            "completion_tokens": self.output_tokens,
            "total_tokens": self.input_tokens + self.output_tokens,
            "prompt_tokens_details": {"cached_tokens": self.cached_tokens},
        }


@dataclass(frozen=True)
class UsageRecord:
    """One call as the store's `llm_usage` table sees it."""

    run: str
    job_id: str
    node_id: int | None
    task_id: str | None
    role: str
    model: str
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    cost_usd: float
    latency_s: float
    error: str | None
    ts: float
    cache_write_tokens: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Tally:
    """Running totals for one job, node, role, model or the whole run."""

    calls: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0

    def add(self, record: UsageRecord) -> None:
        self.calls += 1
        self.errors += record.error is not None
        self.input_tokens += record.input_tokens
        self.output_tokens += record.output_tokens
        self.cached_tokens += record.cached_tokens
        self.cache_write_tokens += record.cache_write_tokens
        self.cost_usd += record.cost_usd

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass
class UsageTotals:
    """A snapshot of `Gateway.totals()`."""

    run: Tally
    spent_usd: float
    """All dollars of the run, including those spent before a resume."""
    refused: int
    by_job: dict[str, Tally] = field(default_factory=dict)
    by_node: dict[int | None, Tally] = field(default_factory=dict)
    by_role: dict[str, Tally] = field(default_factory=dict)
    by_model: dict[str, Tally] = field(default_factory=dict)


class LLMCallError(DgmError):
    """A call the gateway answered with an error; `status`/`type` are what the agent sees."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 400,
        type: str = "invalid_request_error",
        code: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint)
        self.status = status
        self.type = type
        self.code = code

    def body(self) -> dict[str, Any]:
        """The OpenAI-style error body sent to the client."""
        return {"error": {"message": self.message, "type": self.type, "code": self.code}}


class BudgetRefused(LLMCallError, BudgetExceeded):
    """A call refused because it could exceed a job or run budget (HTTP 402)."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(
            message, status=402, type="budget_exceeded", code="budget_exceeded", hint=hint
        )


class UpstreamError(Exception):
    """A failed attempt at the upstream provider, before the retry policy has decided.

    Scripts may raise it to simulate provider failures.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after_s: float | None = None,
        kind: str = "upstream_error",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.retryable = retryable
        self.retry_after_s = retry_after_s
        self.kind = kind
        """`timeout`, `connection`, `rate_limit`, `server_error` or `upstream_error`."""
