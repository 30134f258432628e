from __future__ import annotations

from pathlib import Path

import pytest

from dgm.config import RunConfig
from dgm.store import Run


@pytest.fixture
def tiny_seed(tmp_path: Path) -> Path:
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "agent.toml").write_text('[agent]\nname = "tiny"\n[commands]\nsolve = "true"\n')
    (seed / "agent.py").write_text("print('hi')\n")
    return seed


@pytest.fixture
def make_run(tmp_path: Path, tiny_seed: Path):
    def make(**overrides) -> Run:
        config = RunConfig(name="t").with_overrides(overrides)
        return Run.create(tmp_path / "run", config, tiny_seed)

    return make
