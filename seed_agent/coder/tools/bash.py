"""Run a shell command in a fresh process, with a timeout and bounded output."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
from typing import Dict

from .base import OUTPUT_LIMIT_CHARS, ToolContext, truncate

DEFAULT_TIMEOUT_S = 120
MAX_TIMEOUT_S = 600

SPEC = {
    "name": "bash",
    "description": (
        "Run a shell command in the working directory and return its exit code and "
        "combined stdout/stderr. Each call starts a fresh shell: `cd` and exported "
        "variables do not persist (chain with &&). Stdin is empty, so interactive "
        "programs (editors, pagers, prompts) cannot be used. Long output is cut in the "
        f"middle. Commands are killed after `timeout` seconds (default {DEFAULT_TIMEOUT_S})."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command line to run."},
            "timeout": {
                "type": "integer",
                "description": f"Seconds before the command is killed (max {MAX_TIMEOUT_S}).",
            },
        },
        "required": ["command"],
    },
}


class _BoundedReader(threading.Thread):
    """Drains a pipe, keeping only its head and tail so huge output cannot fill memory."""

    def __init__(self, pipe, keep: int) -> None:
        super().__init__(daemon=True)
        self.pipe, self.keep = pipe, keep
        self.head, self.tail, self.total = b"", b"", 0

    def run(self) -> None:
        try:
            for chunk in iter(lambda: self.pipe.read1(65536), b""):
                self.total += len(chunk)
                room = self.keep - len(self.head)
                if room > 0:
                    self.head += chunk[:room]
                    chunk = chunk[room:]
                self.tail = (self.tail + chunk)[-self.keep :]
        except (OSError, ValueError):  # the pipe was closed under us after a timeout
            pass

    def text(self) -> str:
        data = self.head + self.tail
        text = data.decode("utf-8", errors="replace")
        omitted = self.total - len(data)
        if omitted > 0:  # cut in the middle already: say how much, then cut to the limit
            middle = len(self.head.decode("utf-8", errors="replace"))
            text = text[:middle] + f"\n[... {omitted} more bytes omitted ...]\n" + text[middle:]
        return truncate(text)


def run(args: Dict, ctx: ToolContext) -> str:
    timeout = min(args.get("timeout") or DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S, ctx.seconds_left())
    timeout = max(timeout, 1)
    shell = shutil.which("bash") or "/bin/sh"
    proc = subprocess.Popen(
        [shell, "-c", args["command"]],
        cwd=ctx.workdir,
        env=ctx.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, so a timeout kills its children too
    )
    reader = _BoundedReader(proc.stdout, OUTPUT_LIMIT_CHARS)
    reader.start()
    try:
        code = proc.wait(timeout=timeout)
        status = f"[exit code {code}]"
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        proc.wait()
        status = (
            f"[timed out after {timeout:.0f} s; the command was killed. Run long jobs "
            "in the background with output to a file, or narrow them down.]"
        )
    except BaseException:  # the agent is being stopped: take the command down with it
        _kill_group(proc.pid)
        raise
    # A child that left the process group may keep the pipe open: don't wait for it forever.
    reader.join(timeout=5)
    proc.stdout.close()
    output = reader.text() or "(no output)"
    return f"{output.rstrip()}\n{status}"


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:  # already gone
        pass
