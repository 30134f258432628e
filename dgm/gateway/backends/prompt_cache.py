"""Where to put Anthropic prompt-cache breakpoints (`cache_control`) in a Messages request.

Anthropic caches a request's prefix (tools, then system, then messages) up to each
block marked `cache_control`; a later request starting with the same blocks reads that
prefix at a tenth of the input price instead of paying for it again. At most 4 marks
are allowed per request. An agent resends its whole conversation every step, so the
gateway marks, in this order of value:

1. the end of the system prompt (or of the tools, without one): shared by every call
   of every job that runs the same agent;
2. the latest turn: everything sent so far is written to the cache for the next call;
3. the turn before it: what the previous call wrote, so this call reads it;
4. the first user turn (the task): still a hit after an agent trims old turns to fit
   its context window, which changes everything after it.

Marks never change what the model sees. A prefix shorter than the model's minimum
(1024 tokens for Sonnet) is simply not cached, at no extra cost.
"""

from __future__ import annotations

import copy
from typing import Any

MAX_BREAKPOINTS = 4
EPHEMERAL: dict[str, str] = {"type": "ephemeral"}


def place_breakpoints(params: dict[str, Any]) -> dict[str, Any]:
    """A copy of Messages API `params` with cache breakpoints on its stable prefix."""
    params = copy.deepcopy(params)
    for mark in _candidates(params):
        if count_breakpoints(params) >= MAX_BREAKPOINTS:
            break
        mark(params)  # a block marked already stays marked once: no slot is lost
    return params


def count_breakpoints(params: dict[str, Any]) -> int:
    """How many `cache_control` marks a request carries (tools, system, messages)."""
    blocks = list(params.get("tools") or [])
    if isinstance(params.get("system"), list):
        blocks += params["system"]
    for message in params.get("messages") or []:
        if isinstance(message.get("content"), list):
            blocks += message["content"]
    return sum(1 for block in blocks if isinstance(block, dict) and block.get("cache_control"))


def _candidates(params: dict[str, Any]) -> list[Any]:
    """Marking functions, most valuable first, each at a distinct position."""
    marks: list[Any] = []
    if params.get("system"):
        marks.append(_mark_system)
    elif params.get("tools"):
        marks.append(_mark_last_tool)
    messages = params.get("messages") or []
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    last = len(messages) - 1
    before_last = [i for i in users if i < last]
    for index in dict.fromkeys(
        [last, before_last[-1] if before_last else None, users[0] if users else None]
    ):
        if index is not None and index >= 0:
            marks.append(_message_marker(index))
    return marks


def _mark_system(params: dict[str, Any]) -> None:
    system = params["system"]
    if isinstance(system, str):
        params["system"] = [{"type": "text", "text": system, "cache_control": dict(EPHEMERAL)}]
    else:
        system[-1]["cache_control"] = dict(EPHEMERAL)


def _mark_last_tool(params: dict[str, Any]) -> None:
    params["tools"][-1]["cache_control"] = dict(EPHEMERAL)


def _message_marker(index: int) -> Any:
    def mark(params: dict[str, Any]) -> None:
        message = params["messages"][index]
        content = message.get("content")
        if isinstance(content, str):
            message["content"] = content = [{"type": "text", "text": content}]
        if content:
            content[-1]["cache_control"] = dict(EPHEMERAL)

    return mark
