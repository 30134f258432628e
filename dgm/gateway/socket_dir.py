"""Where job sockets live: a folder only this user can enter.

A job's socket is the job's budget: whoever connects spends it. So sockets are made
0600 inside a folder that is 0700 and owned by the current user, and the default
folder is a fresh `mkdtemp` per process (a fixed name such as `/tmp/dgm-llm-<uid>`
could be made first by another local user, who would then own it). A folder given by
the caller that is not private is refused, never repaired behind the user's back.
The sandbox reaches its socket through a bind mount of the socket file itself, which
does not pass through the folder (see `dgm.sandbox.docker_backend.grant_socket_access`).
"""

from __future__ import annotations

import atexit
import hashlib
import os
import stat
import tempfile
import threading
from pathlib import Path

from dgm.errors import DgmError

_lock = threading.Lock()
_private: Path | None = None


def private_socket_dir() -> Path:
    """This process's own socket folder (0700, unpredictable name), made on first use."""
    global _private
    with _lock:
        if _private is None or not _private.is_dir():
            _private = Path(tempfile.mkdtemp(prefix="dgm-llm-"))  # mode 0700
            atexit.register(_remove_if_empty, _private)
        return _private


def short_socket_path(job_id: str) -> Path:
    """A socket path for a job in the private folder, well under the 107-byte limit."""
    digest = hashlib.sha256(job_id.encode()).hexdigest()[:16]
    return private_socket_dir() / f"{digest}.sock"


def prepare_socket_folder(folder: Path) -> None:
    """Make `folder` (0700) if it is missing; refuse it unless it is private to us."""
    folder = Path(folder)
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except FileNotFoundError:
        raise DgmError(
            f"the socket folder {folder.parent} does not exist",
            "create it, or give a socket path in an existing private folder",
        ) from None
    check_socket_folder(folder)


def check_socket_folder(folder: Path) -> None:
    st = os.lstat(folder)
    fix = f"use a folder only you can enter: `mkdir -m 700 DIR`, or `chmod 700 {folder}`"
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise DgmError(f"the socket folder {folder} is not a plain folder (a link?)", fix)
    if st.st_uid != os.geteuid():
        raise DgmError(
            f"the socket folder {folder} belongs to uid {st.st_uid}, not to you "
            f"(uid {os.geteuid()}): its owner could reach every job's socket",
            "give a socket path in a folder you own (mkdir -m 700 DIR)",
        )
    if st.st_mode & 0o077:
        raise DgmError(
            f"the socket folder {folder} has mode {oct(stat.S_IMODE(st.st_mode))}: other "
            "users could reach its sockets and spend the jobs' budgets",
            fix,
        )


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass
