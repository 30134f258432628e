"""Reading files an agent could have written, without following what they point at.

Anything under an agent's codebase, a workspace, or a sandbox's copied-out `/out` is
hostile: a `notes.md -> /proc/self/environ` symlink would put the dgm process's API keys
into a prompt, a FIFO would hang the host on open, a 50 GB file would fill memory. So:

- every path is walked from a trusted root one component at a time with `dir_fd` and
  `O_NOFOLLOW`: no symlink is followed, neither in the last component nor in a folder
  above it, and nothing can be swapped in between a check and the open (no path checks
  that race);
- files are opened `O_NONBLOCK` and must be regular files by `fstat` of the open fd
  (FIFOs, devices, sockets are refused without blocking);
- reads are capped.

`UnsafeFile` names the path and the reason; readers that must not fail use the
`*_or_none` forms.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from dgm.errors import DgmError

DEFAULT_LIMIT = 16 * 1024 * 1024
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
_DIR_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC


class UnsafeFile(DgmError):
    """A file an agent controls is a link, a special file, or too big to read."""


def _open_dir(root: Path) -> int:
    try:
        return os.open(root, _DIR_FLAGS)
    except OSError as exc:
        raise UnsafeFile(f"{root}: not a readable folder ({exc.strerror})") from None


def _parts(rel: str | PurePosixPath) -> list[str]:
    parts = [p for p in PurePosixPath(rel).parts if p not in ("", ".")]
    if PurePosixPath(rel).is_absolute() or ".." in parts or not parts:
        raise UnsafeFile(f"{rel!s}: not a plain relative path")
    return parts


def open_under(root: Path, rel: str | PurePosixPath) -> int:
    """An fd for the regular file `root/rel`, never following a link on the way."""
    parts = _parts(rel)
    fd = _open_dir(root)
    try:
        for name in parts[:-1]:
            try:
                nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                why = f"folder {name!r} refused ({exc.strerror})"
                raise UnsafeFile(f"{root / rel}: {why}") from None
            os.close(fd)
            fd = nxt
        try:
            file_fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=fd)
        except OSError as exc:
            why = "a symbolic link" if exc.errno == 40 else exc.strerror  # ELOOP
            raise UnsafeFile(f"{root / rel}: refused ({why})") from None
    finally:
        os.close(fd)
    mode = os.fstat(file_fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(file_fd)
        raise UnsafeFile(f"{root / rel}: refused (not a regular file)")
    return file_fd


def read_bytes(root: Path, rel: str | PurePosixPath, limit: int = DEFAULT_LIMIT) -> bytes:
    """The first `limit` bytes of `root/rel`; raises UnsafeFile if it is longer, a link,
    or not a regular file."""
    fd = open_under(root, rel)
    try:
        if os.fstat(fd).st_size > limit:
            raise UnsafeFile(f"{Path(root) / rel}: larger than {limit} bytes")
        chunks, size = [], 0
        while chunk := os.read(fd, min(1 << 20, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:  # grew after fstat
                raise UnsafeFile(f"{Path(root) / rel}: larger than {limit} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(root: Path, rel: str | PurePosixPath, limit: int = DEFAULT_LIMIT) -> str:
    return read_bytes(root, rel, limit).decode("utf-8", "replace")


def read_text_or_none(path: Path | None, limit: int = DEFAULT_LIMIT) -> str | None:
    """`path`'s text, or None when it is missing, unsafe or too big. Only the last
    component is protected: for files the host wrote into a folder it made itself."""
    if path is None:
        return None
    try:
        return read_text(Path(path).parent, Path(path).name, limit)
    except UnsafeFile:
        return None


def read_head(path: Path | None, limit: int) -> str | None:
    """Up to `limit` characters of a possibly huge file (no size refusal), or None."""
    if path is None:
        return None
    try:
        fd = open_under(Path(path).parent, Path(path).name)
    except UnsafeFile:
        return None
    with os.fdopen(fd, "rb") as fh:
        return fh.read(limit * 4 + 4).decode("utf-8", "replace")[: limit + 1]


def is_regular(path: Path) -> bool:
    """Whether `path` itself (not what a link points at) is a regular file."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def walk_files(root: Path, max_files: int = 100_000) -> Iterator[str]:
    """Relative paths of the regular files under `root`, sorted, never entering a
    symlinked folder; links and special files are skipped. Hidden names (starting
    with a dot) are skipped too: `.git` and friends are not the agent's source."""
    root_fd = _open_dir(root)
    count = 0
    try:
        stack: list[tuple[int, str]] = [(root_fd, "")]
        while stack:
            fd, prefix = stack.pop()
            try:
                with os.scandir(fd) as it:
                    entries = sorted(it, key=lambda e: e.name)
            finally:
                if fd != root_fd:
                    os.close(fd)
            subdirs = []
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                rel = f"{prefix}{entry.name}"
                if entry.is_dir(follow_symlinks=False):
                    subdirs.append(rel)
                elif entry.is_file(follow_symlinks=False):
                    count += 1
                    if count > max_files:
                        return
                    yield rel
            for rel in reversed(subdirs):
                try:
                    stack.append((_open_subdir(root_fd, rel), rel + "/"))
                except UnsafeFile:
                    continue
    finally:
        os.close(root_fd)


def _open_subdir(root_fd: int, rel: str) -> int:
    fd = os.dup(root_fd)
    try:
        for name in rel.split("/"):
            nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except OSError as exc:
        os.close(fd)
        raise UnsafeFile(f"{rel}: folder refused ({exc.strerror})") from None
    return fd


def write_text_fresh(folder: Path, name: str, text: str) -> Path:
    """Write `folder/name` as a new regular file. Whatever an agent left at that name (a
    link to a host file, above all) is removed first, never written through."""
    fd = _open_dir(Path(folder))
    try:
        try:
            mode = os.lstat(name, dir_fd=fd).st_mode
        except FileNotFoundError:
            mode = None
        if mode is not None:
            if stat.S_ISDIR(mode):
                raise UnsafeFile(f"{Path(folder) / name}: a folder is in the way")
            os.unlink(name, dir_fd=fd)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        out = os.open(name, flags, 0o644, dir_fd=fd)
    finally:
        os.close(fd)
    with os.fdopen(out, "w", encoding="utf-8") as fh:
        fh.write(text)
    return Path(folder) / name


def link_escapes(link: str, target: str) -> bool:
    """Whether a symlink at tree path `link` pointing at `target` may leave the tree,
    judged on the text alone: absolute, more leading `..` than the link is deep, or a
    `..` after a name (that name may itself be a link, e.g. `d -> .`, and `d/..` then
    climbs out). Targets that only climb real folders and then descend stay inside."""
    if not target or target.startswith("/") or "\0" in target:
        return True
    depth = len(PurePosixPath(link).parts) - 1
    descended = False
    for part in target.split("/"):
        if part == "..":
            depth -= 1
            if depth < 0 or descended:
                return True
        elif part not in ("", "."):
            descended = True
    return False


def escaping_links(root: Path) -> list[tuple[str, str]]:
    """(path, target) of every symlink under `root` that leaves it (links not followed)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):  # os.walk never enters a dir link
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            if os.path.islink(full):
                rel = os.path.relpath(full, root)
                target = os.readlink(full)
                if link_escapes(rel, target):
                    found.append((rel, target))
    return sorted(found)
