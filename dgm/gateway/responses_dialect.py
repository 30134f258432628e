"""The OpenAI Responses API (`POST /v1/responses`, `client.responses.create`) on the gateway's
wire: a request translated to Chat Completions (the one shape the call pipeline budgets,
counts and logs), the answer and its stream events translated back.

Served: `input` as text or items (messages with input_text/output_text/input_image parts,
`function_call`, `function_call_output`), `instructions`, function tools, `tool_choice`,
`max_output_tokens`, `temperature`, `top_p`, streaming. Stateless: `previous_response_id`
is refused (nothing is stored; send the whole conversation as `input`), and so are
OpenAI's hosted tools (web search, file search, computer use), which no backend here runs.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from dgm.gateway.types import LLMCallError, Usage

PASSED = ("temperature", "top_p", "parallel_tool_calls")


def to_chat_request(raw: Any) -> dict[str, Any]:
    """A Responses request as the Chat Completions request the pipeline takes."""
    if not isinstance(raw, dict):
        raise LLMCallError("request body must be a JSON object")
    if raw.get("previous_response_id"):
        raise LLMCallError(
            "previous_response_id is not served: the gateway stores no responses; "
            "send the whole conversation as `input` (items)"
        )
    chat: list[dict[str, Any]] = []
    if raw.get("instructions"):
        chat.append({"role": "system", "content": str(raw["instructions"])})
    given = raw.get("input")
    if isinstance(given, str):
        chat.append({"role": "user", "content": given})
    elif isinstance(given, list) and given:
        for index, item in enumerate(given):
            _add_item(chat, item, index)
    else:
        raise LLMCallError("invalid responses request: `input` must be text or a list of items")
    request: dict[str, Any] = {"messages": chat}
    if isinstance(raw.get("max_output_tokens"), int):
        request["max_tokens"] = raw["max_output_tokens"]
    for name in PASSED:
        if raw.get(name) is not None:
            request[name] = raw[name]
    if raw.get("tools"):
        request["tools"] = [_chat_tool(tool, i) for i, tool in enumerate(raw["tools"])]
        choice = raw.get("tool_choice")
        if isinstance(choice, dict) and choice.get("type") == "function":
            request["tool_choice"] = {"type": "function", "function": {"name": choice["name"]}}
        elif choice in ("auto", "none", "required"):
            request["tool_choice"] = choice
    return request


def _add_item(chat: list[dict[str, Any]], item: Any, index: int) -> None:
    if not isinstance(item, dict):
        raise LLMCallError(f"invalid responses request: `input.{index}` must be an object")
    kind = item.get("type", "message")
    if kind == "message":
        role = item.get("role")
        if role not in ("user", "assistant", "system", "developer"):
            raise LLMCallError(f"invalid responses request: `input.{index}.role` {role!r}")
        chat.append({"role": "system" if role == "developer" else role,
                     "content": _content(item.get("content"), role, index)})  # fmt: skip
    elif kind == "function_call":
        call = {"id": str(item.get("call_id")), "type": "function",
                "function": {"name": str(item.get("name")),
                             "arguments": str(item.get("arguments") or "{}")}}  # fmt: skip
        last = chat[-1] if chat else None
        if last is not None and last["role"] == "assistant":  # parallel calls: one turn
            last.setdefault("tool_calls", []).append(call)
        else:
            chat.append({"role": "assistant", "content": None, "tool_calls": [call]})
    elif kind == "function_call_output":
        output = item.get("output")
        text = output if isinstance(output, str) else _text(output)
        chat.append({"role": "tool", "tool_call_id": str(item.get("call_id")), "content": text})
    elif kind in ("reasoning", "item_reference"):
        return  # nothing a Chat Completions model reads
    else:
        raise LLMCallError(
            f"invalid responses request: `input.{index}` is a {kind!r} item; the gateway "
            "serves messages, function_call and function_call_output"
        )


def _content(content: Any, role: str, index: int) -> Any:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise LLMCallError(f"invalid responses request: `input.{index}.content`")
    if role != "user":
        return _text(content)
    parts: list[dict[str, Any]] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("input_text", "output_text", "text"):
            parts.append({"type": "text", "text": str(part.get("text", ""))})
        elif kind == "input_image" and part.get("image_url"):
            parts.append({"type": "image_url", "image_url": {"url": part["image_url"]}})
    return parts


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(str(p.get("text", "")) for p in content or [] if isinstance(p, dict))


def _chat_tool(tool: Any, index: int) -> dict[str, Any]:
    if not isinstance(tool, dict) or tool.get("type") != "function" or not tool.get("name"):
        kind = tool.get("type") if isinstance(tool, dict) else tool
        raise LLMCallError(
            f"invalid responses request: `tools.{index}` is a {kind!r} tool; the gateway "
            "serves function tools (type, name, parameters) only"
        )
    parameters = tool.get("parameters") or {"type": "object", "properties": {}}
    function = {"name": tool["name"], "description": tool.get("description") or "",
                "parameters": parameters}  # fmt: skip
    return {"type": "function", "function": function}


def to_response(answer: dict[str, Any], usage: Usage, raw: dict[str, Any]) -> dict[str, Any]:
    """A Chat Completion answer (one choice) as a Responses API `response` object."""
    choice = answer["choices"][0]
    message = choice["message"]
    output: list[dict[str, Any]] = []
    if message.get("content"):
        output.append({"type": "message", "id": f"msg_{uuid.uuid4().hex[:24]}",
                       "status": "completed", "role": "assistant",
                       "content": [{"type": "output_text", "text": message["content"],
                                    "annotations": []}]})  # fmt: skip
    for call in message.get("tool_calls") or []:
        output.append({"type": "function_call", "id": f"fc_{uuid.uuid4().hex[:24]}",
                       "call_id": call["id"], "name": call["function"]["name"],
                       "arguments": call["function"].get("arguments") or "{}",
                       "status": "completed"})  # fmt: skip
    cut = choice.get("finish_reason") == "length"
    return {
        "id": f"resp_{uuid.uuid4().hex[:24]}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "incomplete" if cut else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if cut else None,
        "error": None,
        "model": answer.get("model", ""),
        "instructions": raw.get("instructions"),
        "output": output,
        "parallel_tool_calls": raw.get("parallel_tool_calls", True),
        "tool_choice": raw.get("tool_choice", "auto"),
        "tools": raw.get("tools") or [],
        "temperature": raw.get("temperature"),
        "top_p": raw.get("top_p"),
        "max_output_tokens": raw.get("max_output_tokens"),
        "metadata": raw.get("metadata") or {},
        "text": {"format": {"type": "text"}},
        "usage": {
            "input_tokens": usage.input_tokens,
            "input_tokens_details": {"cached_tokens": usage.cached_tokens},
            "output_tokens": usage.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage.input_tokens + usage.output_tokens,
        },
    }


def stream_events(response: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The response as the Responses API's server-sent events, sent once it is complete
    (the gateway counts a whole answer before it settles the budget)."""
    events: list[tuple[str, dict[str, Any]]] = []

    def emit(kind: str, **data: Any) -> None:
        events.append((kind, {"type": kind, "sequence_number": len(events), **data}))

    opening = response | {"status": "in_progress", "output": [], "usage": None}
    emit("response.created", response=opening)
    emit("response.in_progress", response=opening)
    for index, item in enumerate(response["output"]):
        at = {"output_index": index, "item_id": item["id"]}
        if item["type"] == "message":
            emit("response.output_item.added", output_index=index,
                 item=item | {"status": "in_progress", "content": []})  # fmt: skip
            part = item["content"][0]
            emit("response.content_part.added", **at, content_index=0,
                 part=part | {"text": ""})  # fmt: skip
            emit("response.output_text.delta", **at, content_index=0, delta=part["text"],
                 logprobs=[])  # fmt: skip
            emit("response.output_text.done", **at, content_index=0, text=part["text"],
                 logprobs=[])  # fmt: skip
            emit("response.content_part.done", **at, content_index=0, part=part)
        else:
            emit("response.output_item.added", output_index=index,
                 item=item | {"status": "in_progress", "arguments": ""})  # fmt: skip
            emit("response.function_call_arguments.delta", **at, delta=item["arguments"])
            emit("response.function_call_arguments.done", **at, arguments=item["arguments"],
                 name=item["name"])  # fmt: skip
        emit("response.output_item.done", output_index=index, item=item)
    done = "response.incomplete" if response["status"] == "incomplete" else "response.completed"
    emit(done, response=response)
    return events


def event_bytes(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()
