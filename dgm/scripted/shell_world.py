"""`scripted/shell`: the dry run's world for agents dgm did not write.

It plays any agent that offers a shell, in whichever way the agent's protocol has:
- a tool whose one required string parameter is the command (`bash(command)`,
  `run(cmd)`, ...), in either API dialect (the gateway hands both over as Chat
  Completions tool definitions);
- no tools at all: a plain-text protocol, answered with one fenced shell block (the
  fence's name taken from the agent's prompt, e.g. mini-swe-agent's
  ```mswea_bash_command, else ```bash).
On a task it inspects the workspace, writes the reference solution with shell commands
(printf), then ends the way the prompt says: the submit command it names (e.g.
`echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`) or, when it names none, a plain reply
with no command. For self-improvement (role `self_improve`) its real edit is to the
agent's own prompt: every task placeholder in its templates gets a standing instruction
appended, so the child's prompts, and so its behaviour, differ from the parent's.
"""

from __future__ import annotations

import json
import re
from typing import Any

from dgm.scripted.agent_drivers import as_dict, say
from dgm.scripted.dry_run import DryRunScript, reference_files

SCRIPT_NAME = "shell"
LOOK = "ls -la && git status --short"
SUBMIT = re.compile(r"`(echo [A-Z][A-Z0-9_]{7,})`")
FENCE = re.compile(r"```([A-Za-z_][\w-]*bash[\w-]*|[\w-]*bash_command|bash|sh)\s*\n")
IMPROVEMENT = "(Before you finish, run the tests that cover your change.)"
# Where a prompt template puts the task, in the template languages agents use.
PLACEHOLDERS = ("{{task}}", "{{ task }}", "{self.problem_statement}", "{problem_statement}",
                "{{problem_statement}}", "$problem_statement")  # fmt: skip
EDIT_PROMPTS_CODE = f"""import pathlib
marks = {PLACEHOLDERS!r}
edited = []
for path in sorted(pathlib.Path(".").rglob("*")):
    if ".git" in path.parts or path.is_symlink() or not path.is_file():
        continue
    if path.suffix not in (".py", ".yaml", ".yml", ".j2", ".jinja", ".txt", ".md", ".toml"):
        continue
    text = path.read_text(errors="replace")
    for mark in marks:
        if mark in text:
            path.write_text(text.replace(mark, mark + " {IMPROVEMENT}"))
            edited.append(str(path))
            break
print("edited:", ", ".join(edited) or "no prompt template found")
"""


class ShellWorldScript:
    """Stateless: where the conversation stands is read from the request itself."""

    def __init__(self, task_lookup: Any) -> None:
        self.task_lookup = task_lookup
        self.fallback = DryRunScript(task_lookup)  # the diagnosis, as in capability

    def __call__(self, request: Any, context: Any = None) -> Any:
        binding = getattr(context, "binding", None)
        role = getattr(binding, "role", None)
        if role == "diagnose":
            return self.fallback(request, context)
        data = as_dict(request)
        if role in ("self_improve", "improve"):
            edit = "python3 -c " + _quote(EDIT_PROMPTS_CODE)
            plan = [LOOK, edit, "git status --short && git diff --stat"]
        else:
            task_id = getattr(binding, "task_id", None)
            task = self.task_lookup(task_id) if task_id else None
            files = reference_files(task) if task else {}
            plan = [LOOK, write_files_command(files), "git status --short"]
        turn = sum(1 for m in data["messages"] if m.get("role") == "assistant")
        if turn < len(plan):
            return run(data, plan[turn], why=f"step {turn + 1} of {len(plan)}")
        submit = SUBMIT.search(prompt_text(data))
        if turn == len(plan) and submit:
            return run(data, submit.group(1), why="the work is done; submitting")
        return say("The changes are in place; I am done.")


def prompt_text(data: dict[str, Any]) -> str:
    """The system prompt and the first user message: where an agent states its protocol."""
    texts: list[str] = []
    for message in data["messages"]:
        content = message.get("content")
        text = content if isinstance(content, str) else "".join(
            part.get("text", "") for part in content or [] if isinstance(part, dict)
        )  # fmt: skip
        texts.append(text)
        if message.get("role") == "user":
            break
    return "\n".join(texts)


def shell_tool(data: dict[str, Any]) -> tuple[str, str] | None:
    """(tool name, parameter) of the first tool taking exactly one required string."""
    for tool in data.get("tools") or []:
        function = tool.get("function") or {}
        parameters = function.get("parameters") or {}
        properties = parameters.get("properties") or {}
        required = parameters.get("required") or list(properties)
        if len(required) == 1 and (properties.get(required[0]) or {}).get("type") == "string":
            return function.get("name", ""), required[0]
    return None


def run(data: dict[str, Any], command: str, why: str) -> dict[str, Any]:
    """The agent's way of running `command`: its shell tool, or a fenced block."""
    tool = shell_tool(data)
    if tool is not None:
        call_id = f"call_{len(data['messages'])}"
        function = {"name": tool[0], "arguments": json.dumps({tool[1]: command})}
        calls = [{"id": call_id, "type": "function", "function": function}]
        return {"role": "assistant", "content": f"THOUGHT: {why}.", "tool_calls": calls}
    fence = FENCE.search(prompt_text(data))
    name = fence.group(1) if fence else "bash"
    return say(f"THOUGHT: {why}.\n\n```{name}\n{command}\n```")


def write_files_command(files: dict[str, str]) -> str:
    """One shell command writing every file with `printf` of a single-quoted string: no
    heredoc, because some shell tools append their own text to the command's last line
    (DGM's bash tool adds `; echo '<<exit>>'`), which would swallow a heredoc's end."""
    if not files:
        return "echo 'no reference solution is known for this task'"
    parts = []
    for path, text in files.items():
        folder = path.rsplit("/", 1)[0] if "/" in path else "."
        parts.append(f"mkdir -p {_quote(folder)} && printf '%s' {_quote(text)} > {_quote(path)}")
    return " && ".join(parts)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"
