"""Create a file (or overwrite one) with the given content."""

from __future__ import annotations

import os
from typing import Dict

from .base import ToolContext, ToolError, write_text

SPEC = {
    "name": "create",
    "description": (
        "Write `file_text` to a file, creating parent directories as needed. An existing "
        "file is overwritten: to change part of a file, use str_replace or insert instead."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path, relative or absolute."},
            "file_text": {"type": "string", "description": "The complete new content."},
        },
        "required": ["path", "file_text"],
    },
}


def run(args: Dict, ctx: ToolContext) -> str:
    path = ctx.resolve(args["path"])
    if os.path.isdir(path):
        raise ToolError(f"{path} is a directory")
    existed = os.path.exists(path)
    write_text(path, args["file_text"])
    count = len(args["file_text"].splitlines())
    return f"{'Overwrote' if existed else 'Created'} {path} ({count} lines)"
