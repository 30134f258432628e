"""Fixtures for the evaluation tests: images built on demand (offline, cached by tag)."""

from __future__ import annotations

import pytest

from dgm.errors import DgmError


def _build(name: str) -> str:
    from dgm.sandbox import images

    try:
        return images.build(name, log=lambda _line: None)
    except DgmError as exc:  # a recipe that does not build is a bug, never a skip
        pytest.fail(f"cannot build the {name} image: {exc} ({exc.hint})", pytrace=False)


@pytest.fixture(scope="session")
def runtime_image() -> str:
    return _build("runtime")


@pytest.fixture(scope="session")
def polyglot_image() -> str:
    return _build("polyglot")


@pytest.fixture(scope="session")
def suite_image(runtime_image: str) -> str:
    from dgm.benchmarks.swebench import suite_image

    return suite_image.build(log=lambda _line: None)
