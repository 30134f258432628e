"""Insert text after a given line of a file."""

from __future__ import annotations

from typing import Dict

from .base import ToolContext, ToolError, read_text, snippet, write_text

SPEC = {
    "name": "insert",
    "description": (
        "Insert `new_str` after line `insert_line` of a file (0 inserts at the top). "
        "Returns the edited region with line numbers."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path, relative or absolute."},
            "insert_line": {"type": "integer", "description": "Insert after this line."},
            "new_str": {"type": "string", "description": "The text to insert."},
        },
        "required": ["path", "insert_line", "new_str"],
    },
}


def run(args: Dict, ctx: ToolContext) -> str:
    path = ctx.resolve(args["path"])
    text = read_text(path)
    lines = text.splitlines(keepends=True)
    line = args["insert_line"]
    if not 0 <= line <= len(lines):
        raise ToolError(f"insert_line must be between 0 and {len(lines)} (the file's length)")
    if lines and not lines[-1].endswith("\n") and line == len(lines):
        lines[-1] += "\n"  # appending after a last line that had no newline
    new = args["new_str"] if args["new_str"].endswith("\n") else args["new_str"] + "\n"
    updated = "".join(lines[:line]) + new + "".join(lines[line:])
    write_text(path, updated)
    shown = snippet(updated, line + 1, new.count("\n"))
    return (
        f"Inserted into {path}. The region now reads:\n{shown}\nCheck that this is what you meant."
    )
