"""The scripted backend: a deterministic stand-in for an LLM, for tests and dry runs.

A script is a callable `(request: dict, ctx: CallContext) -> reply`, registered by name
with `register_script`, or a JSON rules file (`scripted/@path/to/rules.json`). A reply
is one of:

- a string: the assistant's text;
- a dict `{"content": ..., "tool_calls": [{"name": ..., "arguments": {...}}], "usage":
  {"input_tokens": .., "output_tokens": .., "cached_tokens": ..}, "finish_reason": ..}`
  (every key optional; tool calls may also be full OpenAI tool-call objects);
- a full Chat Completion dict (has `choices`).

A script may raise `UpstreamError` to play a failing provider. Without explicit usage,
tokens are estimated from the text sizes, so budgets still move in dry runs.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dgm.errors import ConfigError
from dgm.gateway.backends.base import BackendResult, CallContext
from dgm.gateway.faults import raise_if_down
from dgm.gateway.protocol import estimate_input_tokens, message_text
from dgm.gateway.types import UpstreamError, Usage

Script = Callable[[dict[str, Any], CallContext], Any]

_SCRIPTS: dict[str, Script] = {}


def register_script(name: str, fn: Script) -> None:
    """Make `scripted/<name>` answer with `fn` (replacing any script of that name)."""
    if not name or "/" in name or name.startswith("@"):
        raise ValueError(f"bad script name {name!r}")
    _SCRIPTS[name] = fn


def registered_scripts() -> list[str]:
    return sorted(_SCRIPTS)


def _echo(request: dict[str, Any], ctx: CallContext) -> str:
    """Built-in: repeat the last message's text."""
    return "echo: " + message_text(request["messages"][-1].get("content"))


register_script("echo", _echo)


class ScriptedBackend:
    def __init__(self, name: str, script: Script) -> None:
        self.name = name
        self._script = script

    @classmethod
    def from_spec(cls, spec: str) -> ScriptedBackend:
        """`name` of a registered script, or `@path` of a rules file."""
        if spec.startswith("@"):
            return cls(spec, RulesScript.load(Path(spec[1:])))
        if spec not in _SCRIPTS:
            raise ConfigError(
                f"no scripted model named {spec!r}",
                f"known scripts: {', '.join(registered_scripts())}; or use "
                "`scripted/@path/to/rules.json`",
            )
        return cls(spec, _SCRIPTS[spec])

    async def complete(self, request: dict[str, Any], ctx: CallContext) -> BackendResult:
        raise_if_down()  # a simulated provider outage (dry runs, soak tests)
        reply = self._script(request, ctx)
        if inspect.isawaitable(reply):
            reply = await reply
        return reply_to_result(reply, request, ctx)

    async def close(self) -> None:
        return None


def reply_to_result(reply: Any, request: dict[str, Any], ctx: CallContext) -> BackendResult:
    """Normalise any of the accepted reply shapes (see module doc)."""
    if isinstance(reply, str):
        reply = {"content": reply}
    if not isinstance(reply, dict):
        raise TypeError(f"script returned {type(reply).__name__}; expected str or dict")
    if "choices" in reply:  # a full completion
        choice = reply["choices"][0]
        reply = {
            **choice["message"],
            "finish_reason": choice.get("finish_reason"),
            "usage": reply.get("usage"),
        }
    calls = [_tool_call(call, ctx, i) for i, call in enumerate(reply.get("tool_calls") or [])]
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
    if calls:
        message["tool_calls"] = calls
    finish = reply.get("finish_reason") or ("tool_calls" if calls else "stop")
    return BackendResult(message, finish, _usage(reply.get("usage"), message, request, ctx))


