"""The Docker sandbox: one hardened container per sandbox, commands run in it by exec.

Hardening (all by default): no network, memory = memory+swap limit, CPU quota, pids
limit, every capability dropped, no-new-privileges, read-only root file system,
size-capped tmpfs for the writable dirs, commands as a non-root user.

The container's PID 1 (docker-init + `sleep`) runs as root *without capabilities*
so that a timed-out command can be killed with `kill -9 -1` as the command's own
user: that reaches every process the command could have started (they cannot change
uid) and leaves the container alive for copy-out. If that does not end the command,
the whole container is killed.
"""

from __future__ import annotations

import os
import socket
import stat
import threading
import time
import uuid
from pathlib import Path

from dgm.errors import InfrastructureFailure, SandboxError
from dgm.sandbox import images, oom, orphans, tarsafe
from dgm.sandbox.docker_client import docker_client
from dgm.sandbox.spec import ExecResult, OutputBuffer, SandboxSpec

HOME = "/home/agent"
_swept = False
_sweep_lock = threading.Lock()


def sweep_once() -> None:
    """Remove orphans of crashed dgm processes, once per process (the next start)."""
    global _swept
    with _sweep_lock:
        if not _swept:
            orphans.sweep(docker_client())
            _swept = True


def as_argv(cmd: list[str] | str) -> list[str]:
    return ["/bin/sh", "-c", cmd] if isinstance(cmd, str) else list(cmd)


def grant_socket_access(path: Path, user: str = "1000:1000") -> None:
    """Let the sandbox's user connect to a host unix socket (or the sockets in a folder)
    that is mounted in: connect(2) needs write permission on the socket file.

    The gateway makes job sockets 0600 in a 0700 folder of its own. As root we hand the
    socket to the sandbox uid (still 0600); a non-root dgm whose uid differs from the
    sandbox's must open the mode instead, and the private folder is then what keeps
    other host users out (the container reaches the file through its bind mount)."""
    path = Path(path)
    uid, _, gid = user.partition(":")
    candidates = [path] if not path.is_dir() else [path, *path.iterdir()]
    for item in candidates:
        st = item.lstat()
        if stat.S_ISSOCK(st.st_mode):
            if not uid.isdigit() or int(uid) == st.st_uid:
                continue
            if os.geteuid() == 0:
                os.chown(item, int(uid), int(gid or uid), follow_symlinks=False)
            else:
                item.chmod(stat.S_IMODE(st.st_mode) | 0o666)
        elif item == path and stat.S_ISDIR(st.st_mode):
            item.chmod(stat.S_IMODE(st.st_mode) | 0o011)


def container_config(spec: SandboxSpec, image: str, command: list[str], user: str) -> dict:
    """Keyword arguments for `containers.create`: the hardened defaults in one place."""
    import docker

    limits = spec.limits
    uid, _, gid = spec.user.partition(":")
    size = f",size={limits.disk_bytes}" if limits.disk_bytes else ""
    mount_targets = {m.target for m in spec.mounts}
    tmpfs = {}
    for path in (spec.workdir, *spec.writable_dirs):
        if path not in mount_targets:
            owner = f",uid={uid},gid={gid or uid},mode=0755" if uid.isdigit() else ",mode=1777"
            tmpfs[path] = f"rw,exec{size}" + (",mode=1777" if path == "/tmp" else owner)
    mounts = []
    for m in spec.mounts:
        source = Path(m.source)
        if not source.exists():
            raise SandboxError(f"mount source {source} does not exist", "check the path")
        if source.is_socket() or source.is_dir():
            grant_socket_access(source, spec.user)
        mounts.append(docker.types.Mount(m.target, str(source), type="bind", read_only=m.read_only))
    labels = {**orphans.owner_labels(), **spec.labels}
    job = spec.labels.get(orphans.LABEL_JOB, "sandbox")
    safe_job = "".join(c if c.isalnum() or c in "-_." else "-" for c in job)[:40]
    return dict(
        image=image,
        command=command,
        name=f"dgm-{safe_job}-{uuid.uuid4().hex[:8]}",
        user=user,
        working_dir=spec.workdir,
        environment={"HOME": HOME, "LANG": "C.UTF-8", **spec.env},
        labels=labels,
        network_mode="bridge" if spec.network else "none",
        mem_limit=limits.memory_bytes,
        memswap_limit=limits.memory_bytes,
        nano_cpus=int(limits.cpus * 1e9),
        pids_limit=limits.pids,
        cap_drop=["ALL"],
        security_opt=["no-new-privileges"],
        read_only=not spec.writable_root,
        tmpfs=tmpfs,
        mounts=mounts,
        init=True,
        # Every sandbox under one cgroup (e.g. a slice capping their memory together):
        # an OOM kill by that cap is the world's, like the host's (see oom.py).
        cgroup_parent=os.environ.get("DGM_SANDBOX_CGROUP_PARENT") or None,
        log_config=docker.types.LogConfig(
            type="json-file", config={"max-size": str(limits.max_output), "max-file": "1"}
        ),
        detach=True,
    )


