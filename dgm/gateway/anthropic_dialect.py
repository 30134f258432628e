"""The Anthropic Messages API on the gateway's wire: requests translated to Chat Completions
(the one shape the call pipeline budgets, counts and logs), answers and stream events
translated back.

Whatever the backend, an Anthropic client (the `anthropic` SDK, litellm, Claude-based
agents) gets Messages answers with Anthropic usage: `input_tokens` without the cache,
`cache_read_input_tokens`, `cache_creation_input_tokens`. A client's own `cache_control`
marks are dropped: the gateway places its breakpoints itself (backends/prompt_cache.py).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from dgm.gateway.types import LLMCallError, Usage

FINISH_TO_STOP = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def to_chat_request(raw: Any) -> dict[str, Any]:
    """A Messages API request as the Chat Completions request the pipeline takes."""
    if not isinstance(raw, dict):
        raise LLMCallError("request body must be a JSON object")
    messages = raw.get("messages")
    if not isinstance(messages, list) or not messages:
        raise LLMCallError("invalid messages request: `messages` must be a non-empty list")
    if not isinstance(raw.get("max_tokens"), int) or raw["max_tokens"] <= 0:
        raise LLMCallError("invalid messages request: `max_tokens` must be a positive integer")
    chat: list[dict[str, Any]] = []
    system = _text(raw.get("system"))
    if system:
        chat.append({"role": "system", "content": system})
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            raise LLMCallError(
                f"invalid messages request: `messages.{i}.role` must be user or assistant"
            )
        chat.extend(_chat_messages(message, i))
    request: dict[str, Any] = {"messages": chat, "max_tokens": raw["max_tokens"]}
    for name in ("temperature", "top_p", "stream"):
        if raw.get(name) is not None:
            request[name] = raw[name]
    if raw.get("stop_sequences"):
        request["stop"] = list(raw["stop_sequences"])
    if raw.get("tools"):
        request["tools"] = [_chat_tool(tool, i) for i, tool in enumerate(raw["tools"])]
        choice = raw.get("tool_choice")
        if isinstance(choice, dict):
            kind = choice.get("type")
            if kind == "tool":
                request["tool_choice"] = {"type": "function", "function": {"name": choice["name"]}}
            elif kind in ("any", "none", "auto"):
                request["tool_choice"] = {"any": "required"}.get(kind, kind)
            if choice.get("disable_parallel_tool_use"):
                request["parallel_tool_calls"] = False
    return request


def _chat_messages(message: dict[str, Any], index: int) -> list[dict[str, Any]]:
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(blocks, list):
        raise LLMCallError(
            f"invalid messages request: `messages.{index}.content` must be text or a list"
        )
    parts: list[dict[str, Any]] = []
    tool_uses: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            parts.append({"type": "text", "text": str(block.get("text", ""))})
        elif kind == "image":
            parts.append({"type": "image_url", "image_url": {"url": _image_url(block)}})
        elif kind == "tool_use":
            tool_uses.append(
                {
                    "id": str(block.get("id")),
                    "type": "function",
                    "function": {
                        "name": str(block.get("name")),
                        "arguments": json.dumps(block.get("input") or {}),
                    },
                }
            )
        elif kind == "tool_result":
            text = _text(block.get("content"))
            if block.get("is_error"):
                text = f"[tool error] {text}"
            results.append(
                {"role": "tool", "tool_call_id": str(block.get("tool_use_id")), "content": text}
            )
        # thinking, redacted_thinking, documents...: nothing a Chat Completions model reads
    if message["role"] == "assistant":
        text = "".join(p["text"] for p in parts if p["type"] == "text")
        out: dict[str, Any] = {"role": "assistant", "content": text or None}
        if tool_uses:
            out["tool_calls"] = tool_uses
        return [out]
    # Tool results answer the previous assistant turn, so they come first.
    return results + ([{"role": "user", "content": parts}] if parts else [])


def _chat_tool(tool: Any, index: int) -> dict[str, Any]:
    if not isinstance(tool, dict) or not tool.get("name"):
        raise LLMCallError(f"invalid messages request: `tools.{index}.name` is required")
    if tool.get("type") not in (None, "custom"):
        raise LLMCallError(
            f"tool {tool['name']!r} is an Anthropic server tool ({tool['type']}): "
            "the gateway serves only client tools (name, description, input_schema)"
        )
    function = {
        "name": tool["name"],
        "description": tool.get("description", ""),
        "parameters": tool.get("input_schema") or {"type": "object", "properties": {}},
    }
    return {"type": "function", "function": function}


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(
        str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
    )


def _image_url(block: dict[str, Any]) -> str:
    source = block.get("source") or {}
    if source.get("type") == "base64":
        return f"data:{source.get('media_type')};base64,{source.get('data')}"
    return str(source.get("url", ""))


def to_message(answer: dict[str, Any], usage: Usage) -> dict[str, Any]:
    """A Chat Completion answer (one choice) as a Messages API answer."""
    choice = answer["choices"][0]
    message = choice["message"]
    content: list[dict[str, Any]] = []
    if message.get("content"):
        content.append({"type": "text", "text": message["content"]})
    for call in message.get("tool_calls") or []:
        try:
            arguments = json.loads(call["function"].get("arguments") or "{}")
        except json.JSONDecodeError:
            arguments = {"_raw": call["function"].get("arguments")}
        content.append(
            {
                "type": "tool_use",
                "id": call["id"],
                "name": call["function"]["name"],
                "input": arguments if isinstance(arguments, dict) else {"value": arguments},
            }
        )
    stop = FINISH_TO_STOP.get(choice.get("finish_reason") or "stop", "end_turn")
    if message.get("tool_calls"):
        stop = "tool_use"
    return {
        "id": f"msg_dgm_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": answer.get("model", ""),
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": anthropic_usage(usage),
    }


def anthropic_usage(usage: Usage) -> dict[str, int]:
    """Anthropic counts input without the cache; ours counts every input token."""
    return {
        "input_tokens": usage.uncached_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_input_tokens": usage.cached_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
    }


def stream_events(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The answer as the Messages API's server-sent events, sent once it is complete
    (the gateway counts a whole answer before it settles the budget)."""
    start = message | {"content": [], "stop_reason": None}
    start["usage"] = message["usage"] | {"output_tokens": 0}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            opening = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            opening = block | {"input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            ("content_block_start", {"type": "content_block_start", "index": index,
                                     "content_block": opening}),
            ("content_block_delta", {"type": "content_block_delta", "index": index,
                                     "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]  # fmt: skip
    events += [
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                           "usage": message["usage"]}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return events


def error_body(error: LLMCallError) -> dict[str, Any]:
    """The Anthropic error shape; `budget_exceeded` keeps its own type (HTTP 402)."""
    kind = error.type
    if kind in ("invalid_request_error", "server_error", "rate_limit_exceeded"):
        kind = ERROR_TYPES.get(error.status, "api_error" if error.status >= 500 else kind)
    return {"type": "error", "error": {"type": kind, "message": error.message}}
