"""The harvest target, on the host: which runtime tools a parent's solved tasks left that
its codebase lacks, read without following links, capped, and chosen before the usual
target only when the run and the agent allow it. No Docker."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from dgm.config import RunConfig
from dgm.jobs.agent_run import MAX_KEPT_TOOLS, _keep_tools
from dgm.jobs.diagnose import ImprovementTarget
from dgm.jobs.expand.harvest import content_hash, tools_dir_of
from dgm.loop.harvest_target import harvest_target, read_tools
from dgm.loop.job_making.factory import JobFactory
from dgm.loop.job_making.from_actions import ActionJobs, expand_job_id
from dgm.store import Evaluation, Run

TOOL_PY = "import json, sys\nprint(json.load(sys.stdin).get('q', 'hi'))\n"


def tool_json(name: str, expect: str = "hi") -> str:
    meta = {"name": name, "description": "d", "parameters": {"type": "object"},
            "smoke": {"args": {}, "expect": expect}}  # fmt: skip
    return json.dumps(meta)


def plant(folder: Path, name: str, py: str = TOOL_PY, expect: str = "hi") -> None:
    (folder / name).mkdir(parents=True, exist_ok=True)
    (folder / name / "tool.json").write_text(tool_json(name, expect))
    (folder / name / "tool.py").write_text(py)


def make_seed(root: Path, tools_dir: bool = True) -> Path:
    seed = root / "seed"
    seed.mkdir(parents=True)
    manifest = '[agent]\nname = "s"\n[commands]\nsolve = "true"\n'
    (seed / "agent.toml").write_text(manifest + ('[tools]\ndir = "tools"\n' if tools_dir else ""))
    (seed / "agent.py").write_text("print('hi')\n")
    return seed


def make_run(tmp_path: Path, tools_dir: bool = True, **overrides) -> Run:
    config = RunConfig(name="t").with_overrides(overrides)
    return Run.create(tmp_path / "run", config, make_seed(tmp_path, tools_dir))


def evaluate(run: Run, task: str, resolved: bool, tools: dict[str, str], **extra) -> None:
    """An evaluation of node 0 whose agent left `tools` ({name: tool.py}) in its output."""
    log_dir = Path("logs") / "eval" / f"eval-0-{task}"
    for name, py in tools.items():
        plant(run.path / log_dir / "out" / "tools", name, py)
    run.record_evaluation(Evaluation(0, task, "polyglot", resolved, log_dir=str(log_dir),
                                     job_id=f"eval-0-{task}", **extra))  # fmt: skip


def test_tools_from_solved_tasks_are_offered_once_deduplicated_with_their_tasks(tmp_path):
    with make_run(tmp_path) as run:
        evaluate(run, "a", True, {"search_files": TOOL_PY})
        evaluate(run, "b", True, {"search_files": TOOL_PY, "other": TOOL_PY + "# 2\n"})
        evaluate(run, "c", False, {"failed_only": TOOL_PY})
        target = harvest_target(run, 0, run.checkout(0, tmp_path / "code"))
    assert target is not None and target.kind == "harvest"
    tools = {t["name"]: t for t in target.tools}
    assert sorted(tools) == ["other", "search_files"]  # not from failed tasks
    assert tools["search_files"]["tasks"] == ["a", "b"]
    assert tools["search_files"]["tool_py"] == TOOL_PY
    assert tools["search_files"]["sha256"] == content_hash(tool_json("search_files"), TOOL_PY)


def test_a_parent_caught_tampering_hears_that_first_not_a_harvest(tmp_path):
    with make_run(tmp_path) as run:
        evaluate(run, "a", True, {"search_files": TOOL_PY})
        evaluate(run, "d", False, {"forged": TOOL_PY}, tampered=True)
        assert harvest_target(run, 0, run.checkout(0, tmp_path / "code")) is None
        assert _jobs(run)._choose_target("0", 0).tampered


def test_tools_already_in_the_codebase_or_harvested_before_are_not_offered(tmp_path):
    with make_run(tmp_path) as run:
        evaluate(run, "a", True, {"search_files": TOOL_PY, "same_name": "print('v2')\n"})
        code = run.checkout(0, tmp_path / "code")
        plant(code / "tools", "search_files")  # same content: the same tool
        plant(code / "tools", "same_name")  # a tool of that name is there already
        assert harvest_target(run, 0, code) is None
        evaluate(run, "b", True, {"fresh": TOOL_PY})
        target = harvest_target(run, 0, code)
        assert target is not None and [t["name"] for t in target.tools] == ["fresh"]
        run.queue_job("expand-0-x", "expand", {"parent": 0, "target": target.to_dict()})
        assert harvest_target(run, 0, code) is None  # tried once: not offered again


def test_links_special_files_oversized_and_malformed_tools_are_skipped(tmp_path):
    root = tmp_path / "tools"
    plant(root, "good")
    plant(root, "linked")
    (root / "linked" / "tool.py").unlink()
    secret = tmp_path / "secret.txt"
    secret.write_text("API_KEY=sk-very-secret")
    (root / "linked" / "tool.py").symlink_to(secret)
    (root / "dirlink").symlink_to(root / "good")  # a linked folder is not entered
    plant(root, "huge", py="x = 1\n" * 20_000)
    plant(root, "misnamed")
    (root / "misnamed" / "tool.json").write_text(tool_json("someone_else"))
    plant(root, "Bad-Name")
    os.mkfifo(root / "good" / "extra")  # never opened
    found = read_tools(tmp_path, "tools/")
    assert [t["name"] for t in found] == ["good"]
    assert all("sk-very-secret" not in t["tool_py"] for t in found)


def test_the_eval_job_keeps_only_plain_capped_tool_files(tmp_path):
    written, dest = tmp_path / "out", tmp_path / "kept"
    plant(written / "tools", "search_files")
    plant(written / "tools", "huge", py="x" * 70_000)
    plant(written / "tools", "half")
    (written / "tools" / "half" / "tool.py").unlink()
    (written / "tools" / "stray.txt").write_text("not a tool")
    for i in range(MAX_KEPT_TOOLS + 5):
        plant(written / "tools", f"t{i:02d}")
    _keep_tools(written, dest)
    kept = sorted(p.name for p in dest.iterdir())
    assert "search_files" in kept and "huge" not in kept and "half" not in kept
    assert len(kept) == MAX_KEPT_TOOLS
    assert sorted(p.name for p in (dest / "search_files").iterdir()) == ["tool.json", "tool.py"]


class _Jobs(JobFactory):
    pass


def _jobs(run: Run) -> ActionJobs:
    return ActionJobs(run, _Jobs(), recorder=None)  # type: ignore[arg-type]


def test_the_loop_chooses_harvest_first_unless_disabled_or_undeclared(tmp_path, caplog):
    with make_run(tmp_path / "on") as run:
        evaluate(run, "a", True, {"search_files": TOOL_PY})
        evaluate(run, "b", False, {})
        assert _jobs(run)._choose_target("0", 0).kind == "harvest"
    with make_run(tmp_path / "off", **{"expand.harvest": False}) as run:
        evaluate(run, "a", True, {"search_files": TOOL_PY})
        evaluate(run, "b", False, {})
        assert run.config.expand.harvest is False
        assert _jobs(run)._choose_target("0", 0).kind != "harvest"
    with make_run(tmp_path / "undeclared", tools_dir=False) as run:
        evaluate(run, "a", True, {"search_files": TOOL_PY})
        evaluate(run, "b", False, {})
        with caplog.at_level(logging.INFO, logger="dgm.loop.harvest_target"):
            assert _jobs(run)._choose_target("0", 0).kind != "harvest"
        assert "declares no [tools] dir" in caplog.text


def test_other_targets_and_their_job_ids_are_unchanged(tmp_path):
    task = ImprovementTarget("task", task_id="python__wordy", trajectory="t")
    assert "tools" not in task.to_dict()
    assert set(task.to_dict()) == {"kind", "task_id", "task_statement", "trajectory",
                                   "test_output", "hidden_tests", "group_experience"}  # fmt: skip
    # The id of a task target as earlier versions computed it.
    assert expand_job_id(0, 1, task.to_dict()) == "expand-0-" + __import__("hashlib").sha256(
        json.dumps(["0", 1, {"kind": "task", "task_id": "python__wordy"}], sort_keys=True)
        .encode()).hexdigest()[:10]  # fmt: skip


@pytest.mark.parametrize(
    ("manifest", "expected"),
    [('[tools]\ndir = "tools"\n', "tools"), ('[tools]\ndir = "lib/kept"\n', "lib/kept"),
     ('[tools]\ndir = "../out"\n', None), ('[tools]\ndir = "/etc"\n', None), ("", None)],
)  # fmt: skip
def test_the_tools_dir_is_a_plain_folder_inside_the_agent(tmp_path, manifest, expected):
    (tmp_path / "agent.toml").write_text('[commands]\nsolve = "true"\n' + manifest)
    assert tools_dir_of(tmp_path) == expected
