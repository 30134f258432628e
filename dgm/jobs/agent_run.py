"""Run any agent codebase's manifest command (`solve`) in a sandbox; the harness takes the diff.

The container gets: the agent's code read-only at /agent, the task file at /task (read
only), a writable git workspace at /work, a writable /out, and, when the job is bound
to the gateway, the job's LLM socket at /run/dgm/llm.sock. Nothing else of the host.
The workspace comes from a host folder (staged read-only at /stage/work) or from a
repository inside the image (SWE-bench's /testbed); either way it is copied into the
container's own tmpfs, so the agent never writes a host file.

After the command ends (or is killed at its timeout) the harness, not the agent,
computes `git diff --binary <base>` of /work: the patch is the agent's only output
that counts. The eval job and the meta loop's expand job both use `run_agent`.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dgm import safefs
from dgm.errors import DgmError, NotFoundError
from dgm.jobs.sdk_endpoints import PRELUDE, forwarder_mount
from dgm.sandbox import Mount, ResourceLimits, SandboxSpec, open_sandbox
from dgm.sandbox.agent_env import ENV_MOUNT, ENV_PYTHON, ensure_env
from dgm.sandbox.env_requirements import EnvironmentSpec, environment_of

PLACEHOLDERS = {
    "agent_dir": "/agent",
    "workdir": "/work",
    "task_file": "/task/task.json",
    "output_dir": "/out",
    "history_dir": "/history",
}
SETUP_FAILED = ">>>>> dgm: the workspace could not be set up"
MAX_PATCH_BYTES = 8 * 1024 * 1024
MANIFEST_LIMIT = 64 * 1024
OUT_MAX_BYTES = 256 * 1024 * 1024
# Runtime tools the agent wrote (/out/tools/<name>/{tool.json,tool.py}) are kept, capped.
TOOL_NAME = re.compile(r"^[a-z][a-z0-9_]{1,39}$")
TOOL_FILES = {"tool.json": 16 * 1024, "tool.py": 64 * 1024}
MAX_KEPT_TOOLS = 16


@dataclass(frozen=True)
class Manifest:
    name: str
    commands: dict[str, str]
    improve_paths: tuple[str, ...] = ()
    """`[improve] paths`: the files that are the agent's improvement procedure."""

    def command(self, which: str, python: str = "python3") -> str:
        """The command `which` with the in-sandbox paths filled in; `{python}` is the
        agent environment's interpreter (plain python3 for an agent without one)."""
        if which not in self.commands:
            raise DgmError(
                f"agent {self.name!r} has no `{which}` command in agent.toml",
                f'add `{which} = "..."` under [commands]',
            )
        try:
            return self.commands[which].format(**PLACEHOLDERS, python=python)
        except (KeyError, IndexError, ValueError) as exc:
            raise DgmError(
                f"agent.toml `{which}` command uses an unknown placeholder {exc}",
                f"placeholders are: {', '.join('{' + p + '}' for p in PLACEHOLDERS)}, {{python}}",
            ) from None


def load_manifest(agent_dir: Path) -> Manifest:
    path = Path(agent_dir) / "agent.toml"
    if not path.exists() and not path.is_symlink():
        raise NotFoundError(
            f"{agent_dir} has no agent.toml manifest",
            "an agent codebase needs agent.toml naming its `solve` command (see dgm/README.md)",
        )
    try:  # the agent may have written it: never follow a link or open a FIFO
        data = tomllib.loads(safefs.read_text(Path(agent_dir), "agent.toml", MANIFEST_LIMIT))
    except safefs.UnsafeFile as exc:
        raise DgmError(str(exc), "agent.toml must be a regular file of the agent") from None
    except tomllib.TOMLDecodeError as exc:
        raise DgmError(f"{path} is not valid TOML: {exc}", "fix the manifest") from None
    commands = data.get("commands")
    if not isinstance(commands, dict) or not all(isinstance(v, str) for v in commands.values()):
        raise DgmError(f"{path} has no [commands] table of strings", "add [commands] solve = ...")
    name = str(data.get("agent", {}).get("name", Path(agent_dir).name))
    improve = data.get("improve")
    paths = improve.get("paths", []) if isinstance(improve, dict) else []
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise DgmError(f"{path}: [improve] paths must be a list of strings",
                       'e.g. paths = ["coder/improve.py"]')  # fmt: skip
    return Manifest(name, commands, tuple(paths))


