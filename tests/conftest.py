"""Shared fixtures: paths to shared test data and Docker availability."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("DGM_SHARED_DIR", REPO_ROOT.parent / "shared"))
POLYGLOT_DIR = SHARED / "polyglot-benchmark"


def _docker_reason() -> str | None:
    try:
        import docker

        client = docker.from_env(timeout=10)
        client.ping()
    except Exception as exc:  # no engine, no socket, no permission
        return f"no Docker engine reachable: {exc}"
    return None


_DOCKER_REASON = _docker_reason()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _DOCKER_REASON is None:
        return
    skip = pytest.mark.skip(reason=_DOCKER_REASON)
    for item in items:
        if "docker" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def polyglot_dir() -> Path:
    if not POLYGLOT_DIR.is_dir():
        pytest.skip(f"polyglot benchmark checkout not found at {POLYGLOT_DIR}")
    return POLYGLOT_DIR
