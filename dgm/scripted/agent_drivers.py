"""Scripted models that drive real agents through the gateway's `scripted` backend.

A script is a pure function of the request: it reads the conversation so far (the task,
the tools offered, the last tool result) and picks the next tool call, the way a real
model would. Being stateless, one script serves parallel jobs and survives retries.
Scripts return an assistant *message* (`{"role": "assistant", "content", "tool_calls"}`);
the gateway's scripted backend wraps it into a Chat Completions body.

`CapabilityScript` is the end-to-end double for the meta loop: task answers succeed only
if the agent offers a tool the seed lacks, and self-improvement answers add that tool to
the agent through the agent's own edit tools.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

Message = dict[str, Any]

# --- reading the request -------------------------------------------------------------


def as_dict(request: Any) -> dict[str, Any]:
    """The request as plain JSON data (the gateway may hand over a pydantic model)."""
    if hasattr(request, "model_dump"):
        return request.model_dump(exclude_none=True)
    return request


def task_text(request: Any) -> str:
    """The first user message: the agent's rendering of the task."""
    for message in as_dict(request)["messages"]:
        if message["role"] == "user":
            return str(message.get("content") or "")
    return ""


def tool_names(request: Any) -> set[str]:
    return {tool["function"]["name"] for tool in as_dict(request).get("tools") or []}


def tool_results(request: Any) -> list[str]:
    return [
        str(m.get("content") or "") for m in as_dict(request)["messages"] if m["role"] == "tool"
    ]


def last_tool_result(request: Any) -> str | None:
    results = tool_results(request)
    return results[-1] if results else None


def calls_made(request: Any) -> list[tuple[str, dict[str, Any]]]:
    """(tool name, arguments) of every tool call the assistant has made so far."""
    made = []
    for message in as_dict(request)["messages"]:
        for call in message.get("tool_calls") or []:
            try:
                args = json.loads(call["function"]["arguments"] or "{}")
            except ValueError:
                args = {}
            made.append((call["function"]["name"], args))
    return made


# --- answering ----------------------------------------------------------------------


def call(request: Any, name: str, **arguments: Any) -> Message:
    """An assistant message calling one tool; its id is unique within the conversation."""
    call_id = f"call_{len(as_dict(request)['messages'])}"
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


def say(text: str) -> Message:
    return {"role": "assistant", "content": text}


def failed(result: str | None) -> bool:
    """Whether a tool result reports a mistake (the seed agent starts those with Error:)."""
    return result is not None and result.startswith("Error:")


# --- scripts ------------------------------------------------------------------------


def reference_files(exercise_dir: Path) -> dict[str, str]:
    """A Polyglot Python exercise's reference solution, keyed by the stub file it replaces."""
    config = json.loads((exercise_dir / ".meta" / "config.json").read_text())
    example = exercise_dir / config["files"]["example"][0]
    return {config["files"]["solution"][0]: example.read_text()}


