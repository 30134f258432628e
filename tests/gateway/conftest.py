"""Fixtures for gateway tests: a started gateway, its usage records, fake upstreams."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from dgm.gateway import Gateway, GatewaySettings, UsageRecord

from .fake_upstream import FakeUpstream
from .helpers import FAST_RETRY


@pytest.fixture
def records() -> list[UsageRecord]:
    return []


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A short private (0700) folder for sockets (tmp_path can pass 107 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="dgmgw-"))
    yield path
    for child in path.iterdir():
        child.unlink()
    path.rmdir()


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    fake = FakeUpstream().start()
    yield fake
    fake.stop()


@pytest.fixture
def make_gateway(tmp_path: Path, records: list[UsageRecord]) -> Iterator:
    """`make_gateway(model, **kwargs)`: a started gateway logging under tmp_path/logs."""
    started: list[Gateway] = []

    def make(model: str, **kwargs) -> Gateway:
        kwargs.setdefault("run", "run-1")
        kwargs.setdefault("log_dir", tmp_path / "logs")
        kwargs.setdefault("retry", FAST_RETRY)
        on_usage = kwargs.pop("on_usage", records.append)
        gw = Gateway(GatewaySettings(model, **kwargs), on_usage).start()
        started.append(gw)
        return gw

    yield make
    for gw in started:
        gw.stop()
