"""What a test needs from the machine, and what happens when it is not there.

By default a test whose need is missing (no Docker engine, no benchmark data, an extra not
installed) is skipped, with the reason and the fix. `DGM_REQUIRE=docker,polyglot,...` names
needs that must be met: a test missing one of those fails instead, naming what is missing
and how to install it. `.ci/run` sets it to everything CI installs, so a CI run on a machine
without them fails rather than passing having proved nothing.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

NEEDS = {
    "docker": "start a Docker engine this user can reach (or set DOCKER_HOST), then build "
    "the images: `dgm sandbox build`",
    "polyglot": "put the polyglot benchmark at $DGM_SHARED_DIR/polyglot-benchmark "
    "(default ../shared; `dgm bench fetch polyglot` clones it)",
    "swebench": "put the SWE-bench instances at $DGM_SHARED_DIR/swe-bench and build their "
    "images: `dgm sandbox build swebench --data DIR --ids @eval/subsets/swe_ci.txt`",
    "ray": "pip install 'dgm[ray]'",
    "chromium": "apt-get install chromium",
    "bwrap": "apt-get install bubblewrap",
    "matplotlib": "pip install 'dgm[report]'",
}
ENV = "DGM_REQUIRE"


def required() -> set[str]:
    """The needs `DGM_REQUIRE` names (a `pytest.UsageError` for a name it does not know)."""
    names = {n.strip() for n in os.environ.get(ENV, "").split(",") if n.strip()}
    unknown = sorted(names - set(NEEDS))
    if unknown:
        raise pytest.UsageError(
            f"{ENV} names {', '.join(unknown)}, which no test needs; known: {', '.join(NEEDS)}"
        )
    return names


def missing(need: str, reason: str) -> NoReturn:
    """Skip the running test because `need` is missing, or fail it if `DGM_REQUIRE` names it."""
    if need in required():
        pytest.fail(f"{ENV} names {need}, which is missing: {reason}. Fix: {NEEDS[need]}",
                    pytrace=False)  # fmt: skip
    pytest.skip(f"{reason} (fix: {NEEDS[need]}; {ENV}={need} makes this a failure)")


def image_or_missing(name: str, need: str = "docker") -> str:
    """The tag of a built sandbox image; missing(`need`) when it is not built."""
    from dgm.sandbox import images

    try:
        return images.resolve(name)
    except Exception as exc:  # noqa: BLE001 - not built, or no engine to ask
        missing(need, f"image {name} is not built: {exc}")
