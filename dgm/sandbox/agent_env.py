"""Agent environments: what `[environment]` asks for, built once per content hash and
mounted read-only beside the task at /opt/dgm-agent-env.

How it is built, without trusting the agent (env_requirements.py checks the lines):
1. the host's pip *downloads binary wheels only* (`--only-binary=:all:`) for the sandbox's
   Python (3.11, the runtime image's; every task image derives from it), so no package
   build script ever runs: a requirement with no wheel is an error naming it;
2. the host's pip unpacks those wheels (`--no-deps --no-index --no-compile --target`):
   unpacking runs no package code;
3. a venv skeleton around them (`pyvenv.cfg`, `bin/python` -> the image's /usr/bin/python3),
   so `{python}` = /opt/dgm-agent-env/bin/python sees the agent's packages and nothing of
   the task's own environment (SWE-bench's /testbed venv stays untouched, and the agent's
   packages never leak into the task's Python);
4. `apt = [...]`: the named Debian packages and what they depend on that the runtime image
   lacks (resolved by the host's apt against the image's dpkg status, a simulation),
   fetched by the host's `apt-get download` and unpacked with `dpkg-deb -x` (no maintainer
   script runs) under `apt/`, whose bin folders the agent's PATH gets first and whose
   library folders its LD_LIBRARY_PATH (env_debs.py).
The result lives in `<env root>/<key>/` with `env.json` (requirements, resolved wheels
with sha256); an unchanged environment is found by its key and reused at once.

On a Ray node an environment that is missing here is first asked of the head (which builds
it if it must, with its own index access) and unpacked here (`set_remote_source`, set by the
worker; dgm/executors/distributed/node_envs.py), the way images travel.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import logging
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dgm.errors import DgmError
from dgm.sandbox import images
from dgm.sandbox.env_debs import STATUS_IMAGE, image_status, unpack_debs
from dgm.sandbox.env_requirements import EnvironmentSpec

ENV_MOUNT = "/opt/dgm-agent-env"
ENV_PYTHON = f"{ENV_MOUNT}/bin/python"
ENV_FORMAT = "dgm-agent-env/3"  # 2: executable bits kept (apt binaries); 3: apt dependencies
SANDBOX_PYTHON = "3.11"
"""The python3 of dgm/runtime (Debian bookworm), under every task image."""
PIP_TIMEOUT_S = 1800

Progress = Callable[[str], None]
RemoteSource = Callable[[EnvironmentSpec], bytes]
"""An environment as a tar of its folder, from elsewhere (the head of a Ray cluster)."""
log = logging.getLogger(__name__)
_remote: list[RemoteSource] = []


@dataclass(frozen=True)
class AgentEnv:
    key: str
    path: Path
    spec: EnvironmentSpec
    resolved: tuple[dict[str, str], ...]
    """One `{"name", "version", "file", "sha256"}` per installed wheel."""
    build_s: float | None
    """Seconds this call spent building it; None when it was reused."""

    def describe(self) -> dict[str, Any]:
        return {"key": self.key, "requirements": list(self.spec.requirements),
                "apt": list(self.spec.apt), "resolved": list(self.resolved)}  # fmt: skip


def env_root() -> Path:
    """Where environments are kept: $DGM_AGENT_ENV_DIR, else ~/.cache/dgm/agent-envs."""
    given = os.environ.get("DGM_AGENT_ENV_DIR")
    return Path(given) if given else Path.home() / ".cache" / "dgm" / "agent-envs"


def _machine() -> str:
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine().lower(),
                                                       platform.machine().lower())  # fmt: skip


def env_key(spec: EnvironmentSpec) -> str:
    content = {"format": ENV_FORMAT, "python": SANDBOX_PYTHON, "machine": _machine(),
               "requirements": list(spec.requirements), "apt": list(spec.apt)}  # fmt: skip
    if spec.apt:  # resolved against that image's packages: a new image, a new resolution
        content["image"] = images.tag(STATUS_IMAGE)
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:16]


def find_env(spec: EnvironmentSpec, root: Path | None = None) -> AgentEnv | None:
    """The built environment for `spec`, or None."""
    key = env_key(spec)
    path = (root or env_root()) / key
    try:
        record = json.loads((path / "env.json").read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return AgentEnv(key, path, spec, tuple(record.get("resolved", [])), None)


def list_envs(root: Path | None = None) -> list[dict[str, Any]]:
    """Every built environment's record (for `dgm sandbox doctor`)."""
    root = root or env_root()
    found = []
    for record in sorted(root.glob("*/env.json")) if root.is_dir() else []:
        try:
            found.append(json.loads(record.read_text()) | {"path": str(record.parent)})
        except (OSError, json.JSONDecodeError):
            continue
    return found


