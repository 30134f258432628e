"""The image of dgm's own SWE-bench-format suite (eval/swe-dgm-suite), built offline.

It is the runtime image plus the tinyutil repository at its base commit in /testbed.
Its tag is `dgm/swe-dgm-suite:<hash>`, the hash covering the recipe, the repository and
the runtime image's own tag, so any change rebuilds it. Instances name the image without
a tag (`dgm/swe-dgm-suite`); loading them resolves it to the current tag.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path

from dgm.errors import NotFoundError
from dgm.paths import swe_suite_dir

IMAGE = "dgm/swe-dgm-suite"
BUILD_COMMAND = "dgm bench build-suite"


def instances_file() -> Path:
    return swe_suite_dir() / "instances.jsonl"


def _recipe_files() -> list[Path]:
    suite = swe_suite_dir()
    files = [suite / "Dockerfile", suite / ".dockerignore"]
    files += (p for p in (suite / "repo").rglob("*") if p.is_file() and _kept(p))
    return sorted(files)


def _kept(path: Path) -> bool:
    return "__pycache__" not in path.parts and path.suffix != ".pyc"


def base_commit() -> str:
    first = instances_file().read_text().splitlines()[0]
    return json.loads(first)["base_commit"]


@cache
def tag() -> str:
    from dgm.sandbox import images

    digest = hashlib.sha256(f"runtime {images.tag('runtime')}\n".encode())
    digest.update(f"base {base_commit()}\n".encode())
    for path in _recipe_files():
        digest.update(f"\n{path.relative_to(swe_suite_dir())}\n".encode())
        digest.update(path.read_bytes())
    return f"{IMAGE}:{digest.hexdigest()[:12]}"


def image_for(name: str) -> str:
    """An instance's image: our suite's name resolves to its current tag."""
    return tag() if name == IMAGE else name


def check() -> str:
    """The suite image's tag; NotFoundError naming the build command when it is missing."""
    from dgm.sandbox import images

    try:
        return images.resolve(tag())
    except NotFoundError:
        raise NotFoundError(
            f"the SWE-format suite image {tag()} is not built", f"run `{BUILD_COMMAND}`"
        ) from None


def build(log=print, force: bool = False) -> str:  # noqa: ANN001 - a print-like callable
    """Build the suite image (and the runtime image below it) offline; returns its tag."""
    from dgm.sandbox import images
    from dgm.sandbox.build_steps import Steps, follow_docker_build
    from dgm.sandbox.docker_client import docker_client

    runtime = images.build("runtime", log=log)
    full = tag()
    client = docker_client(timeout=600)
    if not force and client.images.list(name=full):
        log(f"swe-dgm-suite: {full} is up to date")
        return full
    log(f"swe-dgm-suite: building {full}")
    stream = client.api.build(
        path=str(swe_suite_dir()),
        tag=full,
        buildargs={"BASE_IMAGE": runtime, "BASE_COMMIT": base_commit()},
        labels={"dgm.image": "swe-dgm-suite"},
        rm=True,
        forcerm=True,
        pull=False,
        decode=True,
    )
    follow_docker_build(stream, Steps("swe-dgm-suite", log), "the failing step is above")
    log(f"swe-dgm-suite: built {full}")
    return full
