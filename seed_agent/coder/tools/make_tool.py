"""Write a new tool during a task: a Python script plus its JSON schema.

The tool is checked (name, schema, its smoke run), saved at once to
`<output dir>/tools/<name>/` (the harness keeps it; a later agent may adopt it into its
codebase) and offered to the model from the next step on.
"""

from __future__ import annotations

import json
import os
import shutil
from typing import Dict

from . import runtime
from .base import ToolContext, ToolError, write_text

SPEC = {
    "name": "make_tool",
    "description": (
        "Create a new tool you can call from the next step on. `source` is a Python 3 "
        "script (standard library only) that reads its arguments as a JSON object on stdin "
        "and prints its result on stdout (exit 0; another exit code is an error). It runs "
        f"in the working directory, killed after {runtime.TIMEOUT_S} s. `smoke` checks it "
        "before it is offered: the script runs with smoke.args in an empty scratch folder "
        "holding smoke.files, and its output must contain smoke.expect. Make tools that "
        "save you steps (searching, summarising, checking), general enough to reuse."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "lowercase_with_underscores"},
            "description": {"type": "string", "description": "What the tool does."},
            "parameters": {"type": "object", "description": "JSON schema of its arguments."},
            "source": {"type": "string", "description": "The Python script."},
            "smoke": {
                "type": "object",
                "description": '{"args": {...}, "expect": "substring", "files": {"a.py": "..."}}',
            },
        },
        "required": ["name", "description", "parameters", "source", "smoke"],
    },
}


def run(args: Dict, ctx: ToolContext) -> str:
    meta = runtime.check_meta({k: args[k] for k in ("name", "description", "parameters", "smoke")})
    name = meta["name"]
    if name in ctx.builtin_names or name in ctx.kept_names:
        raise ToolError(f"a tool named {name!r} exists already; choose another name")
    if len(args["source"]) > runtime.SOURCE_LIMIT or len(json.dumps(meta)) > runtime.SPEC_LIMIT:
        raise ToolError("the tool is too large")
    if ctx.tools_dir is None:
        raise ToolError("this run has no output folder to save tools in")
    folder = os.path.join(ctx.tools_dir, name)
    staging = folder + ".new"
    shutil.rmtree(staging, ignore_errors=True)
    write_text(os.path.join(staging, "tool.json"), json.dumps(meta, indent=1, sort_keys=True))
    write_text(os.path.join(staging, "tool.py"), args["source"])
    problem = runtime.smoke(staging, meta, ctx)
    if problem is not None:
        shutil.rmtree(staging, ignore_errors=True)
        raise ToolError(f"the smoke check of {name} failed, so it was not made: {problem}")
    shutil.rmtree(folder, ignore_errors=True)  # a tool remade in this run replaces the old
    os.rename(staging, folder)
    ctx.runtime_tools[name] = runtime.RuntimeTool(folder, meta)
    if ctx.on_tool_made is not None:
        ctx.on_tool_made(name)
    return f"Made tool {name}; its smoke check passed. You can call it from your next step."
