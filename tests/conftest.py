"""Shared fixtures: paths to shared test data and Docker availability. A test that lacks
what it needs is skipped, or fails where DGM_REQUIRE names the need (tests/needs.py)."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

from tests.needs import missing, required

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


def pytest_configure(config: pytest.Config) -> None:
    required()  # an unknown name in DGM_REQUIRE stops the run before any test


# Tests that must not overlap another test of the same group when pytest-xdist runs the
# suite on several workers (`scripts/test` uses two): each starts a multi-node Ray cluster.
SERIAL_GROUPS = {"tests/ray/": "ray"}


@functools.cache
def _has_module_fixture(path: str) -> bool:
    text = (REPO_ROOT / path).read_text()
    return 'scope="module"' in text or 'scope="class"' in text


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under `--dist loadgroup`: a file with a module-scoped fixture (often a whole dry run
    in Docker) runs on one worker, so the fixture is made once; each SERIAL_GROUPS folder
    runs on one worker; every other test goes wherever a worker is free (a file of many
    independent judge runs is then shared by both)."""
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        group = next((g for prefix, g in SERIAL_GROUPS.items() if path.startswith(prefix)), None)
        if group is None and _has_module_fixture(path):
            group = path
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


UNGROUPED = pytest.StashKey[str]()


def pytest_collection_finish(session: pytest.Session) -> None:
    """On an xdist worker under loadgroup, a group takes effect only as an `@group` suffix
    on the test's id. Where it did not (pytest-xdist#1386: pytest 9.2 drops the suffix xdist
    3.8 writes), a module fixture's file split over two workers makes two fixtures and
    fails at random: each such test fails at once instead, naming the fix."""
    if not (hasattr(session.config, "workerinput") and session.config.getvalue("loadgroup")):
        return
    for item in session.items:
        if item.get_closest_marker("xdist_group") and "@" not in item.nodeid:
            item.stash[UNGROUPED] = (
                "--dist loadgroup did not keep this test with its group: this pytest and "
                "pytest-xdist do not work together (pytest-xdist#1386); fix: "
                "pip install -e '.[test]' (it pins a pytest that does)"
            )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before any fixture: `docker` tests need an engine; `needs(NAME, reason)` marks say
    what else a test lacks (a false reason: nothing lacking)."""
    if UNGROUPED in item.stash:
        pytest.fail(item.stash[UNGROUPED], pytrace=False)
    if "docker" in item.keywords and _DOCKER_REASON is not None:
        missing("docker", _DOCKER_REASON)
    for mark in item.iter_markers("needs"):
        need, reason = mark.args
        if reason:
            missing(need, reason)


@pytest.fixture(scope="session")
def polyglot_dir() -> Path:
    if not POLYGLOT_DIR.is_dir():
        missing("polyglot", f"polyglot benchmark checkout not found at {POLYGLOT_DIR}")
    return POLYGLOT_DIR
