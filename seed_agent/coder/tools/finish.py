"""End the run: the work in the working directory is the result."""

from __future__ import annotations

from typing import Dict

from .base import FinishRun, ToolContext

SPEC = {
    "name": "finish",
    "description": (
        "Call this once the task is complete and verified. Your file changes in the "
        "working directory are the result; there is no need to commit them."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "summary": {"type": "string", "description": "A few sentences on what you did."}
        },
        "required": ["summary"],
    },
}


def run(args: Dict, ctx: ToolContext) -> str:
    raise FinishRun(args["summary"])
