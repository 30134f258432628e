"""Keeping the conversation inside the model's context window.

The agent resends its whole conversation every step; on a large repository that
outgrows the model's window. Before each call, `ContextWindow.fit` returns the messages
to send: the full conversation if it fits, else one with old tool outputs (and then old
tool-call arguments) replaced by a short marker, oldest first. The system prompt, the
task and the latest turns are never touched, and the trajectory keeps everything.

Trimming goes down to `REFILL` of the budget, and what was elided stays elided, so the
sent conversation changes rarely and its prefix stays the same from step to step
(the gateway's prompt cache depends on that).

The window comes from the task file (`context_window_tokens`), else the environment
(`DGM_LLM_CONTEXT_TOKENS`), else `DEFAULT_WINDOW_TOKENS`. Sizes are estimated from
characters, on the high side; when the provider still says the prompt is too long,
`shrink` lowers the budget below what was sent and the step is retried once.
"""

from __future__ import annotations

import json
from typing import Dict, List, Mapping, Optional, Set

DEFAULT_WINDOW_TOKENS = 128_000
OUTPUT_RESERVE_TOKENS = 8_192  # the gateway's default output cap, also inside the window
CHARS_PER_TOKEN = 3  # an estimate on the high side for code and JSON
REFILL = 0.75  # after a trim, use at most this share of the budget
KEEP_RECENT_MESSAGES = 12  # never elided while anything older can be
HEAD_MESSAGES = 2  # the system prompt and the task
MARKER = "[{what} elided to fit the context window ({size} chars); run the tool again if needed]"


class ContextWindow:
    def __init__(self, window_tokens: int) -> None:
        self.window_tokens = window_tokens
        self.budget_tokens = window_tokens - min(OUTPUT_RESERVE_TOKENS, window_tokens // 4)
        self.elided: Set[int] = set()  # indices of messages sent with a marker
        self.trims = 0

    @classmethod
    def configured(cls, task: Mapping, env: Mapping[str, str]) -> ContextWindow:
        value = task.get("context_window_tokens") or env.get("DGM_LLM_CONTEXT_TOKENS")
        try:
            tokens = int(value) if value else DEFAULT_WINDOW_TOKENS
        except (TypeError, ValueError):
            tokens = DEFAULT_WINDOW_TOKENS
        return cls(max(tokens, 1024))

    def fit(self, messages: List[Dict], tools: List[Dict]) -> List[Dict]:
        """The messages to send for this step (the list given is never changed)."""
        sent = self._apply(messages)
        if estimate_tokens(sent, tools) <= self.budget_tokens:
            return sent
        self.trims += 1
        target = int(self.budget_tokens * REFILL)
        for keep in (KEEP_RECENT_MESSAGES, _latest_turn(messages)):
            for i in _elidable(messages, keep):
                if estimate_tokens(sent, tools) <= target:
                    return sent
                if i in self.elided:
                    continue
                self.elided.add(i)
                sent[i] = _elide(messages[i])
        return sent

    def shrink(self, sent: List[Dict], tools: List[Dict]) -> None:
        """The provider refused what was sent as too long: aim well below it next time."""
        self.budget_tokens = min(self.budget_tokens, int(estimate_tokens(sent, tools) * 0.7))

    def _apply(self, messages: List[Dict]) -> List[Dict]:
        return [_elide(m) if i in self.elided else m for i, m in enumerate(messages)]

    def summary(self) -> Dict:
        """For the trajectory: the window and how much of the conversation was elided."""
        return {
            "window_tokens": self.window_tokens,
            "budget_tokens": self.budget_tokens,
            "trims": self.trims,
            "elided_messages": len(self.elided),
        }


def estimate_tokens(messages: List[Dict], tools: Optional[List[Dict]] = None) -> int:
    size = len(json.dumps(messages, ensure_ascii=False))
    size += len(json.dumps(tools or [], ensure_ascii=False))
    return size // CHARS_PER_TOKEN + 4 * len(messages)


def _elidable(messages: List[Dict], keep_recent: int) -> List[int]:
    """Old messages worth eliding, oldest first: tool outputs, then tool-call arguments."""
    end = len(messages) - keep_recent
    old = range(HEAD_MESSAGES, max(end, HEAD_MESSAGES))
    outputs = [i for i in old if messages[i].get("role") == "tool"]
    calls = [i for i in old if messages[i].get("role") == "assistant"]
    return [i for i in outputs + calls if len(json.dumps(messages[i])) > 2 * len(MARKER)]


def _latest_turn(messages: List[Dict]) -> int:
    """How many messages the latest turn spans: the last model reply and what followed."""
    for back, message in enumerate(reversed(messages), start=1):
        if message.get("role") == "assistant":
            return back
    return 0


def _elide(message: Dict) -> Dict:
    if message.get("role") == "tool":
        size = len(str(message.get("content") or ""))
        return dict(message, content=MARKER.format(what="old output", size=size))
    calls = []
    for call in message.get("tool_calls") or []:
        arguments = call["function"]["arguments"]
        if len(arguments) > 200:  # keep the call's shape; its arguments must stay JSON
            marker = MARKER.format(what="arguments", size=len(arguments))
            call = dict(call, function=dict(call["function"], arguments=json.dumps({"_": marker})))
        calls.append(call)
    content = message.get("content")
    if content and len(content) > 500:
        content = MARKER.format(what="old reply", size=len(content))
    elided = dict(message, content=content)
    if calls:
        elided["tool_calls"] = calls
    return elided
