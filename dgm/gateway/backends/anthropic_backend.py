"""Anthropic via the official `anthropic` SDK: Chat Completions translated to the Messages
API and back (system prompt, tools, tool calls, tool results, stop reasons, usage), with
prompt-cache breakpoints placed on the way out (`prompt_cache.py`)."""

from __future__ import annotations

import json
from typing import Any

import anthropic

from dgm.gateway.backends.base import BackendResult, CallContext
from dgm.gateway.backends.prompt_cache import place_breakpoints
from dgm.gateway.backends.sdk_errors import upstream_error
from dgm.gateway.protocol import message_text
from dgm.gateway.types import UpstreamError, Usage

STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


class AnthropicBackend:
    def __init__(
        self,
        model: str,
        api_key: str,
        base_url: str | None,
        timeout_s: float,
        *,
        prompt_caching: bool = True,
    ) -> None:
        self.name = f"anthropic/{model}"
        self.model = model
        self.prompt_caching = prompt_caching
        self.client = anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout_s
        )

    async def complete(self, request: dict[str, Any], ctx: CallContext) -> BackendResult:
        params = to_anthropic(request, ctx.max_output_tokens)
        if self.prompt_caching:
            params = place_breakpoints(params)
        try:
            answer = await self.client.messages.create(model=self.model, **params)
        except anthropic.AnthropicError as exc:
            error = upstream_error(exc, anthropic)
            if error is None:
                raise
            raise error from None
        return from_anthropic(answer.model_dump(mode="json"))

    async def count_tokens(self, request: dict[str, Any]) -> int:
        """The provider's own count of a request's input (`/v1/messages/count_tokens`)."""
        params = to_anthropic(request, 1)
        params.pop("max_tokens", None)
        try:
            counted = await self.client.messages.count_tokens(model=self.model, **params)
        except anthropic.AnthropicError as exc:
            error = upstream_error(exc, anthropic)
            if error is None:
                raise
            raise error from None
        return counted.input_tokens

    async def close(self) -> None:
        await self.client.close()


def to_anthropic(request: dict[str, Any], max_output_tokens: int) -> dict[str, Any]:
    """Messages API parameters for a Chat Completions request (the model aside)."""
    system: list[str] = []
    messages: list[dict[str, Any]] = []
    for message in request["messages"]:
        role = message["role"]
        if role in ("system", "developer"):
            system.append(message_text(message.get("content")))
            continue
        if role == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": message["tool_call_id"],
                "content": message_text(message.get("content")),
            }
            _append(messages, "user", [block])
        elif role == "assistant":
            blocks = _content_blocks(message.get("content"))
            for call in message.get("tool_calls") or []:
                fn = call["function"]
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call["id"],
                        "name": fn["name"],
                        "input": _arguments(fn.get("arguments")),
                    }
                )
            _append(messages, "assistant", blocks)
        else:
            _append(messages, "user", _content_blocks(message.get("content")))
    params: dict[str, Any] = {
        "messages": messages,
        "max_tokens": request.get("max_completion_tokens")
        or request.get("max_tokens")
        or max_output_tokens,
    }
    if system:
        params["system"] = "\n\n".join(system)
    for name in ("temperature", "top_p"):
        if request.get(name) is not None:
            params[name] = request[name]
    stop = request.get("stop")
    if stop:
        params["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    if request.get("tools"):
        params["tools"] = [
            {
                "name": tool["function"]["name"],
                "description": tool["function"].get("description", ""),
                "input_schema": tool["function"].get("parameters")
                or {"type": "object", "properties": {}},
            }
            for tool in request["tools"]
        ]
        choice = _tool_choice(request.get("tool_choice"), request.get("parallel_tool_calls"))
        if choice:
            params["tool_choice"] = choice
    return params


def from_anthropic(answer: dict[str, Any]) -> BackendResult:
    """A Messages API answer as an OpenAI assistant message with usage."""
    texts, calls = [], []
    for block in answer.get("content") or []:
        if block["type"] == "text":
            texts.append(block["text"])
        elif block["type"] == "tool_use":
            calls.append(
                {
                    "id": block["id"],
                    "type": "function",
                    "function": {"name": block["name"], "arguments": json.dumps(block["input"])},
                }
            )
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
    if calls:
        message["tool_calls"] = calls
    usage = answer.get("usage") or {}
    cache_read = usage.get("cache_read_input_tokens") or 0
    cache_write = usage.get("cache_creation_input_tokens") or 0
    # Anthropic's input_tokens excludes cache reads and writes; ours includes both.
    input_tokens = (usage.get("input_tokens") or 0) + cache_read + cache_write
    return BackendResult(
        message,
        STOP_REASONS.get(answer.get("stop_reason") or "end_turn", "stop"),
        Usage(input_tokens, usage.get("output_tokens") or 0, cache_read, cache_write),
    )


def _append(messages: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    """Add blocks, merging into the previous turn of the same role (Anthropic wants
    turns to alternate; several tool results form one user turn)."""
    if not blocks:
        blocks = [{"type": "text", "text": "(empty)"}]
    if messages and messages[-1]["role"] == role:
        messages[-1]["content"].extend(blocks)
    else:
        messages.append({"role": role, "content": list(blocks)})


def _content_blocks(content: str | list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    blocks = []
    for part in content:
        if part.get("type") == "text":
            blocks.append({"type": "text", "text": part.get("text", "")})
        elif part.get("type") == "image_url":
            blocks.append(_image_block(part["image_url"]["url"]))
    return blocks


def _image_block(url: str) -> dict[str, Any]:
    if url.startswith("data:"):
        header, _, data = url.partition(",")
        media_type = header[5:].split(";")[0]
        source = {"type": "base64", "media_type": media_type, "data": data}
    else:
        source = {"type": "url", "url": url}
    return {"type": "image", "source": source}


def _arguments(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    try:
        value = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        raise UpstreamError(
            f"tool call arguments are not JSON: {arguments!r:.200}", status=400
        ) from None
    return value if isinstance(value, dict) else {"value": value}


def _tool_choice(choice: Any, parallel: bool | None) -> dict[str, Any] | None:
    if choice is None and parallel is None:
        return None
    if isinstance(choice, dict):
        result: dict[str, Any] = {"type": "tool", "name": choice["function"]["name"]}
    else:
        result = {"type": {"none": "none", "required": "any"}.get(choice or "auto", "auto")}
    if parallel is False and result["type"] != "none":
        result["disable_parallel_tool_use"] = True
    return result
