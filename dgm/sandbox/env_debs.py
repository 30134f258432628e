"""Debian packages for an agent environment (`[environment] apt = [...]`): fetched by the
host's apt (`apt-get download`, the host's own sources, nothing of the agent's choosing but
package names) and unpacked with `dpkg-deb -x`, which runs no maintainer script. Only the
named packages are unpacked: what they depend on must be named too, or be in the image.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

from dgm.errors import DgmError

APT_TIMEOUT_S = 900
APT_BIN_DIRS = ("apt/usr/bin", "apt/bin", "apt/usr/sbin")
"""Relative to the environment: put first on the agent's PATH in the sandbox."""


def unpack_debs(packages: tuple[str, ...], debs: Path, target: Path) -> list[dict[str, str]]:
    """Download and unpack `packages` into `target`; one record per .deb."""
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        raise DgmError(
            f"[environment] apt = {list(packages)} needs apt-get and dpkg-deb on this machine",
            "run dgm on a Debian or Ubuntu host, or drop the apt packages",
        )
    debs.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["apt-get", "download", "-q", *packages], cwd=debs,
                          capture_output=True, text=True, timeout=APT_TIMEOUT_S)  # fmt: skip
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.startswith("E:")]
        said = "; ".join(lines) or done.stderr[-300:]
        raise DgmError(
            f"the agent's Debian packages cannot be fetched: {said}",
            "check the names (apt-cache search NAME); `apt-get update` if the lists are old",
        )
    records = []
    target.mkdir(parents=True, exist_ok=True)
    for deb in sorted(debs.glob("*.deb")):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(target)], check=True,
                       capture_output=True, timeout=APT_TIMEOUT_S)  # fmt: skip
        name, version = deb.name.split("_")[:2]
        digest = hashlib.sha256(deb.read_bytes()).hexdigest()
        records.append({"name": f"apt:{name}", "version": version, "file": deb.name,
                        "sha256": digest})  # fmt: skip
    return records