class DockerSandbox:
    backend = "docker"
    strength = "strong"

    def __init__(self, spec: SandboxSpec) -> None:
        self.spec = spec
        self.client = docker_client()
        self._memory_seen: dict[str, int] = {}
        self._pids_seen = 0
        sweep_once()
        image = images.resolve(spec.image)
        config = container_config(spec, image, ["sleep", "infinity"], user="0:0")
        import docker

        try:
            self.container = self.client.containers.create(**config)
        except docker.errors.APIError as exc:
            raise SandboxError(f"cannot create the sandbox container: {exc}") from None
        try:
            self.container.start()
        except BaseException:
            self.close()
            raise

    @property
    def name(self) -> str:
        return self.container.name

    # -- commands -----------------------------------------------------------------------
    def exec(
        self,
        cmd: list[str] | str,
        timeout: float,
        workdir: str | None = None,
        env: dict[str, str] | None = None,
    ) -> ExecResult:
        api = self.client.api
        if env:
            SandboxSpec(env=env)  # the same credential check as the spec's env
        if self.container is None:
            raise SandboxError("this sandbox is closed", "open a new one with open_sandbox")
        import docker

        started = time.monotonic()
        try:
            exec_id = api.exec_create(
                self.container.id,
                as_argv(cmd),
                user=self.spec.user,
                workdir=workdir or self.spec.workdir,
                environment=env or None,
            )["Id"]
        except docker.errors.APIError as exc:
            raise SandboxError(
                f"sandbox {self.name} cannot run commands any more: {exc.explanation}",
                "a command that survived its timeout got the container killed; open a new one",
            ) from None
        buffer = OutputBuffer(self.spec.limits.max_output)
        stream = api.exec_start(exec_id, stream=True, demux=False)
        reader = threading.Thread(target=_drain, args=(stream, buffer), daemon=True)
        reader.start()
        reader.join(timeout)
        timed_out = reader.is_alive()
        if timed_out:
            reader_gone = self._kill_user_processes(reader)
            if not reader_gone:  # the processes survived kill -1: end the container
                self.container.kill()
                reader.join(5)
        duration = time.monotonic() - started
        exit_code = api.exec_inspect(exec_id).get("ExitCode")
        if exit_code is None:
            exit_code = 137
        # Leftover background processes die with their command; the counters tell
        # whether a limit was hit while it ran, and whose OOM killer struck.
        counters = self._cleanup_and_count()
        died_of_oom = False
        if counters is None:  # the container itself is gone: who ended it?
            self._raise_if_killed_from_outside(timed_out)
            died_of_oom = bool(self.container.attrs["State"].get("OOMKilled"))
        counters = counters or dict(self._memory_seen)  # unreadable: nothing to compare
        seen, self._memory_seen = self._memory_seen, counters
        outside = None if timed_out else oom.outside_kill(seen, counters)
        if outside is not None:
            raise InfrastructureFailure("memory", f"sandbox {self.name}: {outside}")
        killed = counters.get("oom_kill", 0) > seen.get("oom_kill", 0) or died_of_oom
        oom_killed = killed and not timed_out
        pids_limited = counters.get("max", 0) > self._pids_seen
        self._pids_seen = counters.get("max", 0)
        if oom_killed:
            buffer.write(b"\n[dgm sandbox: killed by the out-of-memory killer]\n")
        if pids_limited:
            note = f"\n[dgm sandbox: the process limit ({self.spec.limits.pids}) was reached]\n"
            buffer.write(note.encode())
        if timed_out:
            buffer.write(f"\n[dgm sandbox: killed at the {timeout:g} s timeout]\n".encode())
        return ExecResult(
            exit_code,
            buffer.text(),
            timed_out,
            duration,
            oom_killed,
            buffer.truncated,
            pids_limited,
        )

    def _kill_user_processes(self, reader: threading.Thread) -> bool:
        """kill -9 every process of the sandbox user; True once the command's stream ended."""
        for _ in range(3):
            self._exec_quiet("kill -9 -1 2>/dev/null")
            reader.join(2)
            if not reader.is_alive():
                return True
        return False

    def _cleanup_and_count(self) -> dict[str, int] | None:
        """Kill what the command left running; read the memory and pids-limit counters
        (see oom.py). None when the container no longer runs commands."""
        probe = ("kill -9 -1 2>/dev/null; " if self._user_is_unprivileged() else "") + oom.PROBE
        for _ in range(5):  # under a fork bomb the probe itself may fail to start
            counters = oom.parse(self._exec_quiet(probe))
            if "oom_kill" in counters or "max" in counters:
                return counters
            time.sleep(0.2)
        self.container.reload()
        return None if not self.container.attrs["State"].get("Running") else {}

    def _raise_if_killed_from_outside(self, timed_out: bool) -> None:
        """The container died under the command: if nothing of its own ended it (not the
        harness at a timeout, not its own memory limit), that is the world's failure."""
        why = None if timed_out else oom.killed_from_outside(self.container.attrs["State"])
        if why is not None:
            raise InfrastructureFailure("memory", f"sandbox {self.name}: {why}")

    def _user_is_unprivileged(self) -> bool:
        uid = self.spec.user.partition(":")[0]
        return uid not in ("0", "root", "")

    def _exec_quiet(self, script: str) -> str:
        try:
            result = self.container.exec_run(["/bin/sh", "-c", script], user=self.spec.user)
        except Exception:
            return ""
        return result.output.decode("utf-8", "replace")

    # -- files ---------------------------------------------------------------------------
    def copy_in(self, host_path: Path | str, container_dir: str) -> None:
        """Copy a host file or folder into `container_dir` (owned by the sandbox user)."""
        data = tarsafe.pack(Path(host_path))
        code, output = self._exec_stdin(["tar", "-x", "-m", "-C", container_dir], data)
        if code != 0:
            raise SandboxError(f"copy into {container_dir} failed: {output.strip()[-400:]}")

    def copy_out(
        self,
        container_path: str,
        host_dir: Path | str,
        max_bytes: int = tarsafe.DEFAULT_MAX_BYTES,
        skipped: list[str] | None = None,
    ) -> list[str]:
        """Copy `container_path` out into `host_dir`; refuses entries that would escape it
        (or, given `skipped`, leaves them out with a note there)."""
        parent, _, base = container_path.rstrip("/").rpartition("/")
        api = self.client.api
        exec_id = api.exec_create(
            self.container.id, ["tar", "-c", "-C", parent or "/", base or "."], user=self.spec.user
        )["Id"]
        chunks = (out for out, _err in api.exec_start(exec_id, stream=True, demux=True) if out)
        spooled = tarsafe.spool(chunks, max_bytes)
        code = api.exec_inspect(exec_id).get("ExitCode")
        if code != 0:
            raise SandboxError(f"copy out of {container_path} failed (tar exit {code})")
        with spooled:
            return tarsafe.safe_extract(spooled, Path(host_dir), max_bytes, skipped=skipped)

    def _exec_stdin(self, argv: list[str], data: bytes) -> tuple[int, str]:
        from docker.utils.socket import frames_iter

        api = self.client.api
        exec_id = api.exec_create(self.container.id, argv, stdin=True, user=self.spec.user)["Id"]
        sock = api.exec_start(exec_id, socket=True)
        raw = sock._sock  # the hijacked connection; half-close tells tar its input ended
        raw.sendall(data)
        raw.shutdown(socket.SHUT_WR)
        output = b"".join(chunk for _stream, chunk in frames_iter(sock, tty=False))
        sock.close()
        return api.exec_inspect(exec_id).get("ExitCode") or 0, output.decode("utf-8", "replace")

    # -- lifetime ------------------------------------------------------------------------
    def close(self) -> None:
        container = getattr(self, "container", None)
        if container is None:
            return
        import docker

        try:
            container.remove(force=True)
        except docker.errors.NotFound:
            pass
        self.container = None  # type: ignore[assignment]


def _drain(stream, buffer: OutputBuffer) -> None:  # noqa: ANN001 - docker's stream type
    try:
        for chunk in stream:
            buffer.write(chunk)
    except Exception:  # the connection drops when the container is killed
        pass