class WriteFilesScript:
    """Look around, write the given files with the agent's `create` tool, check, finish."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    def __call__(self, request: Any, context: Any = None) -> Message:
        done = calls_made(request)
        if failed(last_tool_result(request)):
            return call(request, "finish", summary=f"giving up: {last_tool_result(request)}")
        if not done:
            return call(request, "view", path=".")
        pending = [path for path in self.files if ("create", path) not in _created(done)]
        if pending:
            return call(request, "create", path=pending[0], file_text=self.files[pending[0]])
        if done[-1][0] != "bash":
            return call(request, "bash", command="ls -la && git status --short")
        return call(request, "finish", summary=f"wrote {', '.join(self.files)}")


def _created(done: list[tuple[str, dict[str, Any]]]) -> set[tuple[str, str]]:
    return {(name, args.get("path", "")) for name, args in done if name == "create"}


class CapabilityScript:
    """Tasks succeed only for an agent that has tool `tool`; self-improvement adds it.

    A request whose task text names the tool is a self-improvement request: the script
    edits the agent's source (the seed's layout: `coder/tools/`) with the agent's own
    view/create/str_replace tools, runs the agent's smoke tests, and finishes. Any other
    request is a task: with the tool, the script uses it, then writes the files
    `solutions(task text)` gives; without it, the script gives up and the task fails.
    """

    def __init__(
        self, solutions: Callable[[str], dict[str, str] | None], tool: str = "search_files"
    ) -> None:
        self.solutions = solutions
        self.tool = tool

    def improvement_statement(self) -> str:
        """The problem statement that asks an agent to grow the capability."""
        return (
            f"Add a tool named `{self.tool}` to this coding agent: it searches the contents "
            "of files under a directory for a regular expression and returns matching lines "
            "as path:line: text, so the agent can find code without long bash pipelines. "
            "Register it with the other tools and add a unit test for it."
        )

    def __call__(self, request: Any, context: Any = None) -> Message:
        if failed(last_tool_result(request)):
            return call(request, "finish", summary=f"giving up: {last_tool_result(request)}")
        role = getattr(getattr(context, "binding", None), "role", None)
        if role == "self_improve" or f"`{self.tool}`" in task_text(request):
            return self._improve(request)
        return self._solve(request)

    def _solve(self, request: Any) -> Message:
        if self.tool not in tool_names(request):
            return call(request, "finish", summary=f"I would need a `{self.tool}` tool for this.")
        files = self.solutions(task_text(request)) or {}
        done = calls_made(request)
        if not done:
            return call(request, self.tool, pattern=r"def |class ", path=".")
        pending = [path for path in files if ("create", path) not in _created(done)]
        if pending:
            return call(request, "create", path=pending[0], file_text=files[pending[0]])
        return call(request, "finish", summary=f"used {self.tool}; wrote {len(files)} file(s)")

    def _improve(self, request: Any) -> Message:
        if self.tool in tool_names(request):
            return call(request, "finish", summary=f"this agent already has `{self.tool}`")
        registry = "coder/tools/__init__.py"
        steps = len(calls_made(request))
        if steps == 0:
            return call(request, "view", path=registry)
        source = _strip_line_numbers(tool_results(request)[0])
        import_line = next((ln for ln in source if ln.startswith("from . import ")), None)
        tools_line = next((ln for ln in source if ln.startswith("TOOLS = [")), None)
        if import_line is None or tools_line is None:
            return call(request, "finish", summary="giving up: unfamiliar tool registry")
        names = import_line[len("from . import ") :].split(", ")
        tool_file, test_file = f"coder/tools/{self.tool}.py", f"tests/test_seed_{self.tool}.py"
        new_import = "from . import " + ", ".join(sorted(names + [self.tool]))
        new_tools = tools_line.replace("finish]", f"{self.tool}, finish]")
        edits = [
            ("create", {"path": tool_file, "file_text": _tool_source(self.tool)}),
            ("create", {"path": test_file, "file_text": _test_source(self.tool)}),
            ("str_replace", {"path": registry, "old_str": import_line, "new_str": new_import}),
            ("str_replace", {"path": registry, "old_str": tools_line, "new_str": new_tools}),
            ("bash", {"command": "python3 -B -m unittest discover -s tests -q 2>&1 | tail -5"}),
        ]
        if steps <= len(edits):
            name, args = edits[steps - 1]
            return call(request, name, **args)
        smoke = last_tool_result(request) or ""
        verdict = "smoke tests pass" if re.search(r"^OK", smoke, re.M) else f"smoke: {smoke}"
        return call(request, "finish", summary=f"added the `{self.tool}` tool; {verdict}")


def _strip_line_numbers(view_output: str) -> list[str]:
    return [line.split("\t", 1)[1] if "\t" in line else line for line in view_output.splitlines()]


def _tool_source(name: str) -> str:
    return (
        (Path(__file__).parent / "script_files" / "search_tool.py.txt")
        .read_text()
        .replace("search_files", name)
    )


def _test_source(name: str) -> str:
    return (
        (Path(__file__).parent / "script_files" / "search_test.py.txt")
        .read_text()
        .replace("search_files", name)
    )
