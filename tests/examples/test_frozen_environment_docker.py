"""`[environment] frozen` in a real run (real Docker, the scripted world, one Polyglot
task): a seed whose self-edit adds a requirement grows a child; under `frozen = true` the
child still runs with the seed's environment and is not marked as having changed it;
without it the child gets a new environment, built for it, and its record says CHANGED."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dgm.sandbox.agent_env import env_key
from dgm.sandbox.env_requirements import environment_of
from dgm.store import Run
from tests.conftest import POLYGLOT_DIR
from tests.needs import image_or_missing

pytestmark = [pytest.mark.docker, pytest.mark.slow]
TASK = "python__beer-song"

SOLVE = """#!/bin/sh
# On its own code (a self-edit): add a requirement. On a task: say which packages it sees.
if [ -f agent.toml ] && grep -q frozen-probe agent.toml; then
  echo "six==1.16.0" >> requirements.txt
  echo "# edited" >> solve.sh
else
  "$1" -c "import importlib.util as u; print(bool(u.find_spec('six')))" > "$2/sees_six.txt"
fi
"""


def _seed(root: Path) -> Path:
    root.mkdir()
    (root / "agent.toml").write_text(
        '[agent]\nname = "frozen-probe"\n[commands]\n'
        'solve = "sh {agent_dir}/solve.sh {python} {output_dir}"\nsmoke = "true"\n'
        '[environment]\nrequirements = "requirements.txt"\n'
    )
    (root / "requirements.txt").write_text("tomli-w==1.0.0\n")
    (root / "solve.sh").write_text(SOLVE)
    return root


@pytest.mark.parametrize("frozen", [True, False], ids=["frozen", "not-frozen"])
def test_a_child_that_changes_its_requirements(frozen, tmp_path):
    for name in ("runtime", "polyglot"):
        image_or_missing(name)
    seed = _seed(tmp_path / "seed")
    config = tmp_path / "run.toml"
    config.write_text(f"[environment]\nfrozen = {str(frozen).lower()}\n")
    env = {**os.environ, "DGM_POLYGLOT_DIR": str(POLYGLOT_DIR),
           "DGM_AGENT_ENV_DIR": str(tmp_path / "envs")}  # fmt: skip
    run_dir = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "dgm", "run", str(run_dir), "--agent", str(seed), "--dry-run",
         "--config", str(config), "--subset", TASK, "--max-expansions", "1", "--workers", "1"],
        capture_output=True, text=True, timeout=900, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    seed_key = env_key(environment_of(seed))
    with Run.open(run_dir) as run:
        children = [n for n in run.nodes() if n.parent_id == 0]
        assert children and children[0].status == "active", done.stdout[-3000:]
        child = children[0]
        assert "six==1.16.0" in run.archive.read_file(child.commit, "requirements.txt")
        (evaluation,) = run.evaluations(child.id)
        used = json.loads((run.path / evaluation.log_dir / "environment.json").read_text())
        sees = (run.path / evaluation.log_dir / "out" / "sees_six.txt").read_text().strip()
    shown = subprocess.run([sys.executable, "-m", "dgm", "show", str(run_dir), str(child.id)],
                           capture_output=True, text=True, env=env).stdout  # fmt: skip
    if frozen:
        assert used["key"] == seed_key and sees == "False"
        assert "CHANGED" not in shown, shown
    else:
        assert used["key"] != seed_key and sees == "True"
        assert "six==1.16.0" in used["requirements"]
        assert "CHANGED: +six==1.16.0" in shown, shown