def set_remote_source(fetch: RemoteSource | None) -> None:
    """Where this process gets an environment it lacks before building one (a Ray worker:
    the head); None: build here."""
    _remote[:] = [fetch] if fetch is not None else []


def ensure_env(
    spec: EnvironmentSpec, *, root: Path | None = None, progress: Progress | None = None
) -> AgentEnv | None:
    """The environment for `spec`: found, received from the remote source, or built (one
    builder per key at a time); None for an agent that declares none. Raises `DgmError`
    naming what cannot be had."""
    if spec.empty:
        return None
    root = root or env_root()
    found = find_env(spec, root)
    if found is not None:
        return found
    root.mkdir(parents=True, exist_ok=True)
    key = env_key(spec)
    with open(root / f".{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another job may be building the same one
        found = find_env(spec, root)
        if found is not None:
            return found
        if _remote:
            received = _receive(spec, key, root, _remote[0])
            if received is not None:
                return received
        return _build(spec, key, root, progress or log.info)  # a job's build: the run's log


def pack_env(env: AgentEnv) -> bytes:
    """A built environment's folder as a tar (links kept as links), to ship to a node."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(str(env.path), arcname=".")
    return buf.getvalue()


def _receive(spec: EnvironmentSpec, key: str, root: Path, fetch: RemoteSource) -> AgentEnv | None:
    """The environment from `fetch`, unpacked into place; None (and a local build) when the
    source fails. Its links (bin/python -> the image's python) are kept; no member may land
    outside the folder (the `tar` filter), and the record must name the same key."""
    started = time.monotonic()
    staging = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=root))
    try:
        data = fetch(spec)
        target = staging / "env"
        target.mkdir()
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(target, filter="tar")
        record = json.loads((target / "env.json").read_text())
        if record.get("key") != key:
            raise DgmError(f"received environment {record.get('key')} is not {key}")
        target.chmod(0o755)
        os.replace(target, root / key)
    except Exception as exc:  # noqa: BLE001 - the head could not give it: build here
        log.warning("environment %s could not be received (%s); building it here", key, exc)
        return None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    log.info("environment %s: received in %.1fs", key, time.monotonic() - started)
    return AgentEnv(key, root / key, spec, tuple(record.get("resolved", [])), None)


def _build(spec: EnvironmentSpec, key: str, root: Path, progress: Progress) -> AgentEnv:
    started = time.monotonic()
    staging = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=root))
    try:
        wheels, target = staging / "wheels", staging / "env"
        site = target / "lib" / f"python{SANDBOX_PYTHON}" / "site-packages"
        files: list[Path] = []
        if spec.requirements:
            (staging / "requirements.txt").write_text("\n".join(spec.requirements) + "\n")
            progress(f"environment {key}: fetching binary wheels for {len(spec.requirements)} "
                     f"requirement(s) (Python {SANDBOX_PYTHON}, {_machine()})")  # fmt: skip
            _pip(["download", "--dest", str(wheels), "-r", str(staging / "requirements.txt")])
            files = sorted(wheels.glob("*.whl"))
            size = sum(f.stat().st_size for f in files) / 2**20
            progress(f"environment {key}: unpacking {len(files)} wheels ({size:.1f} MiB)")
            _pip(["install", "--no-deps", "--no-index", "--no-compile", "--target", str(site),
                  *map(str, files)])  # fmt: skip
            shutil.rmtree(site / "bin", ignore_errors=True)  # scripts with the host's shebang
        site.mkdir(parents=True, exist_ok=True)
        _venv_skeleton(target)
        resolved = tuple(_wheel_record(f) for f in files)
        if spec.apt:
            progress(f"environment {key}: fetching Debian packages {', '.join(spec.apt)}")
            status = image_status(root)
            resolved += tuple(unpack_debs(spec.apt, staging / "debs", target / "apt", status))
            added = [r["name"] for r in resolved if r.get("why") == "dependency"]
            if added:
                progress(
                    f"environment {key}: with dependencies the image lacks: " + ", ".join(added)
                )
        seconds = time.monotonic() - started
        record = {"format": ENV_FORMAT, "key": key, "python": SANDBOX_PYTHON,
                  "requirements": list(spec.requirements), "apt": list(spec.apt),
                  "resolved": list(resolved), "build_s": round(seconds, 1),
                  "size_mib": round(_size(target) / 2**20, 1), "built_at": time.time()}  # fmt: skip
        (target / "env.json").write_text(json.dumps(record, indent=2))
        for path in [target, *target.rglob("*")]:  # readable by the sandbox's uid, read-only
            if not path.is_symlink():
                runnable = path.is_dir() or path.stat().st_mode & 0o111
                path.chmod(0o755 if runnable else 0o644)
        os.replace(target, root / key)
        progress(f"environment {key}: ready in {seconds:.1f}s")
        return AgentEnv(key, root / key, spec, resolved, seconds)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _pip(args: list[str]) -> None:
    """The host's pip, for the sandbox's platform, binary wheels only: no package code runs."""
    platforms = [f"manylinux_2_{minor}_{_machine()}" for minor in range(36, 4, -1)]
    platforms += [f"manylinux2014_{_machine()}", f"linux_{_machine()}"]
    command = [sys.executable, "-m", "pip", *args[:1], "--only-binary=:all:",
               "--disable-pip-version-check", "--no-input", "--python-version", SANDBOX_PYTHON,
               "--implementation", "cp", *[a for p in platforms for a in ("--platform", p)],
               *args[1:]]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise DgmError(
            f"pip {args[0]} took over {PIP_TIMEOUT_S}s",
            "check the package index is reachable from this machine",
        ) from None
    if done.returncode == 0:
        return
    output = (done.stderr or done.stdout).strip()
    missing = re.search(r"(?:No matching distribution found for|satisfies the requirement) (\S+)",
                        output)  # fmt: skip
    if missing:
        raise DgmError(
            f"the agent's requirement {missing.group(1)} cannot be resolved to a binary wheel "
            f"for Python {SANDBOX_PYTHON} on Linux {_machine()}",
            "pin a version that publishes wheels (source distributions are never built on "
            "the host), or check the name on the package index; pip said: "
            + output.splitlines()[-1][:300],
        )
    raise DgmError(f"pip {args[0]} failed building the agent's environment: {output[-600:]}",
                   "check the requirements and the package index")  # fmt: skip


def _venv_skeleton(target: Path) -> None:
    """A venv is a `pyvenv.cfg` beside `bin/`; its python is the image's own."""
    (target / "bin").mkdir(parents=True, exist_ok=True)
    (target / "pyvenv.cfg").write_text(
        f"home = /usr/bin\ninclude-system-site-packages = false\nversion = {SANDBOX_PYTHON}\n"
    )
    for name in ("python", "python3", f"python{SANDBOX_PYTHON}"):
        (target / "bin" / name).symlink_to(f"/usr/bin/python{SANDBOX_PYTHON}")


def _wheel_record(wheel: Path) -> dict[str, str]:
    name, version = wheel.name.split("-")[:2]
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    return {"name": name, "version": version, "file": wheel.name, "sha256": digest}


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())
