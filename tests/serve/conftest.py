"""Fixtures of the serve tests (helpers.py has the rest)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serve.helpers import make_small_run, start_server

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))  # browser.py


@pytest.fixture
def serve() -> Iterator:
    """serve(paths) -> Served; every server started is stopped at the end of the test."""
    stops: list = []
    yield lambda paths: start_server(paths, stops)
    for stop in stops:
        stop()


@pytest.fixture
def small_run(tmp_path: Path) -> Path:
    return make_small_run(tmp_path)
