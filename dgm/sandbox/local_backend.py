"""The local sandbox: for machines without Docker. WEAKER than the Docker sandbox.

Each sandbox is a temporary folder on the host; the writable dirs live in it. With
`bubblewrap` installed, commands run in new user/pid/net/ipc namespaces over a
read-only view of the host (home folders hidden), with the sandbox's folders and
mounts bound at their usual paths (/work, /tmp, /agent, ...). Without bubblewrap,
commands are plain subprocesses in the temporary folder: they see the host's
network and files, mounts are refused, and paths are the host's.

Limits come from setrlimit: address space (memory), file size (disk, per file),
process count (pids; not enforced for root), and a process-group kill at the timeout.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from dgm.errors import SandboxError
from dgm.sandbox import tarsafe
from dgm.sandbox.docker_backend import HOME, as_argv
from dgm.sandbox.spec import ExecResult, OutputBuffer, SandboxSpec

_HIDDEN_HOST_DIRS = ("/root", "/home", "/run", "/var/run", "/tmp", "/var/tmp")


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


class LocalSandbox:
    backend = "local"

    def __init__(self, spec: SandboxSpec) -> None:
        self.spec = spec
        self.bwrap = bwrap_path()
        self.strength = "weak (bubblewrap)" if self.bwrap else "weakest (no isolation)"
        if spec.mounts and not self.bwrap:
            raise SandboxError(
                "the local sandbox without bubblewrap cannot mount folders",
                "install bubblewrap (apt-get install bubblewrap) or use the docker backend",
            )
        self.root = Path(tempfile.mkdtemp(prefix="dgm-local-sandbox-"))
        self.paths: dict[str, Path] = {}  # sandbox path -> host path
        for index, path in enumerate((spec.workdir, *spec.writable_dirs)):
            if path not in self.paths:
                self.paths[path] = self.root / f"d{index}"
                self.paths[path].mkdir()
        for mount in spec.mounts:
            if not Path(mount.source).exists():
                raise SandboxError(f"mount source {mount.source} does not exist")
            self.paths[mount.target] = Path(mount.source)

    @property
    def name(self) -> str:
        return self.root.name

    def host_path(self, sandbox_path: str) -> Path:
        """Where a sandbox path lives on the host (longest matching prefix)."""
        for prefix in sorted(self.paths, key=len, reverse=True):
            if sandbox_path == prefix or sandbox_path.startswith(prefix.rstrip("/") + "/"):
                rest = sandbox_path[len(prefix) :].lstrip("/")
                return self.paths[prefix] / rest
        raise SandboxError(f"{sandbox_path} is not a folder of this local sandbox")

    # -- commands -----------------------------------------------------------------------
    def _argv(self, cmd: list[str] | str, workdir: str) -> list[str]:
        if not self.bwrap:
            return as_argv(cmd)
        # A fresh root holding read-only binds of the host's top-level folders (so new
        # mount points such as /agent can be made), with home folders and /tmp hidden.
        argv = [self.bwrap, "--tmpfs", "/", "--dev", "/dev", "--proc", "/proc"]
        for entry in sorted(Path("/").iterdir()):
            name = str(entry)
            if name in ("/dev", "/proc", "/sys") or name in self.paths:
                continue
            if entry.is_symlink():
                argv += ["--symlink", str(entry.readlink()), name]
            elif name in _HIDDEN_HOST_DIRS:
                argv += ["--tmpfs", name]
            elif entry.is_dir():
                argv += ["--ro-bind", name, name]
        for target, source in sorted(self.paths.items()):
            read_only = any(m.target == target and m.read_only for m in self.spec.mounts)
            argv += ["--ro-bind" if read_only else "--bind", str(source), target]
        uid, _, gid = self.spec.user.partition(":")
        argv += ["--unshare-all", "--die-with-parent", "--new-session", "--chdir", workdir]
        if uid.isdigit():
            argv += ["--unshare-user", "--uid", uid, "--gid", gid or uid]
        if self.spec.network:
            argv.append("--share-net")
        return [*argv, "--", *as_argv(cmd)]

    def _limit(self) -> None:
        """Runs in the child before exec: resource limits of the spec."""
        limits = self.spec.limits
        memory = limits.memory_bytes
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        if limits.disk_bytes:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limits.disk_bytes, limits.disk_bytes))
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.pids, limits.pids))

    def exec(
        self,
        cmd: list[str] | str,
        timeout: float,
        workdir: str | None = None,
        env: dict[str, str] | None = None,
    ) -> ExecResult:
        workdir = workdir or self.spec.workdir
        cwd = "/" if self.bwrap else str(self.host_path(workdir))
        home = HOME if self.bwrap and HOME in self.paths else str(self.root)
        full_env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": home,
            "LANG": "C.UTF-8",
            **self.spec.env,
            **(env or {}),
        }
        SandboxSpec(env=full_env)  # the credential check
        started = time.monotonic()
        proc = subprocess.Popen(
            self._argv(cmd, workdir),
            cwd=cwd,
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=self._limit,
        )
        buffer = OutputBuffer(self.spec.limits.max_output)
        reader = threading.Thread(target=_drain, args=(proc, buffer), daemon=True)
        reader.start()
        timed_out = False
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:  # also on KeyboardInterrupt: nothing outlives the call
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
            reader.join(5)
        if timed_out:
            buffer.write(f"\n[dgm sandbox: killed at the {timeout:g} s timeout]\n".encode())
        code = proc.returncode
        return ExecResult(
            128 + -code if code < 0 else code,
            buffer.text(),
            timed_out,
            time.monotonic() - started,
            oom_killed=False,
            truncated=buffer.truncated,
        )

    # -- files ---------------------------------------------------------------------------
    def copy_in(self, host_path: Path | str, container_dir: str) -> None:
        data = tarsafe.pack(Path(host_path))
        import io

        tarsafe.safe_extract(io.BytesIO(data), self.host_path(container_dir))

    def copy_out(
        self,
        container_path: str,
        host_dir: Path | str,
        max_bytes: int = tarsafe.DEFAULT_MAX_BYTES,
        skipped: list[str] | None = None,
    ) -> list[str]:
        source = self.host_path(container_path)
        # Pack without following links (what the sandbox planted stays a link), then
        # extract with the same checks as the Docker backend.
        data = tarsafe.pack(source, arcname=source.name)
        if len(data) > max_bytes:
            raise SandboxError(f"copy-out exceeds the size cap of {max_bytes} bytes")
        import io

        return tarsafe.safe_extract(io.BytesIO(data), Path(host_dir), max_bytes, skipped=skipped)

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _drain(proc: subprocess.Popen, buffer: OutputBuffer) -> None:
    assert proc.stdout is not None
    for chunk in iter(lambda: proc.stdout.read1(65536), b""):  # type: ignore[union-attr]
        buffer.write(chunk)
