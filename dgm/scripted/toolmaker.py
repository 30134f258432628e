"""`scripted/toolmaker`: the dry-run world of runtime tools and the harvest expansion.

    dgm run --dry-run --dry-run-world toolmaker

- `solve`, easy task: the model first writes a `search_files` runtime tool with the
  agent's `make_tool`, uses it, then writes the task's reference solution;
- `solve`, hard task: succeeds only when `search_files` is offered in the FIRST request
  (a tool kept in the agent's codebase); one made during the task comes too late, so the
  model makes it, then gives up and the hidden tests fail;
- `diagnose` / `self_improve`: a cosmetic change (a line in the system prompt) that helps
  on no task.
So the seed scores 2/4 and leaves `search_files` in the output of the two tasks it
solved; a harvest expansion keeps it in the child's `tools/` with no LLM call, and the
child scores 4/4 on the real hidden tests. Stateless: every answer is a pure function
of the request (the conversation so far and the tools offered).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dgm.scripted.agent_drivers import (
    Message,
    call,
    calls_made,
    failed,
    last_tool_result,
    say,
    tool_names,
)
from dgm.scripted.dry_run import HARD_TASKS, DryRunScript, reference_files

SCRIPT_NAME = "toolmaker"
TOOL = "search_files"
SMOKE_FILE = "x = 1\ndef target():\n    pass\n"
PROMPT_NOTE = "Before you finish, read the task statement once more."


def search_tool_arguments() -> dict[str, Any]:
    """The `make_tool` call that writes search_files (always the same: one content hash)."""
    source = (Path(__file__).parent / "script_files" / "search_runtime_tool.py.txt").read_text()
    return {
        "name": TOOL,
        "description": "Search the text files under `path` (default: the working directory) "
        "for lines matching the Python regular expression `pattern`; prints path:line: text.",
        "parameters": {
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "A Python regular expression."},
                "path": {"type": "string", "description": "Directory or file to search."},
            },
            "required": ["pattern"],
        },
        "source": source,
        "smoke": {
            "args": {"pattern": r"def \w+"},
            "expect": "pkg/m.py:2: def target():",
            "files": {"pkg/m.py": SMOKE_FILE},
        },
    }


class ToolmakerScript:
    """Stateless, so parallel jobs and retries are safe."""

    def __init__(self, task_lookup: Any, hard_tasks: frozenset[str] = HARD_TASKS) -> None:
        self.task_lookup = task_lookup
        self.hard = DryRunScript(task_lookup, hard_tasks)  # the same hard tasks

    def __call__(self, request: Any, context: Any = None) -> Message:
        binding = getattr(context, "binding", None)
        role = getattr(binding, "role", None)
        if role == "diagnose":
            return say(json.dumps(diagnosis()))
        if role == "self_improve":
            return _cosmetic_edit(request)
        task_id = getattr(binding, "task_id", None)
        task = self.task_lookup(task_id) if task_id else None
        files = reference_files(task) if task else {}
        return solve(request, files, hard=bool(task and self.hard.is_hard(task)))


def solve(request: Any, files: dict[str, str], hard: bool) -> Message:
    if failed(last_tool_result(request)):
        return call(request, "finish", summary=f"giving up: {last_tool_result(request)}")
    done = calls_made(request)
    made_now = any(n == "make_tool" and a.get("name") == TOOL for n, a in done)
    offered = tool_names(request)
    if TOOL not in offered:
        if "make_tool" in offered and not made_now:
            made = call(request, "make_tool")  # its arguments have a `name`: set them here
            made["tool_calls"][0]["function"]["arguments"] = json.dumps(search_tool_arguments())
            return made
        if hard:
            return call(request, "finish", summary=f"I would need a `{TOOL}` tool for this.")
    elif hard and made_now:
        return call(request, "finish", summary=f"`{TOOL}` came too late: I needed it at once.")
    elif not any(n == TOOL for n, _ in done):
        return call(request, TOOL, pattern=r"def |class ", path=".")
    pending = [p for p in files if ("create", p) not in {(n, a.get("path")) for n, a in done}]
    if pending:
        return call(request, "create", path=pending[0], file_text=files[pending[0]])
    return call(request, "finish", summary=f"wrote {len(files)} file(s)")


def diagnosis() -> dict[str, str]:
    return {
        "log_summarization": "The agent stopped without re-reading what was asked.",
        "potential_improvements": "A reminder in the system prompt.",
        "improvement_proposal": "Remind the agent to re-read the task before finishing.",
        "implementation_suggestion": "Append one sentence to prompts/system.txt.",
        "problem_description": f"Add this sentence to the agent's system prompt: {PROMPT_NOTE}",
    }


def _cosmetic_edit(request: Any) -> Message:
    if not calls_made(request):
        return call(request, "bash", command=f"printf '\\n{PROMPT_NOTE}\\n' >> prompts/system.txt")
    return call(request, "finish", summary="added a reminder to the system prompt")
