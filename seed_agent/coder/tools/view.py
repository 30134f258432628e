"""Show a file with line numbers (or a range of it), or list a directory."""

from __future__ import annotations

import os
from typing import Dict, List

from .base import OUTPUT_LIMIT_CHARS, ToolContext, ToolError, numbered, read_text, truncate

SPEC = {
    "name": "view",
    "description": (
        "Show a file's content with line numbers, or the lines in `view_range` "
        "([start, end], 1-based, inclusive; end -1 means to the end of the file). "
        "For a directory, list the files in it up to two levels deep."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File or directory, relative or absolute."},
            "view_range": {
                "type": "array",
                "items": {"type": "integer"},
                "description": "Optional [start, end] line range.",
            },
        },
        "required": ["path"],
    },
}

SKIPPED_DIRS = {".git", "__pycache__", "node_modules", ".venv", "venv", ".tox", "target"}


def run(args: Dict, ctx: ToolContext) -> str:
    path = ctx.resolve(args["path"])
    if os.path.isdir(path):
        return _list_dir(path)
    lines = read_text(path).splitlines()
    view_range = args.get("view_range")
    if view_range is None:
        return _whole_file(lines)
    if len(view_range) != 2 or not all(isinstance(n, int) for n in view_range):
        raise ToolError("view_range must be two integers: [start, end]")
    start, end = view_range
    end = len(lines) if end == -1 else end
    if not 1 <= start <= max(len(lines), 1) or end < start:
        raise ToolError(f"invalid view_range {view_range}: the file has {len(lines)} lines")
    return truncate(numbered(lines[start - 1 : end], start))


def _whole_file(lines: List[str]) -> str:
    """All lines if they fit, else as many as fit with a note on how to see the rest."""
    shown, size = [], 0
    for line in lines:
        size += len(line) + 8
        if size > OUTPUT_LIMIT_CHARS:
            break
        shown.append(line)
    text = numbered(shown, 1)
    if len(shown) < len(lines):
        text += (
            f"\n[file has {len(lines)} lines; showing 1-{len(shown)}. "
            "Use view_range or grep -n to see the rest.]"
        )
    return text or "(empty file)"


def _list_dir(root: str) -> str:
    entries = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        rel = os.path.relpath(dirpath, root)
        entries += [os.path.normpath(os.path.join(rel, d)) + "/" for d in dirnames]
        entries += [os.path.normpath(os.path.join(rel, f)) for f in filenames]
        if rel != ".":
            dirnames[:] = []  # two levels deep is enough for an overview
    return truncate("\n".join(sorted(entries)) or "(empty directory)")
