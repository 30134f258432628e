"""Tar in and out of a sandbox, treating whatever comes out as hostile.

Extraction does not rely on `tarfile`'s extraction filters (they arrived in 3.11.4 and
their rules changed between patch releases): it writes every member itself. Only plain
folders and regular files come out; the first absolute name, `..` component, symlink,
hard link, device, FIFO or other special member refuses the whole copy-out, or, when the
caller asks for it (`skipped=`, the agent's /out), is left out with a note naming it while
the plain files beside it come out. Each
member is written by walking the target one component at a time with `O_NOFOLLOW`
(so nothing already in the target, planted or raced, is followed), files are created
`O_EXCL` with plain permission bits (no set-uid), and the total size and member count
are capped, so a container cannot fill the host disk through copy-out.
"""

from __future__ import annotations

import io
import os
import stat
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


class UnsafeEntry(SandboxError):
    """One member of a copy-out that may not come out (a link, a special file, a bad name)."""


def safe_extract(
    fileobj: IO[bytes],
    target: Path,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_members: int = DEFAULT_MAX_MEMBERS,
    skipped: list[str] | None = None,
) -> list[str]:
    """Extract an untrusted tar into `target`; returns the member names written.

    Raises SandboxError (and writes nothing further) on the first unsafe member, unless
    `skipped` is a list: then an unsafe member is left out and a note naming it appended.
    Size and count caps always refuse the whole copy-out.
    """
    target = Path(target)
    target.mkdir(parents=True, exist_ok=True)
    root = os.open(target, _DIR_FLAGS)
    written: list[str] = []
    budget = [max_bytes]
    try:
        with tarfile.open(fileobj=fileobj, mode="r|*") as tar:
            for count, member in enumerate(tar, start=1):
                if count > max_members:
                    raise SandboxError(f"copy-out has more than {max_members} entries")
                if member.size > budget[0]:
                    raise SandboxError(f"copy-out exceeds the size cap of {max_bytes} bytes")
                try:
                    written.append(_extract(tar, member, root, budget, max_bytes))
                except UnsafeEntry as exc:
                    if skipped is None:
                        raise
                    skipped.append(exc.message)
    except tarfile.TarError as exc:
        raise SandboxError(f"copy-out is not a readable tar stream: {exc}") from None
    finally:
        os.close(root)
    return written


def _extract(
    tar: tarfile.TarFile, member: tarfile.TarInfo, root: int, budget: list[int], max_bytes: int
) -> str:
    parts = _parts(member)
    if member.isdir():
        os.close(_folder(root, parts, member.name))
    elif member.isreg():
        source = tar.extractfile(member)
        assert source is not None
        _write(root, parts, member, source, budget, max_bytes)
    else:
        _refuse(member.name, f"a {_KINDS.get(member.type, 'special')} entry")
    return "/".join(parts)


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_KINDS = {
    tarfile.SYMTYPE: "symbolic link",
    tarfile.LNKTYPE: "hard link",
    tarfile.CHRTYPE: "character device",
    tarfile.BLKTYPE: "block device",
    tarfile.FIFOTYPE: "FIFO",
}


def _refuse(name: str, why: str) -> None:
    raise UnsafeEntry(
        f"refused unsafe entry {name!r} in copy-out: {why}",
        "only plain files and folders come out of a sandbox",
    )


def _parts(member: tarfile.TarInfo) -> list[str]:
    name = member.name
    if name.startswith("/") or "\0" in name:
        _refuse(name, "an absolute path")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        _refuse(name, "a `..` component")
    if not parts:
        _refuse(name, "an empty name")
    return parts


def _folder(root: int, parts: list[str], name: str) -> int:
    """An fd for the folder `parts` under `root`, made as needed, never through a link."""
    fd = os.dup(root)
    for part in parts:
        try:
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                os.mkdir(part, 0o755, dir_fd=fd)
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except OSError as exc:
            os.close(fd)
            _refuse(name, f"its folder {part!r} is not a plain folder ({exc.strerror})")
        os.close(fd)
        fd = nxt
    return fd


def _write(
    root: int,
    parts: list[str],
    member: tarfile.TarInfo,
    source: IO[bytes],
    budget: list[int],
    max_bytes: int,
) -> None:
    folder = _folder(root, parts[:-1], member.name)
    try:
        name = parts[-1]
        try:
            if stat.S_ISDIR(os.lstat(name, dir_fd=folder).st_mode):
                _refuse(member.name, "a folder of that name came first")
            os.unlink(name, dir_fd=folder)  # a repeated member: the last one wins, as in tar
        except FileNotFoundError:
            pass
        mode = 0o755 if member.mode & 0o111 else 0o644
        out = os.open(name, _NEW_FILE, mode, dir_fd=folder)
    finally:
        os.close(folder)
    with os.fdopen(out, "wb") as fh:
        while chunk := source.read(1 << 20):
            budget[0] -= len(chunk)
            if budget[0] < 0:
                raise SandboxError(f"copy-out exceeds the size cap of {max_bytes} bytes")
            fh.write(chunk)
