"""What every tool shares: the context it runs in, its errors, output helpers."""

from __future__ import annotations

import os
import time
from typing import Callable, Dict, List, Optional

OUTPUT_LIMIT_CHARS = 10000  # what one tool result may add to the conversation


class ToolError(Exception):
    """A mistake the model can fix (bad path, ambiguous edit, ...): shown to it as the result."""


class FinishRun(Exception):
    """Raised by the `finish` tool to end the run."""

    def __init__(self, summary: str) -> None:
        super().__init__(summary)
        self.summary = summary


class ToolContext:
    """Where tools act: the working directory, the run's deadline, the env for commands."""

    def __init__(self, workdir: str, deadline: Optional[float] = None) -> None:
        self.workdir = os.path.abspath(workdir)
        self.deadline = deadline  # time.monotonic() value at which the run must end
        # Commands the model runs must not reach the gateway with this run's identity
        # (e.g. the agent's own tests when it improves itself start their own fake one).
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("DGM_LLM_")}
        self.env.update({"PAGER": "cat", "GIT_PAGER": "cat", "TERM": "dumb"})
        # Runtime tools (tools/runtime.py): kept ones from the agent's codebase, those made
        # in this run (saved under tools_dir), and a hook telling the trajectory.
        self.tools_dir: Optional[str] = None
        self.runtime_tools: Dict[str, object] = {}
        self.builtin_names: List[str] = []
        self.kept_names: List[str] = []
        self.on_tool_made: Optional[Callable[[str], None]] = None

    def seconds_left(self) -> float:
        if self.deadline is None:
            return float("inf")
        return max(0.0, self.deadline - time.monotonic())

    def resolve(self, path: str) -> str:
        """Absolute path for `path`, relative paths being relative to the workdir."""
        return os.path.normpath(os.path.join(self.workdir, os.path.expanduser(path)))


def truncate(text: str, limit: int = OUTPUT_LIMIT_CHARS) -> str:
    """Keep the head and tail of a long text with a note saying what was cut."""
    if len(text) <= limit:
        return text
    half = limit // 2
    omitted = len(text) - 2 * half
    note = (
        f"\n\n[... {omitted} characters omitted from the middle of this output. "
        "Narrow it down, e.g. with grep, head, tail, sed -n 'A,Bp' or a view_range ...]\n\n"
    )
    return text[:half] + note + text[-half:]


def read_text(path: str) -> str:
    """A text file's content, line endings kept as they are."""
    if not os.path.exists(path):
        raise ToolError(f"{path} does not exist")
    if os.path.isdir(path):
        raise ToolError(f"{path} is a directory, not a file")
    with open(path, "rb") as f:
        data = f.read()
    if b"\0" in data[:8192]:
        raise ToolError(f"{path} looks like a binary file; inspect it with bash instead")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def write_text(path: str, text: str) -> None:
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def numbered(lines: List[str], first: int) -> str:
    """Lines prefixed with their 1-based numbers, like `cat -n`."""
    return "\n".join(f"{first + i:6}\t{line}" for i, line in enumerate(lines))


def snippet(text: str, center_line: int, new_lines: int, context: int = 4) -> str:
    """Numbered lines around an edit, so the model can check it without viewing again."""
    lines = text.splitlines()
    start = max(1, center_line - context)
    end = min(len(lines), center_line + max(new_lines, 1) - 1 + context)
    return numbered(lines[start - 1 : end], start)


def check_args(spec: Dict, args: Dict) -> None:
    """Raise a ToolError naming any missing or mistyped argument of a tool call."""
    props = spec["parameters"].get("properties", {})
    types = {"string": str, "integer": int, "boolean": bool, "array": list, "object": dict}
    expected = ", ".join(f"{name} ({p.get('type')})" for name, p in props.items())
    for name in spec["parameters"].get("required", []):
        if name not in args:
            raise ToolError(f"missing required argument '{name}'. Arguments: {expected}")
    for name, value in args.items():
        if name not in props:
            raise ToolError(f"unknown argument '{name}'. Arguments: {expected}")
        want = types.get(props[name].get("type", ""), object)
        if want is int and isinstance(value, float) and value.is_integer():
            args[name] = int(value)
        elif not isinstance(value, want) or (want is int and isinstance(value, bool)):
            raise ToolError(f"argument '{name}' must be of type {props[name].get('type')}")
