"""Opening a sandbox: choose the backend, hand back a context manager, always clean up."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal, Protocol

from dgm.errors import SandboxError
from dgm.sandbox.spec import ExecResult, SandboxSpec

Backend = Literal["docker", "local", "auto"]
BACKENDS = ("docker", "local", "auto")


class Sandbox(Protocol):
    backend: str
    strength: str
    """'strong' for Docker; the local backend says how much weaker it is."""

    @property
    def name(self) -> str: ...

    def exec(
        self,
        cmd: list[str] | str,
        timeout: float,
        workdir: str | None = None,
        env: dict[str, str] | None = None,
    ) -> ExecResult: ...

    def copy_in(self, host_path: Path | str, container_dir: str) -> None: ...

    def copy_out(
        self, container_path: str, host_dir: Path | str, skipped: list[str] | None = None
    ) -> list[str]: ...

    def close(self) -> None: ...


def choose_backend(backend: Backend | str) -> str:
    """'auto' is docker when an engine answers, else local."""
    if backend not in BACKENDS:
        raise SandboxError(
            f"unknown sandbox backend {backend!r}", f"use one of: {', '.join(BACKENDS)}"
        )
    if backend != "auto":
        return backend
    from dgm.sandbox.docker_client import docker_available

    return "docker" if docker_available() is None else "local"


def create_sandbox(spec: SandboxSpec, backend: Backend | str = "docker") -> Sandbox:
    """A started sandbox; the caller must `close()` it (prefer `open_sandbox`)."""
    if choose_backend(backend) == "docker":
        from dgm.sandbox.docker_backend import DockerSandbox

        return DockerSandbox(spec)
    from dgm.sandbox.local_backend import LocalSandbox

    return LocalSandbox(spec)


@contextmanager
def open_sandbox(spec: SandboxSpec, backend: Backend | str = "docker") -> Iterator[Sandbox]:
    """`with open_sandbox(spec) as box: box.exec([...], timeout=60)`.

    The sandbox is removed on every way out: success, error, timeout, Ctrl-C.
    """
    sandbox = create_sandbox(spec, backend)
    try:
        yield sandbox
    finally:
        sandbox.close()


def run_command(
    spec: SandboxSpec, cmd: list[str] | str, timeout: float, backend: Backend | str = "docker"
) -> ExecResult:
    """Run one command in a fresh sandbox and remove it.

    The command is exec'd in a container that outlives it (not run as its main process,
    ~0.4 s more a call): only then can the harness still read the container's memory
    counters after the command died, to tell its own memory limit from the host's OOM
    killer (an outage, raised as InfrastructureFailure; see oom.py). The judge's test runs
    come through here."""
    with open_sandbox(spec, backend) as sandbox:
        return sandbox.exec(cmd, timeout)
