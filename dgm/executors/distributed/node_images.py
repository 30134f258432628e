"""Images on every node: before a job runs, its sandbox images (tags named by recipe hash)
must exist in this node's Docker engine.

A missing image is loaded from the head (`docker save` there, the bytes through Ray,
`docker load` here) or, where the head lacks it too, built here from its recipe (needs
mmdebstrap for the base image). Each job's record says which: `present`, `loaded`, `built`.
One image at a time per node: a file lock, so parallel jobs do not fetch it twice.
"""

from __future__ import annotations

import fcntl
import io
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from dgm.errors import NotFoundError, SandboxError

LOCK = Path(tempfile.gettempdir()) / "dgm-node-images.lock"


def _client():  # noqa: ANN202 - docker's client type is optional at import time
    from dgm.sandbox.docker_client import docker_client

    return docker_client()


def has_image(tag: str) -> bool:
    import docker

    try:
        _client().images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    return True


def save_image(tag: str) -> bytes:
    """`docker save` of an image of this engine (runs on the head)."""
    if not has_image(tag):
        raise NotFoundError(f"image {tag} is not on the head either")
    buf = io.BytesIO()
    for chunk in _client().images.get(tag).save(named=True):
        buf.write(chunk)
    return buf.getvalue()


def ensure_images(tags: tuple[str, ...], fetch: Callable[[str], bytes] | None) -> dict[str, str]:
    """Each tag -> how this node has it now: present, loaded or built."""
    how: dict[str, str] = {}
    if not tags:
        return how
    with open(LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for tag in tags:
            how[tag] = _ensure(tag, fetch)
    return how


def _ensure(tag: str, fetch: Callable[[str], bytes] | None) -> str:
    if has_image(tag):
        return "present"
    if fetch is not None:
        try:
            _client().images.load(fetch(tag))
            if has_image(tag):
                return "loaded"
        except Exception:  # noqa: BLE001 - fall back to a build where the recipe allows
            pass
    return _build(tag)


def _build(tag: str) -> str:
    from dgm.sandbox import images

    repo, _, _version = tag.partition(":")
    name = repo.removeprefix("dgm/")
    try:
        if images.tag(name) == tag:
            images.build(name, log=lambda _line: None)
            return "built"
    except NotFoundError:
        pass
    raise SandboxError(
        f"image {tag} is neither on node {os.uname().nodename} nor on the head",
        "build it on the head (`dgm sandbox build`) or on the node",
    )
