"""The harvest job on its own, in real Docker sandboxes: each tool's smoke check runs in a
sandbox and failing tools are dropped; the child keeps the rest under its `[tools] dir`
and must pass its own smoke test; no LLM endpoint is ever given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dgm.jobs.diagnose import ImprovementTarget
from dgm.jobs.expand import ExpandJob, ExpandSettings, run_expand
from dgm.jobs.expand.harvest import content_hash

pytestmark = [pytest.mark.docker]

ECHO_PY = "import json, sys\nprint('echo:', json.load(sys.stdin)['text'])\n"
HOST_PY = "import os\nprint(os.path.exists('/agent/agent.toml'))\n"


def tool(name: str, py: str, args: dict, expect: str) -> dict:
    meta = json.dumps({"name": name, "description": "d", "parameters": {"type": "object"},
                       "smoke": {"args": args, "expect": expect}})  # fmt: skip
    return {"name": name, "sha256": content_hash(meta, py), "tool_json": meta, "tool_py": py,
            "tasks": ["t"]}  # fmt: skip


def parent(root: Path, smoke: str = "true") -> Path:
    code = root / "parent"
    code.mkdir()
    (code / "agent.toml").write_text(
        f'[agent]\nname = "p"\n[commands]\nsolve = "true"\nsmoke = "{smoke}"\n'
        '[tools]\ndir = "kept/tools"\n'
    )
    return code


def harvest(tmp_path: Path, code: Path, tools: list[dict]):
    from dgm.sandbox import images

    settings = ExpandSettings(run="harvest-test", image=images.resolve("runtime"))
    job = ExpandJob("expand-0-h", 0, str(code), ImprovementTarget("harvest", tools=tools),
                    str(tmp_path / "log"), settings)  # fmt: skip
    assert not job.needs_diagnosis() and job.diagnose_llm is None and job.self_improve_llm is None
    return run_expand(job)


def test_passing_tools_are_kept_and_failing_ones_dropped(tmp_path: Path) -> None:
    tools = [
        tool("echo", ECHO_PY, {"text": "hi"}, "echo: hi"),
        tool("wrong", ECHO_PY, {"text": "hi"}, "something else"),
        tool("crash", "raise SystemExit(4)\n", {}, ""),
    ]
    result = harvest(tmp_path, parent(tmp_path), tools)
    assert result.status == "ok", result.reason
    assert result.harvested_tools == ["echo"]
    assert "kept/tools/echo/tool.py" in result.diff and "wrong" not in result.diff
    checks = json.loads((tmp_path / "log" / "tool_smoke.json").read_text())
    assert [(c["name"], c["passed"]) for c in checks] == [
        ("echo", True), ("wrong", False), ("crash", False)]  # fmt: skip
    assert not list((tmp_path / "log").glob("llm*.jsonl"))


def test_a_child_that_fails_its_smoke_test_or_no_passing_tool_is_no_child(tmp_path: Path) -> None:
    echo = tool("echo", ECHO_PY, {"text": "hi"}, "echo: hi")
    failed = harvest(tmp_path / "a", parent(_mk(tmp_path / "a"), smoke="false"), [echo])
    assert failed.status == "smoke_failed" and failed.diff
    none = harvest(tmp_path / "b", parent(_mk(tmp_path / "b")), [tool("x", HOST_PY, {}, "no")])
    assert none.status == "empty_patch" and "no tool passed its smoke check" in none.reason


def _mk(path: Path) -> Path:
    path.mkdir(parents=True)
    return path
