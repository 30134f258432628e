"""Tar in and out of a sandbox, treating whatever comes out as hostile.

Extraction uses the standard library's `data` filter (PEP 706): it refuses absolute
names, `..` escapes, links that point outside the target, device files, and strips
set-uid bits. On top of it we cap the total size and the member count, so a container
cannot fill the host disk through copy-out.
"""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from dgm.errors import SandboxError

DEFAULT_MAX_BYTES = 1024**3
DEFAULT_MAX_MEMBERS = 200_000


def pack(host_path: Path, arcname: str | None = None) -> bytes:
    """A tar of a host file or folder (trusted input: the host's own files)."""
    host_path = Path(host_path)
    if not host_path.exists():
        raise SandboxError(f"cannot copy {host_path} into the sandbox: it does not exist")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(str(host_path), arcname=arcname or host_path.name)
    return buf.getvalue()


def spool(chunks: Iterable[bytes], max_bytes: int = DEFAULT_MAX_BYTES) -> IO[bytes]:
    """Collect a tar stream into a temp file, stopping at `max_bytes`."""
    spooled = tempfile.SpooledTemporaryFile(max_size=16 * 1024**2)
    total = 0
    for chunk in chunks:
        total += len(chunk)
        if total > max_bytes:
            spooled.close()
            raise SandboxError(
                f"copy-out exceeds the size cap of {max_bytes} bytes",
                "copy out a smaller folder or raise max_bytes",
            )
        spooled.write(chunk)
    spooled.seek(0)
    return spooled


def safe_extract(
    fileobj: IO[bytes],
    target: Path,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_members: int = DEFAULT_MAX_MEMBERS,
) -> list[str]:
    """Extract an untrusted tar into `target`; returns the member names written.

    Raises SandboxError (and writes nothing further) on the first unsafe member.
    """
    target = Path(target)
    target.mkdir(parents=True, exist_ok=True)
    dest = os.path.realpath(target)
    written: list[str] = []
    total = 0
    with tarfile.open(fileobj=fileobj, mode="r|*") as tar:
        for count, member in enumerate(tar, start=1):
            if count > max_members:
                raise SandboxError(f"copy-out has more than {max_members} entries")
            total += max(member.size, 0)
            if total > max_bytes:
                raise SandboxError(f"copy-out exceeds the size cap of {max_bytes} bytes")
            try:
                if member.name.startswith("/"):  # the data filter would strip the slash
                    raise tarfile.AbsolutePathError(member)
                safe = tarfile.data_filter(member, dest)
            except tarfile.FilterError as exc:
                raise SandboxError(
                    f"refused unsafe entry {member.name!r} in copy-out: {exc}",
                    "the sandboxed code planted a path that escapes the target folder",
                ) from None
            tar.extract(safe, dest, set_attrs=True, filter="fully_trusted")
            written.append(safe.name)
    return written
