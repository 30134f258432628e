"""A third-party agent (a shell script, no `improve` command) grows children in both
self-improvement modes, for real: `dgm init --seed` then `dgm resume --self-improve
dgm|agent` in real Docker, with the scripted model answering the built-in diagnosis.
In agent mode the built-in procedure stands in, and `dgm show` says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from dgm.jobs.expand.improve import FALLBACK
from dgm.scripted.dry_run import DRY_RUN_SUBSET
from dgm.store import Run
from tests.loop.test_e2e_docker import dgm
from tests.needs import image_or_missing

pytestmark = [pytest.mark.docker, pytest.mark.slow]
CONFIG = f"""\
workers = 2
[llm]
model = "scripted/capability"
diagnose_model = "scripted/capability"
[benchmark]
subset = "{DRY_RUN_SUBSET}"
[strategy]
name = "dgm"
[strategy.dgm]
children_per_generation = 1
"""


@pytest.fixture(scope="module")
def images() -> None:
    for name in ("runtime", "polyglot"):
        image_or_missing(name)


@pytest.mark.parametrize("mode", ["dgm", "agent"])
def test_a_third_party_agent_grows_children_in_both_modes(
    tmp_path: Path, images: None, mode: str
) -> None:
    agent = tmp_path / "shell-agent"
    agent.mkdir()
    (agent / "agent.toml").write_text(
        '[agent]\nname = "shell"\n[commands]\n'
        'solve = "sh -c \'echo tried >> NOTES\'"\nsmoke = "test -d {agent_dir}"\n'
    )
    (tmp_path / "run.toml").write_text(f'name = "third-{mode}"\n' + CONFIG)
    run_dir = tmp_path / f"third-{mode}"
    made = dgm("init", str(run_dir), "--seed", str(agent), "--config", str(tmp_path / "run.toml"))
    assert made.returncode == 0, made.stderr
    result = dgm("resume", str(run_dir), "--self-improve", mode, "--max-evals", "5", timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    with Run.open(run_dir) as run:
        assert run.config.self_improve.mode == mode  # kept in run.toml
        [child] = [n for n in run.nodes() if n.parent_id == 0]
        assert "+tried" in run.diff(child.id)
        expected = "dgm" if mode == "dgm" else FALLBACK
        assert child.meta["procedure"] == expected and not child.meta["improve_changed"]
    shown = dgm("show", str(run_dir), str(child.id), "--no-diff").stdout
    assert f"procedure {expected}" in shown, shown
