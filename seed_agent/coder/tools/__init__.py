"""The agent's tools: one module per tool, each with a SPEC and a run(args, ctx) function.

To add a tool, write a module like the others (SPEC: an OpenAI function schema;
run: returns the text the model sees, raises ToolError for mistakes the model can fix)
and add it to TOOLS below. Runtime tools (runtime.py: kept in the codebase's `tools/`
or made with `make_tool` during the run) come after these, from the ToolContext.
"""

from __future__ import annotations

import json
from typing import Dict, List, Optional

from . import bash, create, finish, insert, make_tool, str_replace, view
from .base import FinishRun, ToolContext, ToolError, check_args

TOOLS = [bash, view, create, str_replace, insert, make_tool, finish]


def by_name(ctx: Optional[ToolContext] = None) -> Dict[str, object]:
    named = {tool.SPEC["name"]: tool for tool in TOOLS}
    if ctx is not None:  # runtime tools never shadow a built-in one
        named.update({k: v for k, v in ctx.runtime_tools.items() if k not in named})
    return named


def schemas(ctx: Optional[ToolContext] = None) -> List[Dict]:
    """The `tools` field of a Chat Completions request."""
    return [{"type": "function", "function": tool.SPEC} for tool in by_name(ctx).values()]


class ToolResult:
    def __init__(self, output: str, ok: bool, finish_summary: Optional[str] = None) -> None:
        self.output = output
        self.ok = ok
        self.finish_summary = finish_summary  # set when the model called `finish`


def call(name: str, raw_arguments: str, ctx: ToolContext) -> ToolResult:
    """Run one tool call from the model. Mistakes become error text for the model, never crashes."""
    tools = by_name(ctx)
    if name not in tools:
        return ToolResult(
            f"Error: unknown tool '{name}'. Available tools: {', '.join(tools)}", False
        )
    try:
        args = json.loads(raw_arguments or "{}")
    except ValueError as exc:
        return ToolResult(f"Error: the arguments are not valid JSON ({exc}). Try again.", False)
    if not isinstance(args, dict):
        return ToolResult("Error: the arguments must be a JSON object. Try again.", False)
    try:
        check_args(tools[name].SPEC, args)
        return ToolResult(tools[name].run(args, ctx), True)
    except FinishRun as done:
        return ToolResult("Finished.", True, finish_summary=done.summary)
    except ToolError as exc:
        return ToolResult(f"Error: {exc}", False)
    except Exception as exc:  # a tool bug must not end the run; the model can work around it
        return ToolResult(f"Error: {name} failed: {type(exc).__name__}: {exc}", False)
