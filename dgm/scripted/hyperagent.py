"""`scripted/hyperagent`: the dry-run world of hyperagent mode (`--self-improve agent`).

Tasks are answered as in `scripted/capability` (dry_run.py): the easy ones by any agent,
the hard ones only by an agent with a `search_files` tool; the seed scores 2/4. What
changes is role `improve`, the parent's own improvement procedure (seed_agent/coder/
improve.py), which asks a diagnosis (a plain question: no tools offered) and then edits
its own source with its agent loop (tools offered). The scripted diagnosis answers from
what the procedure SHOWS it:
- two or more failed tasks: their common cause, the missing `search_files` tool;
- one failed task (the seed's procedure, like dgm's built-in one): no common cause to
  see, so it proposes either to improve the improvement procedure itself (show the
  diagnosis every failed task of the history) or a cosmetic change, by the parity of the
  expansion ordinal that the procedure states.
So a child whose procedure changed proposes the tool and its children reach 4/4, while
its unchanged sibling's children stay at 2/4, judged by the real hidden tests. Built-in
roles (`diagnose`, `self_improve`: an agent without `improve` falls back) are answered as
in `scripted/capability`. Stateless: every answer is a function of the request.
"""

from __future__ import annotations

import json
import re
from typing import Any

from dgm.scripted.agent_drivers import (
    Message,
    call,
    calls_made,
    last_tool_result,
    say,
    task_text,
    tool_names,
    tool_results,
)
from dgm.scripted.dry_run import DryRunScript

SCRIPT_NAME = "hyperagent"
TASK_HEADER = re.compile(r"^# The task it was given \(", re.M)
"""A shown task's header, at a line start (the source code in the prompt has it indented)."""
ORDINAL = re.compile(r"expansion ordinal (\d+)")
PROCEDURE_FILE = "coder/improve.py"
SHOWN_ONE, SHOWN_ALL = "FAILED_TASKS_SHOWN = 1", "FAILED_TASKS_SHOWN = 0"
META_STATEMENT = (
    "Improve the agent's own improvement procedure (`run.py improve`, in "
    f"`{PROCEDURE_FILE}`): its diagnosis sees a single failed task, too little to tell a "
    "general weakness from an accident. Make it show the diagnosis every failed task of "
    f"the history (`{SHOWN_ALL}`: 0 means all)."
)
COSMETIC_STATEMENT = (
    "Describe the agent's tools in a short document (docs/tools.md), so that whoever "
    "improves it next finds them faster."
)
COSMETIC_FILE, COSMETIC_NOTE = (
    "docs/tools.md",
    "# Tools\n\nview, create, str_replace, bash, finish.\n",
)


class HyperagentScript:
    def __init__(self, task_lookup: Any) -> None:
        self.base = DryRunScript(task_lookup)

    def __call__(self, request: Any, context: Any = None) -> Message:
        role = getattr(getattr(context, "binding", None), "role", None)
        if role != "improve":
            return self.base(request, context)
        if not tool_names(request):  # the procedure's diagnosis: a plain question
            return say(json.dumps(self.diagnosis(_prompt(request))))
        text = task_text(request)
        if "`search_files`" in text:
            return self.base.capability(request, context)  # adds the tool, as dgm's world
        if SHOWN_ALL in text:
            return _edit_procedure(request)
        return _cosmetic(request)

    def diagnosis(self, prompt: str) -> dict[str, str]:
        shown = len(TASK_HEADER.findall(prompt))
        if shown >= 2:
            return {**self.base.diagnosis(),
                    "log_summarization": f"{shown} failed tasks: the agent could not find the "
                    "code to change in any of them."}  # fmt: skip
        ordinal = ORDINAL.search(prompt)
        meta = ordinal is not None and int(ordinal.group(1)) % 2 == 0
        statement = META_STATEMENT if meta else COSMETIC_STATEMENT
        return {
            "log_summarization": "One failed task: the agent gave up early.",
            "potential_improvements": "See more evidence before proposing a change."
            if meta
            else "Clearer documentation.",
            "improvement_proposal": statement,
            "implementation_suggestion": "",
            "problem_description": statement,
        }


def _prompt(request: Any) -> str:
    from dgm.scripted.agent_drivers import as_dict

    return "\n".join(
        str(m.get("content") or "") for m in as_dict(request)["messages"] if m["role"] == "user"
    )


def _edit_procedure(request: Any) -> Message:
    """View the procedure, show every failed task, run the agent's tests, finish."""
    steps = len(calls_made(request))
    if steps == 0:
        return call(request, "view", path=PROCEDURE_FILE)
    if steps == 1:
        if SHOWN_ONE not in tool_results(request)[0]:
            return call(request, "finish", summary="giving up: unfamiliar procedure")
        return call(request, "str_replace", path=PROCEDURE_FILE, old_str=SHOWN_ONE,
                    new_str=SHOWN_ALL)  # fmt: skip
    if steps == 2:
        return call(
            request, "bash", command="python3 -B -m unittest discover -s tests -q 2>&1 | tail -3"
        )
    return call(request, "finish", summary=f"the diagnosis now sees every failed task; "
                f"tests: {(last_tool_result(request) or '').strip()[-40:]}")  # fmt: skip


def _cosmetic(request: Any) -> Message:
    if not calls_made(request):
        return call(request, "create", path=COSMETIC_FILE, file_text=COSMETIC_NOTE)
    return call(request, "finish", summary=f"described the tools in {COSMETIC_FILE}")
