"""`scripted/shell` plays an agent it has never seen by its protocol alone: a one-string
shell tool (whatever its names) or fenced blocks, ending as the agent's prompt says."""

from __future__ import annotations

import json
import subprocess
from types import SimpleNamespace

from dgm.gateway import JobBinding
from dgm.scripted.shell_world import EDIT_PROMPTS_CODE, ShellWorldScript, write_files_command

RUN_TOOL = {"type": "function", "function": {"name": "run", "parameters": {
    "type": "object", "properties": {"cmd": {"type": "string"}, "why": {"type": "string"}},
    "required": ["cmd"]}}}  # fmt: skip
EDITOR = {"type": "function", "function": {"name": "editor", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
    "required": ["path", "text"]}}}  # fmt: skip


class _Task:
    benchmark = "polyglot"


def _world(files: dict[str, str], monkeypatch) -> ShellWorldScript:
    import dgm.scripted.shell_world as module

    monkeypatch.setattr(module, "reference_files", lambda task: files)  # the fake task's
    return ShellWorldScript(lambda task_id: _Task())


def _ctx(role: str = "solve") -> SimpleNamespace:
    return SimpleNamespace(binding=JobBinding("r", "j", 0, "t", role))


def _conversation(prompt: str, turns: int, tools: list | None) -> dict:
    messages = [{"role": "system", "content": prompt}, {"role": "user", "content": "do it"}]
    for i in range(turns):
        messages += [
            {"role": "assistant", "content": f"turn {i}"},
            {"role": "user", "content": "ok"},
        ]
    return {"messages": messages, **({"tools": tools} if tools else {})}


def test_a_one_string_tool_is_the_shell_and_the_named_submit_ends(tmp_path, monkeypatch):
    world = _world({"pkg/solution.py": "print('it''s $HOME')\n"}, monkeypatch)
    prompt = "Finish with `echo DONE_SUBMITTING_NOW`, alone."
    answers = [world(_conversation(prompt, n, [EDITOR, RUN_TOOL]), _ctx()) for n in range(5)]
    commands = [json.loads(a["tool_calls"][0]["function"]["arguments"]) if a.get("tool_calls")
                else None for a in answers]  # fmt: skip
    assert [a["tool_calls"][0]["function"]["name"] for a in answers[:4]] == ["run"] * 4
    assert commands[0] == {"cmd": "ls -la && git status --short"}
    assert commands[3] == {"cmd": "echo DONE_SUBMITTING_NOW"}
    assert commands[4] is None and "done" in answers[4]["content"]
    subprocess.run(["bash", "-c", commands[1]["cmd"] + "; echo '<<exit>>'"], cwd=tmp_path,
                   check=True, capture_output=True)  # fmt: skip
    assert (tmp_path / "pkg" / "solution.py").read_text() == "print('it''s $HOME')\n"


def test_without_tools_it_answers_in_the_prompts_fence_and_ends_plainly(monkeypatch):
    world = _world({"a.py": "x = 1\n"}, monkeypatch)
    prompt = "Reply with one block:\n```mswea_bash_command\nls\n```"
    first = world(_conversation(prompt, 0, None), _ctx())
    assert "```mswea_bash_command\nls -la && git status --short\n```" in first["content"]
    last = world(_conversation("no protocol named here", 3, None), _ctx())
    assert not last.get("tool_calls") and "```" not in last["content"]


def test_self_improvement_edits_every_prompt_template(tmp_path):
    (tmp_path / "config.yaml").write_text("instance_template: |\n  Solve: {{task}}\n")
    (tmp_path / "agent.py").write_text('PROMPT = f"""Fix {self.problem_statement} now"""\n')
    (tmp_path / "notes.txt").write_text("nothing to see\n")
    answer = ShellWorldScript(lambda _: None)(
        _conversation("p", 1, [RUN_TOOL]), _ctx("self_improve")
    )
    command = json.loads(answer["tool_calls"][0]["function"]["arguments"])["cmd"]
    assert command.startswith("python3 -c ")
    subprocess.run(["python3", "-c", EDIT_PROMPTS_CODE], cwd=tmp_path, check=True)
    assert "{{task}} (Before you finish" in (tmp_path / "config.yaml").read_text()
    assert "{self.problem_statement} (Before you finish" in (tmp_path / "agent.py").read_text()
    assert (tmp_path / "notes.txt").read_text() == "nothing to see\n"
    assert write_files_command({}).startswith("echo")
