"""OpenAI Chat Completions on the wire: validating requests, building answers and chunks."""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dgm.gateway.types import LLMCallError, Usage

# Request fields that do not change what the model answers; replay ignores them.
VOLATILE_FIELDS = ("model", "stream", "stream_options", "user", "metadata")


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow")


class _Function(_Loose):
    name: str = Field(min_length=1)


class _Tool(_Loose):
    type: Literal["function"]
    function: _Function


class _ToolCallFunction(_Loose):
    name: str
    arguments: str


class _ToolCall(_Loose):
    id: str
    type: Literal["function"] = "function"
    function: _ToolCallFunction


class _Message(_Loose):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None
    tool_calls: list[_ToolCall] | None = None
    tool_call_id: str | None = None


class ChatRequest(_Loose):
    """The fields the gateway relies on; everything else passes through untouched."""

    model: str | None = None
    messages: list[_Message] = Field(min_length=1)
    tools: list[_Tool] | None = None
    max_tokens: int | None = Field(default=None, gt=0)
    max_completion_tokens: int | None = Field(default=None, gt=0)
    n: Literal[1] | None = None
    stream: bool | None = False


def validate_request(raw: Any) -> ChatRequest:
    """Check an agent's request; a malformed one is a 400 naming the bad field."""
    if not isinstance(raw, dict):
        raise LLMCallError("request body must be a JSON object")
    try:
        request = ChatRequest.model_validate(raw)
    except ValidationError as exc:
        problems = [
            f"`{'.'.join(str(p) for p in err['loc']) or 'body'}`: {err['msg']}"
            for err in exc.errors()[:5]
        ]
        raise LLMCallError("invalid chat completion request: " + "; ".join(problems)) from None
    for i, message in enumerate(request.messages):
        if message.role == "tool" and not message.tool_call_id:
            raise LLMCallError(
                f"invalid chat completion request: `messages.{i}.tool_call_id` "
                "is required on a tool message"
            )
    return request


def output_cap(request: ChatRequest, default: int) -> int:
    """The most output tokens the call may produce (what budgets reserve for)."""
    return request.max_completion_tokens or request.max_tokens or default


def estimate_input_tokens(raw: dict[str, Any]) -> int:
    """A deliberately high estimate of the prompt size (about 3 bytes a token), used to
    reserve budget before the provider has counted."""
    size = len(json.dumps(raw.get("messages", []), ensure_ascii=False).encode())
    size += len(json.dumps(raw.get("tools") or [], ensure_ascii=False).encode())
    return size // 3 + 8 * len(raw.get("messages", [])) + 16


def request_key(raw: dict[str, Any]) -> str:
    """A stable key for 'the same request' (used by replay)."""
    kept = {k: v for k, v in raw.items() if k not in VOLATILE_FIELDS}
    canonical = json.dumps(kept, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def message_text(content: str | list[dict[str, Any]] | None) -> str:
    """The text of a message's content, whether a string or a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def completion(
    model: str,
    message: dict[str, Any],
    finish_reason: str,
    usage: Usage,
) -> dict[str, Any]:
    """A Chat Completion answer with one choice."""
    return {
        "id": f"chatcmpl-dgm-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": usage.openai_dict(),
    }


def stream_chunks(answer: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """The answer re-cut as `chat.completion.chunk`s for clients that asked to stream.

    The gateway always calls upstream without streaming (it must count the whole
    answer before settling the budget), so the chunks come at once at the end.
    """
    choice = answer["choices"][0]
    message = choice["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(message["tool_calls"])]
    head = {k: answer[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    chunks = [
        head | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        head | {"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
    ]
    if include_usage:
        chunks.append(head | {"choices": [], "usage": answer.get("usage")})
    return chunks
