from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.outages.standin import StandIn


@pytest.fixture
def standin() -> Iterator[StandIn]:
    server = StandIn().start()
    yield server
    server.stop()


@pytest.fixture
def tiny_seed(tmp_path: Path) -> Path:
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "agent.toml").write_text('[agent]\nname = "tiny"\n[commands]\nsolve = "true"\n')
    (seed / "agent.py").write_text("print('hi')\n")
    return seed
