"""The gateway's own question to a provider: "are you there?" (a one-token call).

It is what an agent cannot fake: sent by dgm, not by any job, so its failure corroborates
that a job's failed calls were the provider's (outages.py), and the loop's circuit breaker
asks it before dispatching jobs again after an outage.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from dgm.gateway.backends import provider_of
from dgm.gateway.backends.base import CallContext
from dgm.gateway.faults import simulated_outage
from dgm.gateway.outages import OutageWatch, is_outage_error
from dgm.gateway.pricing import cost_usd
from dgm.gateway.request_policy import upstream_request
from dgm.gateway.types import JobBinding, LLMCallError, UpstreamError, Usage, UsageRecord

PROBE_JOB = "dgm-probe"
"""The job id (role `probe`) its calls are recorded under: in the run's spend, no job's."""
NO_NETWORK = ("scripted", "replay")
"""Providers that live in this process: never down, nothing to probe."""


def probe_record(
    run: str, model: str, price: Any, usage: Usage | None, latency: float, down: str | None
) -> UsageRecord:
    """A probe call as the store's `llm_usage` sees it: job `dgm-probe`, role `probe`."""
    usage = usage or Usage()
    return UsageRecord(
        run=run, job_id=PROBE_JOB, node_id=None, task_id=None, role="probe", model=model,
        input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
        cached_tokens=usage.cached_tokens, cache_write_tokens=usage.cache_write_tokens,
        cost_usd=cost_usd(price, usage) if price is not None else 0.0, latency_s=latency,
        error=None if down is None else down[:500], ts=time.time(),
    )  # fmt: skip


async def probe_backend(
    backend: Any, model: str, run: str, timeout_s: float, spent: list[Usage] | None = None
) -> str | None:
    """None when the provider answers (even with a refusal that is not an outage), else
    why not. Costs one input message and one output token, appended to `spent` when the
    provider billed it; counted against no job (the run's spend counts it)."""
    if provider_of(model)[0] in NO_NETWORK:
        return simulated_outage()
    request, _ = upstream_request({"messages": [{"role": "user", "content": "Reply with OK."}]}, 1)
    ctx = CallContext(JobBinding(run, PROBE_JOB, None, None, "probe"), model, 0, 1)
    try:
        result = await asyncio.wait_for(backend.complete(request, ctx), timeout_s)
        if spent is not None and getattr(result, "usage", None) is not None:
            spent.append(result.usage)
    except TimeoutError:
        return f"no answer within {timeout_s:g}s"
    except UpstreamError as exc:
        if exc.kind in ("timeout", "connection") or (exc.status or 500) >= 500:
            return exc.message
        if exc.status in (401, 403, 429):
            return f"HTTP {exc.status}: {exc.message}"
        return None  # it answered: a refusal of this request is no outage
    except LLMCallError as exc:
        return exc.message if is_outage_error(exc.type, exc.status) else None
    return None


class ProviderProbes:
    """Runs on the gateway's loop: notes each call that failed for good and, unless a
    probe of that model is out already, asks the provider at once."""

    def __init__(
        self,
        watch: OutageWatch,
        backend_of: Callable[[str], Any],
        run: str,
        timeout_s: float,
        on_spent: Callable[[str, Usage | None, float, str | None], None] | None = None,
    ) -> None:
        self.on_spent = on_spent
        """Told of each probe call (model, usage or None, latency, why it failed): the
        gateway books it in the run's spend."""
        self.watch = watch
        self.backend_of = backend_of
        self.run = run
        self.timeout_s = min(timeout_s, 30.0)
        self._probing: set[str] = set()
        self.enabled = False
        """Probe at once when a call fails for good (a run or `dgm eval` turns it on; a
        bare gateway only notes the failures)."""

    def failed(self, job: Any, error: LLMCallError) -> None:
        """`job` is the gateway's BoundJob whose call failed for good with `error`."""
        if not is_outage_error(error.type, error.status):
            return  # a request the provider refused: the agent's
        provider = provider_of(job.model)[0]
        failure = self.watch.failed(job.binding.job_id, provider, error.message, job.model)
        if self.enabled and not failure.flooding and job.model not in self._probing:
            self._probing.add(job.model)
            asyncio.ensure_future(self.probe(job.model))

    async def probe(self, model: str) -> str | None:
        spent: list[Usage] = []
        started = time.monotonic()
        try:
            down = await probe_backend(
                self.backend_of(model), model, self.run, self.timeout_s, spent
            )
        finally:
            self._probing.discard(model)
        if self.on_spent is not None and provider_of(model)[0] not in NO_NETWORK:
            self.on_spent(model, spent[0] if spent else None, time.monotonic() - started, down)
        self.watch.probed(provider_of(model)[0], down)
        return down
