"""Runs shared by the report tests: built once per session, never modified by a test."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from runs import make_big_run, make_small_run  # noqa: E402

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@pytest.fixture(scope="session")
def small_run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "small"
    make_small_run(path).close()
    return path


@pytest.fixture(scope="session")
def big_run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "big"
    make_big_run(path).close()
    return path


@pytest.fixture
def run_factory(tmp_path: Path):
    """A tiny run: a seed and one child with the given origin."""
    from dgm.config import RunConfig
    from dgm.store import Run

    runs = []

    def make(origin: str = "make it better") -> Run:
        seed = tmp_path / "seed"
        seed.mkdir()
        (seed / "agent.toml").write_text('[agent]\nname = "t"\n[commands]\nsolve = "true"\n')
        (seed / "agent.py").write_text("VALUE = 1\n")
        run = Run.create(tmp_path / "run", RunConfig(name="t"), seed)
        run.add_node(
            0,
            diff="--- a/agent.py\n+++ b/agent.py\n@@ -1 +1 @@\n-VALUE = 1\n+VALUE = 2\n",
            origin=origin,
        )
        runs.append(run)
        return run

    yield make
    for run in runs:
        run.close()
