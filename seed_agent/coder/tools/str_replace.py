"""Replace one exact, unique piece of text in a file."""

from __future__ import annotations

from typing import Dict

from .base import ToolContext, ToolError, read_text, snippet, write_text

SPEC = {
    "name": "str_replace",
    "description": (
        "Replace `old_str` with `new_str` in a file. `old_str` must match the file exactly "
        "(whitespace and indentation included) and occur exactly once: include enough "
        "surrounding lines to make it unique. Returns the edited region with line numbers."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path, relative or absolute."},
            "old_str": {"type": "string", "description": "Exact text to replace."},
            "new_str": {"type": "string", "description": "Replacement text (may be empty)."},
        },
        "required": ["path", "old_str", "new_str"],
    },
}


def run(args: Dict, ctx: ToolContext) -> str:
    path = ctx.resolve(args["path"])
    old, new = args["old_str"], args["new_str"]
    if not old:
        raise ToolError("old_str is empty; use insert or create to add text")
    text = read_text(path)
    count = text.count(old)
    if count == 0:
        raise ToolError(
            f"old_str was not found in {path}. It must match exactly, including "
            "whitespace and indentation: view the file and copy the text."
        )
    if count > 1:
        starts, at = [], -1
        for _ in range(count):
            at = text.index(old, at + 1)
            starts.append(str(text.count("\n", 0, at) + 1))
        raise ToolError(
            f"old_str occurs {count} times in {path} (starting on lines "
            f"{', '.join(starts)}); include more surrounding text to make it unique."
        )
    at = text.index(old)
    updated = text[:at] + new + text[at + len(old) :]
    write_text(path, updated)
    first_line = text.count("\n", 0, at) + 1
    shown = snippet(updated, first_line, new.count("\n") + 1)
    return f"Edited {path}. The region now reads:\n{shown}\nCheck that this is what you meant."
