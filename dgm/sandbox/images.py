"""The sandbox images: recipes under containers/, tags by recipe hash, offline builds.

    base      mmdebstrap root file system from the host's Debian sources, `docker import`ed
    runtime   FROM base: python3, pytest, git, patch, a non-root user     (agents, python)
    polyglot  FROM runtime: Go, C++, Rust, Java, JavaScript toolchains     (judging)

An image is tagged `dgm/<name>:<hash>` where the hash covers its recipe files and its
parent's hash, so a changed recipe rebuilds it and everything above it, and an
unchanged one is reused. Nothing is ever pulled from a registry.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dgm.errors import NotFoundError, SandboxError
from dgm.paths import containers_dir
from dgm.sandbox import apt_sources
from dgm.sandbox.build_steps import DEFAULT_TIMEOUT_S, Steps, follow_docker_build, run_tool
from dgm.sandbox.docker_client import docker_client

BUILDER_VERSION = "1"  # bump when this file changes how images are made
PARENTS: dict[str, str | None] = {"base": None, "runtime": "base", "polyglot": "runtime"}
IMAGE_NAMES = tuple(PARENTS)

Log = Callable[[str], None]


def _check_name(name: str) -> None:
    if name not in PARENTS:
        raise NotFoundError(
            f"unknown sandbox image {name!r}", f"use one of: {', '.join(IMAGE_NAMES)}"
        )


def _recipe_files(name: str) -> list[Path]:
    folder = containers_dir() / name
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "README.md")


def recipe_hash(name: str) -> str:
    """Hash of everything that feeds the image: its files, its parent, the host's sources."""
    _check_name(name)
    digest = hashlib.sha256(f"dgm-image {name} v{BUILDER_VERSION}\n".encode())
    parent = PARENTS[name]
    if parent:
        digest.update(f"parent {recipe_hash(parent)}\n".encode())
    else:
        digest.update(apt_sources.debian_sources_file().encode())
        digest.update(_base_suite().encode())
    folder = containers_dir() / name
    for path in _recipe_files(name):
        digest.update(f"\n{path.relative_to(folder)}\n".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def tag(name: str) -> str:
    return f"dgm/{name}:{recipe_hash(name)}"


def _exists(client: object, full_tag: str) -> bool:
    import docker

    try:
        client.images.get(full_tag)  # type: ignore[attr-defined]
    except docker.errors.ImageNotFound:
        return False
    return True


def resolve(name: str) -> str:
    """The full tag of a built image; a full tag (`repo:tag`) is checked and returned as is.

    Raises NotFoundError naming the build command when the image is missing.
    """
    if ":" in name or "/" in name:
        if not _exists(docker_client(), name):
            raise NotFoundError(
                f"image {name} is not present in the Docker engine",
                "build it, or use a dgm image name: runtime, polyglot",
            )
        return name
    full = tag(name)
    if not _exists(docker_client(), full):
        raise NotFoundError(
            f"sandbox image {name!r} ({full}) is not built", f"run `dgm sandbox build {name}`"
        )
    return full


@dataclass(frozen=True)
class ImageStatus:
    name: str
    tag: str
    present: bool
    stale: list[str]
    """Older tags of the same image (from earlier recipes), removable."""


def status() -> list[ImageStatus]:
    client = docker_client()
    result = []
    for name in IMAGE_NAMES:
        full = tag(name)
        tags = [t for img in client.images.list(name=f"dgm/{name}") for t in img.tags]
        result.append(ImageStatus(name, full, full in tags, sorted(t for t in tags if t != full)))
    return result


def build(
    name: str, log: Log = print, force: bool = False, timeout_s: float = DEFAULT_TIMEOUT_S
) -> str:
    """Build `name` and its parents where missing; returns its full tag. Each image's
    build is cut after `timeout_s`."""
    _check_name(name)
    if not force and _exists(docker_client(), tag(name)):
        log(f"{name}: {tag(name)} is up to date")
        return tag(name)
    lock_path = Path(tempfile.gettempdir()) / "dgm-image-build.lock"
    with open(lock_path, "w") as lock:  # one builder at a time on this host
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _build_locked(name, log, force, timeout_s)


def _build_locked(name: str, log: Log, force: bool, timeout_s: float) -> str:
    parent = PARENTS[name]
    parent_tag = _build_locked(parent, log, False, timeout_s) if parent else None
    full = tag(name)
    client = docker_client()
    if not force and _exists(client, full):
        log(f"{name}: {full} is up to date")
        return full
    started = time.monotonic()
    log(f"{name}: building {full}")
    steps = Steps(name, log, timeout_s)
    if parent_tag is None:
        _build_base(full, steps)
    else:
        _docker_build(name, full, parent_tag, steps)
    log(f"{name}: built {full} in {time.monotonic() - started:.0f} s")
    _untag_older(client, name, full, log)
    return full


def _untag_older(client: object, name: str, keep: str, log: Log) -> None:
    """Drop tags of earlier recipes; an image still used by a container stays."""
    import docker

    for image in client.images.list(name=f"dgm/{name}"):  # type: ignore[attr-defined]
        for old in image.tags:
            if old != keep:
                try:
                    client.images.remove(old)  # type: ignore[attr-defined]
                    log(f"{name}: removed the older {old}")
                except docker.errors.APIError:
                    pass


def _base_suite() -> str:
    recipe = tomllib.loads((containers_dir() / "base" / "recipe.toml").read_text())
    suite = recipe.get("suite", "host")
    if suite == "host":
        suite = apt_sources.host_codename()
        if not suite:
            raise SandboxError("cannot tell the host's Debian release from /etc/os-release")
    return suite


def _build_base(full_tag: str, steps: Steps) -> None:
    recipe = tomllib.loads((containers_dir() / "base" / "recipe.toml").read_text())
    if not _which("mmdebstrap"):
        raise SandboxError(
            "mmdebstrap is not installed", "install it: apt-get install -y mmdebstrap"
        )
    with tempfile.TemporaryDirectory(prefix="dgm-base-") as tmp:
        sources = Path(tmp) / "debian.sources"
        sources.write_text(apt_sources.debian_sources_file())
        rootfs = Path(tmp) / "rootfs.tar"
        cmd = [
            "mmdebstrap",
            f"--variant={recipe.get('variant', 'minbase')}",
            "--format=tar",
            "--aptopt=Acquire::Retries 3",
        ]
        if recipe.get("include"):
            cmd.append("--include=" + ",".join(recipe["include"]))
        cmd += [_base_suite(), str(rootfs), str(sources)]
        steps.log("base: " + " ".join(cmd))
        hint = "check that the host's Debian mirror is reachable (apt-get update)"
        run_tool(cmd, steps, lambda line: line.startswith("I: "), hint)  # mmdebstrap's stages
        repository, _, version = full_tag.partition(":")
        docker_client(timeout=600).api.import_image_from_file(
            str(rootfs),
            repository=repository,
            tag=version,
            changes=['CMD ["/bin/bash"]', "ENV LANG=C.UTF-8"],
        )


def _docker_build(name: str, full_tag: str, parent_tag: str, steps: Steps) -> None:
    build_args = {"BASE_IMAGE": parent_tag}
    for var in ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        if os.environ.get(var):
            build_args[var] = os.environ[var]  # predefined ARGs: not part of the cache key
    api = docker_client(timeout=int(min(steps.timeout_s, 3600)) + 1).api  # a silent step
    stream = api.build(
        path=str(containers_dir() / name),
        tag=full_tag,
        buildargs=build_args,
        labels={"dgm.image": name},
        rm=True,
        forcerm=True,
        pull=False,
        decode=True,
    )
    hint = (
        "the failing step and its output are above; a network error means the Debian"
        " mirror is unreachable from Docker's build containers"
    )
    follow_docker_build(stream, steps, hint)


def _which(program: str) -> bool:
    from shutil import which

    return which(program) is not None