@dataclass(frozen=True)
class AgentRunRequest:
    agent_dir: Path
    image: str
    task_file: dict[str, Any]
    """Written to /task/task.json."""
    base_commit: str
    """The workspace commit the patch is taken against."""
    timeout_s: float
    limits: ResourceLimits = field(default_factory=ResourceLimits)
    workspace: Path | None = None
    """A host git repository to copy into /work ..."""
    workspace_in_image: str | None = None
    """... or a repository inside the image to copy into /work."""
    command: str = "solve"
    task_extras: dict[str, str] = field(default_factory=dict)
    """More files for /task (the oracle's reference patch: only ever for the oracle)."""
    labels: dict[str, str] = field(default_factory=dict)
    history: Path | None = None
    """A host folder mounted read-only at /history (`{history_dir}`; the improve command)."""
    environment: EnvironmentSpec | None = None
    """The environment to mount (a frozen run: the seed's); None: the agent's own."""


@dataclass(frozen=True)
class AgentRunResult:
    patch: str
    exit_code: int | None
    timed_out: bool
    seconds: float
    output: str
    """The agent command's stdout and stderr (capped)."""
    trajectory: Path | None
    error: str | None = None
    """Why no usable patch came back (setup failed, diff failed, patch too large)."""
    out_skipped: tuple[str, ...] = ()
    """Entries of /out that could not come out (links, special files), each named."""
    environment: dict[str, Any] | None = None
    """The agent environment it ran with (key, requirements, resolved wheels), or None."""


def run_agent(
    request: AgentRunRequest,
    out_dir: Path,
    endpoint: Any = None,
    backend: str = "docker",
) -> AgentRunResult:
    """Run the agent's command on its workspace; artefacts of /out land in `out_dir`.
    `endpoint` (a gateway `Endpoint` or an `LLMAccess`) is the job's way to the LLM."""
    manifest = load_manifest(request.agent_dir)
    spec = request.environment or environment_of(request.agent_dir)
    agent_env = ensure_env(spec)
    command = manifest.command(request.command, ENV_PYTHON if agent_env else "python3")
    if (request.workspace is None) == (request.workspace_in_image is None):
        raise ValueError("give exactly one of workspace= or workspace_in_image=")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="dgm-agent-") as tmp:
        task_dir = Path(tmp) / "task"
        task_dir.mkdir()
        (task_dir / "task.json").write_text(json.dumps(request.task_file, indent=2))
        for name, text in request.task_extras.items():
            (task_dir / name).write_text(text)
        mounts = [
            Mount(Path(request.agent_dir).resolve(), "/agent", read_only=True),
            Mount(task_dir, "/task", read_only=True),
        ]
        if request.history is not None:
            history = Path(tmp) / "history"  # a copy: the mount never exposes the log folder
            shutil.copytree(request.history, history, symlinks=True)  # links stay links
            mounts.append(Mount(history, "/history", read_only=True))
        if request.workspace is not None:
            stage = Path(tmp) / "stage"
            shutil.copytree(request.workspace, stage / "work", symlinks=True)
            mounts.append(Mount(stage, "/stage", read_only=True))
            source = "/stage/work"
        else:
            source = str(request.workspace_in_image)
        env: dict[str, str] = {}
        if endpoint is not None and endpoint.socket_path is not None:
            socket_path = Path(endpoint.socket_path)
            mounts.append(Mount(socket_path, str(endpoint.container_socket_path), False))
            mounts.append(forwarder_mount())
            env.update(endpoint.env)
        if agent_env is not None:
            mounts.append(Mount(agent_env.path, ENV_MOUNT, read_only=True))
            env["DGM_AGENT_PYTHON"] = ENV_PYTHON
        _readable(Path(tmp))
        spec = SandboxSpec(
            image=request.image,
            mounts=tuple(mounts),
            env=env,
            limits=request.limits,
            labels=request.labels,
            writable_dirs=("/tmp", "/home/agent", "/out"),
        )
        with open_sandbox(spec, backend) as box:
            setup = f"cp -a {source}/. /work/ || {{ echo '{SETUP_FAILED}'; exit 97; }}; "
            run = box.exec(
                ["/bin/sh", "-c", setup + PRELUDE + 'cd /work && exec /bin/sh -c "$DGM_COMMAND"'],
                timeout=request.timeout_s,
                env={"DGM_COMMAND": command},
            )
            if SETUP_FAILED in run.output:
                error: str | None = f"the workspace could not be set up: {run.output[-500:]}"
                patch = ""
            else:
                patch, error = take_diff(box, request.base_commit)
            skipped: list[str] = []
            trajectory = _collect_out(box, out_dir, skipped)
    notes = "".join(f"\n[dgm] /out: {note}; left out, the rest was kept" for note in skipped)
    return AgentRunResult(
        patch=patch,
        exit_code=run.exit_code,
        timed_out=run.timed_out,
        seconds=run.duration_s,
        output=run.output + notes,
        trajectory=trajectory,
        error=error,
        out_skipped=tuple(skipped),
        environment=agent_env.describe() if agent_env else None,
    )


