from __future__ import annotations

from pathlib import Path

import pytest

from dgm.config import RunConfig
from dgm.store import Run


@pytest.fixture
def seed_dir(tmp_path: Path) -> Path:
    seed = tmp_path / "seed"
    (seed / "tools").mkdir(parents=True)
    (seed / "agent.toml").write_text('[agent]\nname = "tiny"\n[commands]\nsolve = "true"\n')
    (seed / "agent.py").write_text("VALUE = 1\n")
    (seed / "tools" / "bash.py").write_text("def run():\n    return 'bash'\n")
    return seed


@pytest.fixture
def run(tmp_path: Path, seed_dir: Path) -> Run:
    r = Run.create(tmp_path / "run", RunConfig(name="t"), seed_dir)
    yield r
    r.close()


def value_diff(old: int, new: int) -> str:
    return f"--- a/agent.py\n+++ b/agent.py\n@@ -1 +1 @@\n-VALUE = {old}\n+VALUE = {new}\n"
