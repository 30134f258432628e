"""Sandbox test fixtures: images are built (or reused by recipe hash) once per session."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def runtime_image() -> str:
    from dgm.sandbox import images

    return images.build("runtime", log=lambda line: None)


@pytest.fixture(scope="session")
def polyglot_image() -> str:
    from dgm.sandbox import images

    return images.build("polyglot", log=lambda line: None)
