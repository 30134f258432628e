"""The `toolmaker` dry-run world as a pure function of the request (no Docker): what it
answers on easy and hard tasks, with a runtime tool or a kept one, and its registry."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from dgm.config import RunConfig
from dgm.errors import DgmError
from dgm.loop.session import new_run_config
from dgm.scripted.toolmaker import TOOL, search_tool_arguments, solve
from dgm.scripted.worlds import WORLDS, is_world_model, world_model

BUILTIN = ["bash", "view", "create", "str_replace", "insert", "make_tool", "finish"]
FILES = {"wordy.py": "def answer(q):\n    return 0\n"}


def request(tools: list[str], calls: list[tuple[str, dict]]) -> dict:
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "task"}]
    for i, (name, args) in enumerate(calls):
        function = {"name": name, "arguments": json.dumps(args)}
        tool_call = {"id": f"c{i}", "type": "function", "function": function}
        messages.append({"role": "assistant", "content": None, "tool_calls": [tool_call]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": "ok"})
    return {"messages": messages, "tools": [{"function": {"name": t}} for t in tools]}


def answer(req: dict, hard: bool) -> tuple[str, dict]:
    call = solve(req, FILES, hard)["tool_calls"][0]["function"]
    return call["name"], json.loads(call["arguments"])


def test_an_easy_task_makes_the_tool_uses_it_and_writes_the_solution():
    first = answer(request(BUILTIN, []), hard=False)
    assert first == ("make_tool", search_tool_arguments())
    made = [first]
    assert answer(request(BUILTIN + [TOOL], made), hard=False)[0] == TOOL
    used = made + [(TOOL, {"pattern": "def |class ", "path": "."})]
    assert answer(request(BUILTIN + [TOOL], used), hard=False) == (
        "create", {"path": "wordy.py", "file_text": FILES["wordy.py"]})  # fmt: skip


def test_a_hard_task_needs_the_tool_from_the_first_request():
    made = [("make_tool", search_tool_arguments())]
    name, args = answer(request(BUILTIN + [TOOL], made), hard=True)
    assert name == "finish" and "too late" in args["summary"]
    assert answer(request(BUILTIN + [TOOL], []), hard=True)[0] == TOOL  # kept: offered at once
    without = [t for t in BUILTIN if t != "make_tool"]
    assert answer(request(without, []), hard=True)[0] == "finish"


def test_answers_are_a_pure_function_of_the_request():
    req = request(BUILTIN, [])
    assert solve(req, FILES, True) == solve(req, FILES, True)


def test_the_tool_it_writes_passes_its_own_smoke_check(tmp_path: Path):
    from dgm.jobs.expand import tool_smoke

    args = search_tool_arguments()
    (tmp_path / "tool.py").write_text(args.pop("source"))
    (tmp_path / "tool.json").write_text(json.dumps(args))
    assert tool_smoke.main(str(tmp_path)) == 0


def test_worlds_are_chosen_by_name_and_only_for_a_dry_run():
    assert {"capability", "toolmaker"} <= set(WORLDS)
    assert world_model(None) == "scripted/capability"
    assert is_world_model("scripted/toolmaker") and not is_world_model("scripted/other")
    with pytest.raises(DgmError, match="no dry-run world named 'nope'"):
        world_model("nope")
    cfg, _ = new_run_config(RunConfig(), Path("r"), {}, dry_run=True, dry_run_world="toolmaker")
    assert cfg.llm.model == cfg.llm.diagnose_model == "scripted/toolmaker"
    with pytest.raises(DgmError, match="needs --dry-run"):
        new_run_config(RunConfig(), Path("r"), {}, dry_run_world="toolmaker")


def test_other_roles_make_a_change_that_helps_no_task():
    from dgm.scripted.toolmaker import ToolmakerScript

    script = ToolmakerScript(lambda _id: None)
    role = SimpleNamespace(binding=SimpleNamespace(role="diagnose", task_id=None))
    assert "system prompt" in json.loads(script(request([], []), role)["content"])[
        "problem_description"]  # fmt: skip
    role.binding.role = "self_improve"
    edit = script(request(BUILTIN, []), role)["tool_calls"][0]["function"]
    assert edit["name"] == "bash" and "prompts/system.txt" in edit["arguments"]
