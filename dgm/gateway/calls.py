"""One LLM call from request to record, on the gateway's event loop:

validate -> reserve the worst case in the budget -> backend, with retries -> price ->
settle -> usage record and exchange log line (written off the loop by the Recorder).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from aiohttp import web

from dgm.config import Price
from dgm.gateway.backends import Backend, CallContext, provider_of
from dgm.gateway.budget import Ledger, Reservation
from dgm.gateway.exchange_log import ExchangeLog
from dgm.gateway.pricing import PriceBook, cost_usd, worst_case_usd
from dgm.gateway.protocol import completion, estimate_input_tokens, output_cap, validate_request
from dgm.gateway.recorder import Recorder
from dgm.gateway.request_policy import output_limit, upstream_request
from dgm.gateway.retry import RetryPolicy, call_with_retries, final_error
from dgm.gateway.token_count import count_log_fields, count_tokens
from dgm.gateway.types import JobBinding, LLMCallError, UpstreamError, Usage, UsageRecord
from dgm.key_redaction import scrub

log = logging.getLogger(__name__)

UsageSink = Callable[[UsageRecord], None]
MODEST_OUTPUT = 1024
"""Output tokens of a 'modest' call: the run counts as out of money only when a call
capped at this many (or fewer) no longer fits its budget."""


@dataclass
class BoundJob:
    """A job as the gateway serves it: its model, price, token, log and socket."""

    binding: JobBinding
    model: str
    backend: Backend
    price: Price
    token: str
    log: ExchangeLog | None
    socket_path: Path | None = None
    runner: web.AppRunner | None = None
    max_concurrent: int = 4
    in_flight: int = 0
    """HTTP requests of this binding being served now (the concurrency cap)."""
    calls: int = 0
    token_counts: int = 0
    """`/v1/messages/count_tokens` requests answered (not calls: nothing billed)."""
    active: bool = True
    key: tuple[str, str] = field(init=False)

    def __post_init__(self) -> None:
        self.key = (self.binding.job_id, self.binding.role)


@dataclass
class CallPipeline:
    run: str
    ledger: Ledger
    prices: PriceBook
    retry: RetryPolicy
    recorder: Recorder
    on_usage: UsageSink | None
    default_max_tokens: int
    secrets: tuple[str, ...]
    on_upstream_failure: Callable[[BoundJob, LLMCallError], None] | None = None
    """Told of every call that failed for good at the provider (outages.py decides whose
    failure it was); `on_call` of every call that goes out."""
    on_call: Callable[[BoundJob], None] | None = None

    async def call(self, job: BoundJob, raw: Any) -> dict[str, Any]:
        """Answer one request for `job`, or raise `LLMCallError` (what the agent sees)."""
        answer, _ = await self.exchange(job, raw)
        return answer

    async def exchange(self, job: BoundJob, raw: Any) -> tuple[dict[str, Any], Usage]:
        """`call`, with the call's usage as the gateway counted it (cache writes included,
        which the Chat Completions shape has no field for)."""
        started, ts = time.monotonic(), time.time()
        reservation: Reservation | None = None
        usage, cost, attempts, answer, error = None, 0.0, 0, None, None
        sent: Any = raw
        dropped: list[str] = []
        call_index = job.calls
        try:
            if not job.active:
                raise LLMCallError(
                    f"job {job.binding.job_id} has ended",
                    status=401,
                    type="authentication_error",
                    code="invalid_token",
                )
            request = validate_request(raw)
            max_out = output_limit(
                output_cap(request, self.default_max_tokens), job.price.max_output_tokens
            )
            sent, dropped = upstream_request(raw, max_out)
            input_estimate = estimate_input_tokens(sent)
            max_cost = worst_case_usd(job.price, input_estimate, max_out)
            # What a modest version of this call would cost: if even that does not fit,
            # the run's money is gone; otherwise only this call is refused (HTTP 402).
            modest = worst_case_usd(job.price, input_estimate, min(max_out, MODEST_OUTPUT))
            reservation = await self.ledger.reserve(
                job.binding.job_id, max_cost, input_estimate + max_out, modest
            )
            job.calls += 1
            if self.on_call is not None:
                self.on_call(job)
            ctx = CallContext(job.binding, job.model, call_index, max_out)
            try:
                result, attempts = await call_with_retries(
                    lambda: job.backend.complete(sent, ctx), self.retry, provider_of(job.model)[0]
                )
            except LLMCallError as failed:
                if self.on_upstream_failure is not None:
                    self.on_upstream_failure(job, failed)
                raise
            usage = result.usage
            price = (result.priced_as and self.prices.lookup(result.priced_as)) or job.price
            cost = cost_usd(price, usage)
            answer = completion(job.model, result.message, result.finish_reason, usage)
            if dropped:  # said in the answer, so the agent learns why they had no effect
                answer["dgm_dropped_fields"] = dropped
            return answer, usage
        except LLMCallError as exc:
            exc.message = self.redact(exc.message)
            error = exc
            raise
        except asyncio.CancelledError:
            error = LLMCallError("the call was cancelled", status=499, type="cancelled")
            raise
        except Exception as exc:  # a bug in a backend or script: this call fails, not others
            log.exception("LLM call for job %s failed", job.binding.job_id)
            error = LLMCallError(
                self.redact(f"gateway internal error: {exc!r}"), status=500, type="server_error"
            )
            raise error from exc
        finally:
            latency = time.monotonic() - started
            if reservation is not None:
                record = self._usage_record(job, usage, cost, latency, error, ts)
                self.ledger.settle(reservation, record)
                if self.on_usage is not None:
                    self.recorder.put(partial(self.on_usage, record))
            if job.log is not None:
                shown = None if error is None else error.body()["error"] | {"status": error.status}
                line = partial(
                    job.log.append,
                    ts=ts,
                    call=call_index,
                    binding=job.binding,
                    model=job.model,
                    latency_s=latency,
                    attempts=attempts,
                    usage=usage,
                    cost_usd=cost,
                    error=shown,
                    request=sent,
                    response=answer,
                    dropped_fields=dropped,
                )
                self.recorder.put(line)

    async def count_tokens(self, job: BoundJob, raw: Any) -> dict[str, Any]:
        """Anthropic's count_tokens for `job` (token_count.py): logged, never billed."""
        started, ts = time.monotonic(), time.time()
        answer: dict[str, Any] | None = None
        error: LLMCallError | None = None
        try:
            if not job.active:
                raise LLMCallError(f"job {job.binding.job_id} has ended", status=401,
                                   type="authentication_error", code="invalid_token")  # fmt: skip
            try:
                answer = await count_tokens(job.backend, raw)
            except UpstreamError as failed:  # counted once: a count is never retried
                raise final_error(failed, provider_of(job.model)[0], 1) from None
            job.token_counts += 1
            return answer
        except LLMCallError as exc:
            exc.message = self.redact(exc.message)
            error = exc
            raise
        finally:
            if job.log is not None:
                fields = count_log_fields(job, raw, answer, error, started, ts)
                self.recorder.put(partial(job.log.append, **fields))

    def redact(self, text: str) -> str:
        """Provider errors may quote a key; none may reach an agent or a log."""
        for secret in self.secrets:
            if secret:
                text = text.replace(secret, "[redacted]")
        return scrub(text)

    def _usage_record(
        self,
        job: BoundJob,
        usage: Usage | None,
        cost: float,
        latency: float,
        error: LLMCallError | None,
        ts: float,
    ) -> UsageRecord:
        usage = usage or Usage()
        b = job.binding
        return UsageRecord(
            run=b.run or self.run,
            job_id=b.job_id,
            node_id=b.node_id,
            task_id=b.task_id,
            role=b.role,
            model=job.model,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cached_tokens=usage.cached_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            cost_usd=cost,
            latency_s=latency,
            ts=ts,
            error=None if error is None else f"{error.status} {error.type}: {error.message}"[:500],
        )
