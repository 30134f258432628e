"""Debian packages for an agent environment (`[environment] apt = [...]`), with what they
depend on that the sandbox image lacks.

1. what the image already has: its dpkg status file (`/var/lib/dpkg/status` of dgm/runtime,
   under every task image), read with `cat` in a container of our own image, kept per tag;
2. the dependencies: the host's apt resolves the named packages against *that* status file
   (`apt-get -s install --no-install-recommends`, a simulation: nothing is installed, no
   package code runs); each package it would install that the image lacks is taken, one
   the image has (even at an older version) is not;
3. each is fetched by the host's `apt-get download` (the host's own sources, nothing of the
   agent's choosing but package names) and unpacked with `dpkg-deb -x`, which runs no
   maintainer script.
Binaries land in `apt/usr/bin` (first on the agent's PATH) and libraries in
`apt/usr/lib/<triplet>` (on its LD_LIBRARY_PATH): only libraries the image lacks, so no
program of the image finds a different library than it would without the environment.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from pathlib import Path

from dgm.errors import DgmError

APT_TIMEOUT_S = 900
APT_BIN_DIRS = ("apt/usr/bin", "apt/bin", "apt/usr/sbin")
"""Relative to the environment: put first on the agent's PATH in the sandbox."""
APT_LIB_GLOBS = ("apt/usr/lib/*-linux-gnu", "apt/lib/*-linux-gnu")
"""Relative to the environment: on the agent's LD_LIBRARY_PATH in the sandbox."""
STATUS_IMAGE = "runtime"
"""The image whose installed packages count as present (every task image derives from it)."""
_INST = re.compile(r"^Inst (\S+)( \[[^\]]*\])? \(")


def unpack_debs(
    packages: tuple[str, ...], debs: Path, target: Path, status: Path
) -> list[dict[str, str]]:
    """Download `packages` and what they need beyond the image (whose dpkg status file is
    `status`) and unpack them into `target`; one record per .deb."""
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        raise DgmError(
            f"[environment] apt = {list(packages)} needs apt-get and dpkg-deb on this machine",
            "run dgm on a Debian or Ubuntu host, or drop the apt packages",
        )
    wanted = resolve_debs(packages, status)
    debs.mkdir(parents=True, exist_ok=True)
    _apt(["apt-get", "download", "-q", *wanted], debs, "fetched")
    records = []
    target.mkdir(parents=True, exist_ok=True)
    for deb in sorted(debs.glob("*.deb")):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(target)], check=True,
                       capture_output=True, timeout=APT_TIMEOUT_S)  # fmt: skip
        name, version = deb.name.split("_")[:2]
        digest = hashlib.sha256(deb.read_bytes()).hexdigest()
        records.append({"name": f"apt:{name}", "version": version, "file": deb.name,
                        "sha256": digest,
                        "why": "named" if name in packages else "dependency"})  # fmt: skip
    return records


def resolve_debs(packages: tuple[str, ...], status: Path) -> list[str]:
    """The named packages and their dependencies (no recommends) that an image with dpkg
    status file `status` lacks, as the host's apt resolves them (a simulation)."""
    said = _apt(["apt-get", "-s", "-q", "-o", f"Dir::State::status={status}",
                 "-o", "Debug::NoLocking=1", "-o", "APT::Install-Recommends=false",
                 "-o", "APT::Install-Suggests=false", "install", *packages], None,
                "resolved against the image's packages")  # fmt: skip
    wanted = []
    for line in said.splitlines():
        found = _INST.match(line)
        if found and not found.group(2):  # `[old version]`: the image has it; keep the image's
            wanted.append(found.group(1))
    return wanted


def image_status(root: Path) -> Path:
    """The dpkg status file of the runtime image, read once per image tag (kept in `root`)."""
    from dgm.sandbox import images
    from dgm.sandbox.docker_client import docker_client

    tag = images.resolve(STATUS_IMAGE)
    kept = root / f".dpkg-status-{hashlib.sha256(tag.encode()).hexdigest()[:12]}"
    if not kept.is_file():
        text = docker_client().containers.run(
            tag, ["cat", "/var/lib/dpkg/status"], remove=True, network_mode="none"
        )
        partial = kept.with_suffix(".partial")
        partial.write_bytes(text)
        partial.replace(kept)
    return kept


def _apt(command: list[str], cwd: Path | None, what: str) -> str:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True,
                          timeout=APT_TIMEOUT_S)  # fmt: skip
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.startswith("E:")]
        said = "; ".join(lines) or done.stderr[-300:]
        raise DgmError(
            f"the agent's Debian packages cannot be {what}: {said}",
            "check the names (apt-cache search NAME); `apt-get update` if the lists are old",
        )
    return done.stdout