_DIFF = (
    "cd /work && G='git -c core.fsmonitor= -c core.hooksPath=/dev/null' && "
    "$G add -A >/dev/null 2>&1; $G diff --cached --binary {base} >/tmp/.dgm-patch "
    "2>/tmp/.dgm-err; code=$?; [ $code -eq 0 ] || {{ cat /tmp/.dgm-err; exit $code; }}; "
    "cat /tmp/.dgm-patch"
)


def take_diff(box: Any, base_commit: str) -> tuple[str, str | None]:
    """`git diff` of the workspace against `base_commit`, taken in the agent's container."""
    result = box.exec(["/bin/sh", "-c", _DIFF.format(base=base_commit)], timeout=120)
    if result.exit_code != 0 or result.timed_out:
        return "", f"git diff of the workspace failed: {result.output.strip()[-300:]}"
    if result.truncated or len(result.output.encode()) > MAX_PATCH_BYTES:
        return "", f"the patch is larger than {MAX_PATCH_BYTES} bytes"
    return result.output, None


def _collect_out(box: Any, out_dir: Path, skipped: list[str]) -> Path | None:
    """Copy /out back (only regular files and folders come out: see tarsafe; a link or
    special file is left out with a note in `skipped`) and return the agent's
    trajectory.json if it wrote one."""
    try:
        with tempfile.TemporaryDirectory(prefix="dgm-out-") as tmp:
            box.copy_out("/out", tmp, max_bytes=OUT_MAX_BYTES, skipped=skipped)
            written = Path(tmp) / "out"
            for item in written.iterdir() if written.is_dir() else []:
                target = out_dir / item.name
                if safefs.is_regular(item) and not target.exists() and not target.is_symlink():
                    shutil.move(str(item), target)
            if written.is_dir():
                _keep_tools(written, out_dir / "tools")
    except DgmError as exc:
        skipped.append(f"nothing came out: {exc.message}")
        return None
    trajectory = out_dir / "trajectory.json"
    return trajectory if safefs.is_regular(trajectory) else None


def _keep_tools(written: Path, dest: Path) -> None:
    """Copy the runtime tools under `written`/tools: plain files with the two known names,
    in folders named like tools, each file and the count capped; anything else stays."""
    kept: dict[str, dict[str, bytes]] = {}
    for rel in safefs.walk_files(written, max_files=10_000):
        parts = rel.split("/")
        if len(parts) != 3 or parts[0] != "tools" or parts[2] not in TOOL_FILES:
            continue
        if not TOOL_NAME.match(parts[1]):
            continue
        if parts[1] not in kept and len(kept) >= 4 * MAX_KEPT_TOOLS:
            continue
        try:
            data = safefs.read_bytes(written, rel, TOOL_FILES[parts[2]])
        except safefs.UnsafeFile:
            continue
        kept.setdefault(parts[1], {})[parts[2]] = data
    complete = [(name, files) for name, files in kept.items() if set(files) == set(TOOL_FILES)]
    for name, files in complete[:MAX_KEPT_TOOLS]:
        folder = dest / name
        if folder.exists() or folder.is_symlink():
            continue
        folder.mkdir(parents=True)
        for file_name, data in files.items():
            (folder / file_name).write_bytes(data)


def _readable(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | (0o755 if path.is_dir() else 0o644))
