"""What a sandbox is asked for (SandboxSpec) and what a command in it returns (ExecResult).

Both backends (docker, local) take the same spec, so callers never branch on the backend.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from dgm.errors import SandboxError

# Environment names that look like credentials. The gateway holds the keys; a sandbox
# never gets one, even by mistake (DGM_LLM_TOKEN is a per-job token, not a key).
_SECRET_NAME = re.compile(r"(API_?KEY|SECRET|PASSWORD|ACCESS_KEY|AWS_|_TOKEN$)", re.IGNORECASE)
_ALLOWED_SECRET_LOOKING = {"DGM_LLM_TOKEN"}

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def parse_size(text: str | int, what: str = "size") -> int:
    """'4g' / '512m' / '1024' -> bytes."""
    if isinstance(text, int):
        return text
    match = _SIZE.match(text)
    if not match:
        raise SandboxError(f"invalid {what} {text!r}", "use a number with k, m or g, e.g. '512m'")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


@dataclass(frozen=True)
class Mount:
    """A host path bound into the sandbox. Read-only unless said otherwise."""

    source: Path | str
    target: str
    read_only: bool = True

    @classmethod
    def parse(cls, text: str) -> Mount:
        """'SRC:DST[:ro|rw]' as the CLI takes it (read-write unless ':ro')."""
        parts = text.split(":")
        if len(parts) not in (2, 3) or not parts[0] or not parts[1].startswith("/"):
            raise SandboxError(
                f"invalid mount {text!r}", "write it as SRC:DST or SRC:DST:ro with DST absolute"
            )
        mode = parts[2] if len(parts) == 3 else "rw"
        if mode not in ("ro", "rw"):
            raise SandboxError(f"invalid mount mode {mode!r} in {text!r}", "use ':ro' or ':rw'")
        return cls(Path(parts[0]).resolve(), parts[1], read_only=mode == "ro")


@dataclass(frozen=True)
class ResourceLimits:
    """What one container may use: memory, CPUs, processes, disk, output. Sizes are bytes
    or strings like '4g'. (Not the search budget, `dgm.loop.scheduler.SearchBudget`, nor
    run.toml's `[limits]`, `dgm.config.StopLimitsConfig`.)"""

    memory: str | int = "4g"
    """Memory and swap together (no swap beyond it)."""
    cpus: float = 1.0
    pids: int = 512
    disk: str | int | None = "4g"
    """Cap of each writable directory (tmpfs size; see README for why tmpfs)."""
    max_output: int = 1024 * 1024
    """Bytes of command output kept (head and tail); the rest is dropped."""

    @property
    def memory_bytes(self) -> int:
        return parse_size(self.memory, "memory limit")

    @property
    def disk_bytes(self) -> int | None:
        return None if self.disk is None else parse_size(self.disk, "disk limit")

    @classmethod
    def from_config(cls, cfg: object) -> ResourceLimits:
        """From a `dgm.config.SandboxConfig` (memory, cpus, pids, disk)."""
        return cls(
            memory=cfg.memory,  # type: ignore[attr-defined]
            cpus=cfg.cpus,  # type: ignore[attr-defined]
            pids=cfg.pids,  # type: ignore[attr-defined]
            disk=cfg.disk,  # type: ignore[attr-defined]
        )


@dataclass(frozen=True)
class SandboxSpec:
    image: str = "runtime"
    """An image name known to `dgm.sandbox.images` ('runtime', 'polyglot') or a full tag."""
    mounts: tuple[Mount, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    workdir: str = "/work"
    user: str = "1000:1000"
    limits: ResourceLimits = field(default_factory=ResourceLimits)
    labels: dict[str, str] = field(default_factory=dict)
    """Extra labels; use `dgm.run` and `dgm.job` to attribute the container."""
    network: bool = False
    writable_dirs: tuple[str, ...] = ("/tmp", "/home/agent")
    """Scratch directories besides `workdir`, each a size-capped tmpfs."""
    writable_root: bool = False
    """Let the container write its own root file system (a throwaway layer). Only for
    judges whose trusted script must install into the image (SWE-bench's eval scripts)."""

    def __post_init__(self) -> None:
        bad = [k for k in self.env if _SECRET_NAME.search(k) and k not in _ALLOWED_SECRET_LOOKING]
        if bad:
            raise SandboxError(
                f"refusing to pass credential-like variables into a sandbox: {', '.join(bad)}",
                "API keys stay with the gateway; give the agent DGM_LLM_URL/DGM_LLM_TOKEN",
            )
        object.__setattr__(self, "mounts", tuple(self.mounts))
        object.__setattr__(self, "writable_dirs", tuple(self.writable_dirs))
        if not self.workdir.startswith("/"):
            raise SandboxError(f"workdir {self.workdir!r} is not absolute", "use e.g. /work")

    def with_(self, **changes: object) -> SandboxSpec:
        return replace(self, **changes)  # type: ignore[arg-type]


@dataclass(frozen=True)
class ExecResult:
    exit_code: int
    """The command's exit status; -9 (or 137) when killed."""
    output: str
    """stdout and stderr interleaved, capped at `ResourceLimits.max_output` (head + tail)."""
    timed_out: bool = False
    duration_s: float = 0.0
    oom_killed: bool = False
    truncated: bool = False
    pids_limited: bool = False
    """The process limit was reached while it ran (a fork bomb, or too many threads)."""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


class OutputBuffer:
    """Keeps the first and last `cap/2` bytes of a stream: the start says what ran, the
    end says how it finished (test summaries are at the end)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def write(self, chunk: bytes) -> None:
        room = self.cap // 2 - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail += chunk
        excess = len(self.tail) - (self.cap - self.cap // 2)
        if excess > 0:
            del self.tail[:excess]
            self.dropped += excess

    @property
    def truncated(self) -> bool:
        return self.dropped > 0

    def text(self) -> str:
        middle = f"\n... [{self.dropped} bytes of output dropped] ...\n" if self.dropped else ""
        raw = bytes(self.head).decode("utf-8", "replace") + middle
        return raw + bytes(self.tail).decode("utf-8", "replace")
