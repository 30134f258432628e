"""One process at a time on a run directory: `run.lock`, held while `dgm run`/`dgm resume`
drives the run.

Why flock plus a JSON record: the kernel releases a flock when its holder dies, however
it dies (kill -9 included), so a stale lock can never block a resume, and two processes
racing for a dead holder's lock cannot both win: taking over is the kernel's decision,
never a "the pid looks dead, delete the file" guess that pid reuse or a second racer
could get wrong. flock cannot say who holds it, so the holder writes a JSON record (pid,
host, since) into the locked file for the message the loser prints. Only where the
filesystem refuses flock (some network mounts) does the record decide alone: a holder
on this host whose pid is gone is stale and is taken over.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dgm.errors import RunDirError

LOCK_FILE = "run.lock"


@dataclass(frozen=True)
class Holder:
    pid: int
    host: str
    since: float

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(self.since))
        return f"pid {self.pid} on host {self.host} since {when}"

    @classmethod
    def parse(cls, text: str) -> Holder | None:
        try:
            data = json.loads(text)
            return cls(int(data["pid"]), str(data["host"]), float(data["since"]))
        except (ValueError, KeyError, TypeError):
            return None


class RunLocked(RunDirError):
    """Another live process drives this run."""

    def __init__(self, path: Path, holder: Holder | None) -> None:
        who = holder.describe() if holder else "another process (it has not said which yet)"
        stop = f"stop it (Ctrl-C there, or `kill {holder.pid}`)" if holder else "stop it"
        super().__init__(
            f"run {path} is in use by {who}",
            f"wait for that process to finish or {stop}, then `dgm resume {path}`",
        )
        self.holder = holder


class RunLock:
    """`with RunLock(run_dir) as lock:`; `lock.took_over` names a dead holder it replaced."""

    def __init__(self, run_dir: str | Path) -> None:
        self.path = Path(run_dir).resolve()
        self.file = self.path / LOCK_FILE
        self.took_over: Holder | None = None
        self._fd: int | None = None

    def acquire(self) -> RunLock:
        fd = os.open(self.file, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            previous = Holder.parse(_read(fd))
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise RunLocked(self.path, Holder.parse(_read(fd))) from None
                # No flock on this filesystem: the record alone decides.
                if previous is not None and _alive_here(previous):
                    raise RunLocked(self.path, previous) from None
            me = Holder(os.getpid(), socket.gethostname(), time.time())
            if previous is not None and previous.pid != me.pid:
                self.took_over = previous
            _write(fd, json.dumps(me.__dict__))
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, 0)  # no record: nobody holds it
        except OSError:
            pass  # a full disk must not keep the lock
        os.close(self._fd)  # closing drops the flock
        self._fd = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.release()


def _alive_here(holder: Holder) -> bool:
    if holder.host != socket.gethostname():
        return True  # another host's process: we cannot tell, so it counts as alive
    try:
        os.kill(holder.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    return os.read(fd, 4096).decode(errors="replace")


def _write(fd: int, text: str) -> None:
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, text.encode(), 0)
    except OSError:
        pass  # a full disk: the flock still holds, only the message loses its names
