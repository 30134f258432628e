"""The host's Debian apt sources, as the offline image builder uses them.

We never hard-code a mirror: the base root file system is fetched from whatever
Debian mirror (or proxy, or snapshot) the host's apt is configured with. Third-party
repositories (nodesource, google cloud, ...) are left out: images hold Debian
packages only. An entry counts as Debian when it is signed by the Debian archive
keyring, or, without a Signed-By, when its URI path is `/debian` or `/debian-security`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from dgm.errors import SandboxError

APT_DIR = Path("/etc/apt")
_DEBIAN_PATHS = ("debian", "debian-security")


@dataclass(frozen=True)
class AptSource:
    uris: tuple[str, ...]
    suites: tuple[str, ...]
    components: tuple[str, ...]
    signed_by: str | None = None

    def is_debian(self) -> bool:
        if self.signed_by:
            return "debian-archive-keyring" in self.signed_by
        return all(urlparse(u).path.rstrip("/").split("/")[-1] in _DEBIAN_PATHS for u in self.uris)

    def deb822(self) -> str:
        lines = [
            "Types: deb",
            f"URIs: {' '.join(self.uris)}",
            f"Suites: {' '.join(self.suites)}",
            f"Components: {' '.join(self.components)}",
        ]
        if self.signed_by:
            lines.append(f"Signed-By: {self.signed_by}")
        return "\n".join(lines) + "\n"


def parse_deb822(text: str) -> list[AptSource]:
    sources = []
    for stanza in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        key = None
        for line in stanza.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            if line[0].isspace() and key:  # continuation line
                fields[key] += " " + line.strip()
                continue
            key, _, value = line.partition(":")
            key = key.strip().lower()
            fields[key] = value.strip()
        if "deb" not in fields.get("types", "").split():
            continue
        if fields.get("enabled", "yes").lower() == "no":
            continue
        sources.append(
            AptSource(
                uris=tuple(fields.get("uris", "").split()),
                suites=tuple(fields.get("suites", "").split()),
                components=tuple(fields.get("components", "").split()),
                signed_by=fields.get("signed-by") or None,
            )
        )
    return sources


def parse_one_line(text: str) -> list[AptSource]:
    sources = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line.startswith("deb "):
            continue
        options = {}
        if (match := re.match(r"deb\s+\[([^\]]*)\]\s+", line)) is not None:
            for opt in match.group(1).split():
                name, _, value = opt.partition("=")
                options[name.lower()] = value
            rest = line[match.end() :].split()
        else:
            rest = line.split()[1:]
        if len(rest) < 2:
            continue
        sources.append(AptSource((rest[0],), (rest[1],), tuple(rest[2:]), options.get("signed-by")))
    return sources


def host_sources(apt_dir: Path = APT_DIR) -> list[AptSource]:
    """Every enabled `deb` entry of the host's apt configuration."""
    found: list[AptSource] = []
    legacy = apt_dir / "sources.list"
    if legacy.is_file():
        found += parse_one_line(legacy.read_text())
    parts = apt_dir / "sources.list.d"
    for path in sorted(parts.glob("*")) if parts.is_dir() else []:
        if path.suffix == ".list":
            found += parse_one_line(path.read_text())
        elif path.suffix == ".sources":
            found += parse_deb822(path.read_text())
    return found


def host_codename(os_release: Path = Path("/etc/os-release")) -> str | None:
    try:
        text = os_release.read_text()
    except OSError:
        return None
    match = re.search(r"^VERSION_CODENAME=\"?([a-z]+)", text, re.MULTILINE)
    return match.group(1) if match else None


def debian_sources_file(apt_dir: Path = APT_DIR) -> str:
    """deb822 text of the host's Debian sources, for mmdebstrap and the image's apt."""
    debian = [s for s in host_sources(apt_dir) if s.is_debian()]
    if not debian:
        raise SandboxError(
            f"no Debian apt source found under {apt_dir}",
            "offline image builds need a Debian host with a Debian mirror in its apt sources;"
            " with a registry, build containers/*/Dockerfile with plain `docker build`",
        )
    return "\n".join(s.deb822() for s in debian)