def _tool_call(call: dict[str, Any], ctx: CallContext, i: int) -> dict[str, Any]:
    if "function" in call:
        fn = call["function"]
        name, arguments = fn["name"], fn.get("arguments", "{}")
    else:
        name, arguments = call["name"], call.get("arguments", {})
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    # Deterministic ids, so a rerun sends byte-identical follow-up requests (replay keys).
    call_id = call.get("id") or f"call_{ctx.call_index}_{i}"
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _usage(
    given: dict[str, Any] | None,
    message: dict[str, Any],
    request: dict[str, Any],
    ctx: CallContext,
) -> Usage:
    if given:
        return Usage(
            input_tokens=int(given.get("input_tokens", given.get("prompt_tokens", 0))),
            output_tokens=int(given.get("output_tokens", given.get("completion_tokens", 0))),
            cached_tokens=int(given.get("cached_tokens", 0)),
            cache_write_tokens=int(given.get("cache_write_tokens", 0)),
        )
    out_text = (message.get("content") or "") + json.dumps(message.get("tool_calls") or [])
    return Usage(
        input_tokens=estimate_input_tokens(request) // 2,
        output_tokens=min(ctx.max_output_tokens, len(out_text) // 4 + 1),
    )


class RulesScript:
    """A script written as data: the first rule whose `when` matches gives the reply.

    ```json
    {"rules": [
       {"when": {"role": "diagnose"}, "reply": "Make the agent run the tests."},
       {"when": {"last_message": "file (\\\\S+) is missing", "has_tool": "bash"},
        "reply": {"tool_calls": [{"name": "bash", "arguments": {"command": "touch $1"}}]}},
       {"when": {"turn": 0}, "reply": {"content": "Let me look."}}
     ],
     "default": "done"}
    ```
    `when` keys (all must hold): `role` (job role), `turn` (assistant messages so far),
    `last_message` (regex searched in the last message's text; `$1`.. in the reply are
    its groups), `last_role` (`user`, `tool`, ...), `has_tool` (a tool offered by name).
    """

    CONDITIONS = {"role", "turn", "last_message", "last_role", "has_tool"}

    def __init__(self, rules: list[dict[str, Any]], default: Any, source: str) -> None:
        self.rules = rules
        self.default = default
        self.source = source

    @classmethod
    def load(cls, path: Path) -> RulesScript:
        if not path.is_file():
            raise ConfigError(f"scripted rules file {path} does not exist", "check the path")
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise ConfigError(f"scripted rules file {path} is not valid JSON: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("rules", []), list):
            raise ConfigError(f"{path}: expected an object with a `rules` list")
        rules = data.get("rules", [])
        for i, rule in enumerate(rules):
            unknown = set(rule.get("when", {})) - cls.CONDITIONS
            if "reply" not in rule or unknown:
                raise ConfigError(
                    f"{path}: rule {i} needs a `reply` and only these `when` keys: "
                    f"{', '.join(sorted(cls.CONDITIONS))} (got {sorted(unknown) or 'no reply'})"
                )
            if "last_message" in rule.get("when", {}):
                try:
                    re.compile(rule["when"]["last_message"])
                except re.error as exc:
                    raise ConfigError(f"{path}: rule {i}: bad regex: {exc}") from None
        return cls(rules, data.get("default"), str(path))

    def __call__(self, request: dict[str, Any], ctx: CallContext) -> Any:
        messages = request["messages"]
        last = messages[-1]
        facts = {
            "role": ctx.binding.role,
            "turn": sum(m.get("role") == "assistant" for m in messages),
            "last_role": last.get("role"),
            "tools": {t["function"]["name"] for t in request.get("tools") or []},
        }
        text = message_text(last.get("content"))
        for rule in self.rules:
            groups = self._match(rule.get("when", {}), facts, text)
            if groups is not None:
                return _substitute(rule["reply"], groups)
        if self.default is not None:
            return self.default
        raise UpstreamError(
            f"scripted rules {self.source}: no rule matches (role={facts['role']}, "
            f"turn={facts['turn']}, last message {text[:80]!r})",
            status=400,
        )

    @staticmethod
    def _match(when: dict[str, Any], facts: dict[str, Any], text: str) -> list[str] | None:
        for key in ("role", "turn", "last_role"):
            if key in when and when[key] != facts[key]:
                return None
        if "has_tool" in when and when["has_tool"] not in facts["tools"]:
            return None
        if "last_message" in when:
            found = re.search(when["last_message"], text)
            if not found:
                return None
            return [found.group(0), *(g or "" for g in found.groups())]
        return []


def _substitute(value: Any, groups: list[str]) -> Any:
    if isinstance(value, str):
        return re.sub(
            r"\$(\d+)", lambda m: groups[int(m[1])] if int(m[1]) < len(groups) else m[0], value
        )
    if isinstance(value, list):
        return [_substitute(v, groups) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, groups) for k, v in value.items()}
    return value
