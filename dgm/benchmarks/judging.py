"""Helpers every judge shares: staging files for the sandbox's user, and reading the
report files the tests wrote (untrusted XML)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path


def readable_by_sandbox(root: Path) -> None:
    """Let the sandbox's non-root user read a staged folder (temp dirs are 0700)."""
    for path in [root, *root.rglob("*")]:
        if path.is_symlink():
            continue
        extra = 0o755 if path.is_dir() else 0o644
        path.chmod(path.stat().st_mode | extra)


def xml_report_root(data: bytes, max_bytes: int) -> ET.Element | None:
    """The root of a report the tests wrote (so untrusted): None when it is too big, not
    well formed, or declares a DTD or entities (no entity expansion is ever attempted)."""
    if len(data) > max_bytes or b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        return None
    try:
        return ET.fromstring(data)
    except ET.ParseError:
        return None
