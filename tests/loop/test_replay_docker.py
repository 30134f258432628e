"""Replay for real: a dry run (real Docker, real hidden tests, the scripted model) is
recorded with 2 workers and replayed from its own recording with 3; the replay makes the
same jobs in the same order and ends with the same lineage, diffs and scores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dgm.store import Run
from tests.loop.run_decisions import run_decisions
from tests.loop.test_e2e_docker import dgm

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _everything(run_dir: Path) -> dict[str, Any]:
    with Run.open(run_dir) as run:
        return run_decisions(run)


def test_a_replayed_dry_run_grows_the_same_tree_with_the_same_scores(tmp_path: Path) -> None:
    recorded = tmp_path / "recorded"
    result = dgm("run", str(recorded), "--dry-run", "--strategy", "hgm", "--workers", "2",
                 "--max-evals", "12")  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    found = _everything(recorded)
    assert len(found["lineage"]) >= 2 and len(found["results"]) == 12

    replayed = tmp_path / "replayed"
    model = f"replay/{recorded}"
    result = dgm("run", str(replayed), "--config", str(recorded / "run.toml"), "--llm", model,
                 "--workers", "3")  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "replay: the recorded run started no more jobs" in result.stdout, result.stdout
    again = _everything(replayed)
    assert again["order"] == found["order"]
    assert again["lineage"] == found["lineage"]
    assert again["results"] == found["results"]
    assert again["scores"] == found["scores"]
