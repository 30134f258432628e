"""The image builder takes its mirror from the host's apt config, Debian entries only."""

from __future__ import annotations

from pathlib import Path

import pytest

from dgm.errors import SandboxError
from dgm.sandbox import apt_sources


def _apt_dir(tmp_path: Path) -> Path:
    parts = tmp_path / "sources.list.d"
    parts.mkdir(parents=True)
    (parts / "debian.sources").write_text(
        "Types: deb\n# a comment\nURIs: http://mirror.example/debian\n"
        "Suites: bookworm bookworm-updates\nComponents: main\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
        "Types: deb-src\nURIs: http://mirror.example/debian\nSuites: bookworm\n"
        "Components: main\n"
    )
    (parts / "nodesource.sources").write_text(
        "Types: deb\nURIs: https://deb.nodesource.com/node_20.x\nSuites: nodistro\n"
        "Components: main\nSigned-By: /usr/share/keyrings/nodesource.gpg\n"
    )
    (parts / "google.list").write_text(
        "deb [signed-by=/usr/share/keyrings/cloud.google.gpg] https://packages.cloud.google.com/apt"
        " cloud-sdk main\n"
    )
    (parts / "security.list").write_text(
        "deb http://proxy.local:3142/debian-security bookworm-security main # comment\n"
    )
    (parts / "off.sources.disabled").write_text("Types: deb\nURIs: http://x/debian\n")
    return tmp_path


def test_only_debian_entries_are_kept_and_mirror_hosts_come_from_the_host(tmp_path) -> None:
    text = apt_sources.debian_sources_file(_apt_dir(tmp_path))
    assert "http://mirror.example/debian" in text
    assert "Suites: bookworm bookworm-updates" in text
    assert "http://proxy.local:3142/debian-security" in text
    assert "nodesource" not in text and "google" not in text
    assert "deb-src" not in text and "http://x/debian" not in text


def test_no_debian_source_is_an_error_with_a_fix(tmp_path) -> None:
    (tmp_path / "sources.list.d").mkdir()
    with pytest.raises(SandboxError, match="no Debian apt source") as info:
        apt_sources.debian_sources_file(tmp_path)
    assert "docker build" in (info.value.hint or "")
