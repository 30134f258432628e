"""The `hyperagent` dry-run world answers from what the agent's improve procedure shows it
(no Docker): the seed's procedure (one failed task) gets a procedure improvement or a
cosmetic change by the parity of the expansion ordinal; a procedure that shows every
failed task gets the `search_files` tool. Prompts are built by the seed's own code."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest

from dgm.paths import seed_agent_dir
from dgm.scripted.hyperagent import META_STATEMENT, SHOWN_ALL, SHOWN_ONE, HyperagentScript

sys.path.insert(0, str(seed_agent_dir()))
from coder import improve  # noqa: E402

sys.path.remove(str(seed_agent_dir()))


def history(ordinal: int) -> dict:
    failed = [{"node": 1, "task_id": t, "statement": "s", "trajectory": None, "test_output": None}
              for t in ("python__wordy", "python__dominoes")]  # fmt: skip
    return {"node": 1, "expansion": {"ordinal": ordinal}, "lineage": [{"id": 1}],
            "failed_tasks": failed, "budget": {}}  # fmt: skip


def diagnosis(ordinal: int, shown: int) -> dict:
    data = history(ordinal)
    target = {"kind": "task", "tasks": data["failed_tasks"][:shown]}
    source = improve.agent_source(str(seed_agent_dir()))
    messages = improve.diagnosis_messages(data, "/nonexistent", source, target)
    context = SimpleNamespace(binding=SimpleNamespace(role="improve", task_id=None))
    answer = HyperagentScript(lambda _id: None)({"messages": messages}, context)
    return improve.parse_diagnosis(answer["content"])


@pytest.mark.parametrize(("ordinal", "meta"), [(0, True), (1, False), (2, True)])
def test_shown_one_failed_task_the_parity_decides(ordinal: int, meta: bool) -> None:
    statement = diagnosis(ordinal, shown=1)["problem_description"]
    assert (statement == META_STATEMENT) is meta
    assert "search_files" not in statement


@pytest.mark.parametrize("ordinal", [0, 1])
def test_shown_every_failed_task_it_finds_the_common_cause(ordinal: int) -> None:
    assert "`search_files`" in diagnosis(ordinal, shown=2)["problem_description"]


def test_the_seed_procedure_is_the_one_the_world_edits() -> None:
    source = (seed_agent_dir() / "coder" / "improve.py").read_text()
    assert SHOWN_ONE in source and SHOWN_ALL not in source
    assert json.loads(json.dumps(improve.choose(history(0))))["tasks"][0]["node"] == 1
    assert Path(seed_agent_dir() / "agent.toml").read_text().count("coder/improve.py") == 1


def test_the_seed_procedure_asks_what_the_built_in_one_asks() -> None:
    """Like for like: the seed's `improve` uses the built-in procedure's texts."""
    from dgm.jobs import diagnose
    from dgm.jobs.expand import builtin as expand

    assert improve.DIAGNOSIS_SYSTEM == diagnose.DIAGNOSIS_SYSTEM
    assert improve.DIAGNOSIS_KEYS == diagnose.DIAGNOSIS_KEYS
    assert (improve.PREAMBLE, improve.FOOTER) == (
        expand.SELF_IMPROVE_PREAMBLE,
        expand.SELF_IMPROVE_FOOTER,
    )
    for kind in ("empty_patches", "stochasticity"):
        assert improve.SPECIAL[kind] == diagnose.SPECIAL_STATEMENTS[kind]


def test_the_dry_run_world_follows_the_mode(tmp_path: Path) -> None:
    from dgm.config import RunConfig
    from dgm.loop.session import new_run_config

    def model(world: str | None, **overrides: str) -> str:
        config, _ = new_run_config(RunConfig(), tmp_path / "r", overrides, dry_run=True,
                                   dry_run_world=world)  # fmt: skip
        return config.llm.model

    assert model(None) == "scripted/capability"
    agent = model(None, **{"self_improve.mode": "agent"})
    assert agent == "scripted/hyperagent"
    assert model("capability", **{"self_improve.mode": "agent"}) == "scripted/capability"
    kept = RunConfig().with_overrides({"self_improve.mode": "agent"})
    assert RunConfig.from_dict(tomllib.loads(kept.to_toml())).self_improve.mode == "agent"
