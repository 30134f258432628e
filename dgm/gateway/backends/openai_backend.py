"""OpenAI and OpenAI-compatible servers (vLLM, Ollama, llama.cpp, OpenRouter) via the
official `openai` SDK. The request passes through almost untouched.

OpenAI caches long prompt prefixes by itself; the cached tokens it reports
(`usage.prompt_tokens_details.cached_tokens`) are booked at the cache-read price. With
prompt caching on, calls to OpenAI carry a `prompt_cache_key` per job, so one job's
requests, which share ever longer prefixes, are routed to the same cache."""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
from typing import Any

import openai

from dgm.gateway.backends.base import BackendResult, CallContext
from dgm.gateway.backends.sdk_errors import upstream_error
from dgm.gateway.protocol import VOLATILE_FIELDS, estimate_input_tokens
from dgm.gateway.types import Usage

log = logging.getLogger(__name__)

_CREATE_PARAMS = set(
    inspect.signature(openai.AsyncOpenAI(api_key="x").chat.completions.create).parameters
)


class OpenAIBackend:
    def __init__(
        self,
        model: str,
        api_key: str,
        base_url: str | None,
        timeout_s: float,
        *,
        official: bool,
        prompt_caching: bool = False,
    ) -> None:
        self.name = f"openai/{model}"
        self.model = model
        self.official = official
        self.prompt_caching = prompt_caching
        # Retries are ours (retry.py): the SDK's would hide attempts from the policy.
        self.client = openai.AsyncOpenAI(
            api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout_s
        )

    async def complete(self, request: dict[str, Any], ctx: CallContext) -> BackendResult:
        params = {k: v for k, v in request.items() if k not in VOLATILE_FIELDS}
        if "max_tokens" not in params and "max_completion_tokens" not in params:
            # Bound the output so the budget reservation holds. Compatible servers
            # know `max_tokens`; OpenAI's reasoning models only the newer name.
            params["max_completion_tokens" if self.official else "max_tokens"] = (
                ctx.max_output_tokens
            )
        if self.prompt_caching and self.official:
            params.setdefault("prompt_cache_key", cache_key(ctx))
        known = {k: v for k, v in params.items() if k in _CREATE_PARAMS}
        extra = {k: v for k, v in params.items() if k not in _CREATE_PARAMS}
        try:
            answer = await self.client.chat.completions.create(
                model=self.model, **known, extra_body=extra or None
            )
        except openai.OpenAIError as exc:
            error = upstream_error(exc, openai)
            if error is None:
                raise
            raise error from None
        choice = answer.choices[0]
        message = {
            k: v
            for k, v in choice.message.model_dump(mode="json", exclude_none=True).items()
            if k in ("role", "content", "tool_calls", "refusal")
        }
        message.setdefault("content", None)
        return BackendResult(message, choice.finish_reason or "stop", self._usage(answer, request))

    def _usage(self, answer: Any, request: dict[str, Any]) -> Usage:
        usage = answer.usage
        if usage is None:  # some compatible servers omit it: count something, not nothing
            log.warning("%s sent no usage; estimating tokens from sizes", self.name)
            text = json.dumps(answer.choices[0].message.model_dump(mode="json"))
            return Usage(estimate_input_tokens(request), len(text) // 3)
        details = getattr(usage, "prompt_tokens_details", None)
        cached = getattr(details, "cached_tokens", None) or 0
        return Usage(usage.prompt_tokens or 0, usage.completion_tokens or 0, cached)

    async def close(self) -> None:
        await self.client.close()


def cache_key(ctx: CallContext) -> str:
    """A stable, opaque key per job (OpenAI routes requests with one key together)."""
    b = ctx.binding
    return "dgm-" + hashlib.sha256(f"{b.run}/{b.job_id}/{b.role}".encode()).hexdigest()[:24]
