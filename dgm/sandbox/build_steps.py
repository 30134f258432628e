"""Image builds a person can follow: a line per step, a time limit, and on failure the
last lines the failing tool printed (shown before the one-line error names it).

Used for mmdebstrap (the base image) and for Docker builds (every image above it).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable

from dgm.errors import SandboxError

Log = Callable[[str], None]
DEFAULT_TIMEOUT_S = 3600.0
TAIL_LINES = 25


class Steps:
    """One image's build: progress lines with the elapsed time, the output's tail."""

    def __init__(self, name: str, log: Log, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.name, self.log, self.timeout_s = name, log, timeout_s
        self.started = time.monotonic()
        self.tail: deque[str] = deque(maxlen=TAIL_LINES)

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def output(self, line: str, step: bool = False) -> None:
        line = line.rstrip()
        if not line:
            return
        self.tail.append(line)
        if step:
            self.log(f"{self.name}: [{self.elapsed():4.0f}s] {line}")

    def fail(self, problem: str, hint: str) -> SandboxError:
        """Print the tail, then an error whose hint can rightly point at it."""
        if self.tail:
            self.log(f"{self.name}: the last {len(self.tail)} lines of output:")
            for line in self.tail:
                self.log(f"  | {line}")
        return SandboxError(f"building image {self.name} {problem}", hint)

    def timed_out(self, hint: str) -> SandboxError:
        return self.fail(f"timed out after {self.timeout_s:.0f} s", hint)


def run_tool(cmd: list[str], steps: Steps, is_step: Callable[[str], bool], hint: str) -> None:
    """Run a build tool, its stdout and stderr merged and followed line by line; kill
    its whole process group at the time limit."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace", start_new_session=True)  # fmt: skip
    expired = threading.Event()

    def kill_at_deadline() -> None:
        try:
            proc.wait(timeout=steps.timeout_s)
        except subprocess.TimeoutExpired:
            expired.set()
            os.killpg(proc.pid, signal.SIGKILL)

    threading.Thread(target=kill_at_deadline, daemon=True).start()
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            steps.output(line, step=is_step(line))
    except BaseException:  # Ctrl-C: its own session does not get the terminal's SIGINT
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    code = proc.wait()
    if expired.is_set():
        raise steps.timed_out(hint)
    if code != 0:
        raise steps.fail(f"failed: `{cmd[0]}` exited with {code}", hint)


def follow_docker_build(events: Iterable[dict], steps: Steps, hint: str) -> None:
    """Consume a Docker build's event stream: log each `Step i/n`, keep the tail, and at
    the time limit (even inside a silent step) cut the connection, which makes the
    engine cancel the build and remove its intermediate container."""
    expired = threading.Event()

    def cut_at_deadline() -> None:
        if not done.wait(max(0.0, steps.timeout_s - steps.elapsed())):
            expired.set()
            _disconnect(events)

    done = threading.Event()
    threading.Thread(target=cut_at_deadline, daemon=True).start()
    try:
        _follow(events, steps, hint)
    except SandboxError:
        raise
    except Exception:
        if expired.is_set():
            raise steps.timed_out(hint) from None
        raise
    finally:
        done.set()
    if expired.is_set():
        raise steps.timed_out(hint)


def _follow(events: Iterable[dict], steps: Steps, hint: str) -> None:
    for event in events:
        if "error" in event:
            steps.output(event["error"])
            raise steps.fail(f"failed: {event['error'].strip().splitlines()[-1]}", hint)
        for line in event.get("stream", "").splitlines():
            steps.output(line, step=line.startswith("Step "))


def _disconnect(events: Iterable[dict]) -> None:
    """Shut the socket under the Docker SDK's build stream (a generator holding the
    HTTP response); a blocked read in the other thread then ends at once."""
    frame = getattr(events, "gi_frame", None)
    response = frame.f_locals.get("response") if frame is not None else None
    try:
        response.raw._fp.fp.raw._sock.shutdown(socket.SHUT_RDWR)  # type: ignore[union-attr]
    except Exception:  # another SDK layout: closing the response is the next best
        close = getattr(response, "close", None)
        if close:
            close()
