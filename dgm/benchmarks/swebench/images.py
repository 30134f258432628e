"""Offline images for real SWE-bench instances, in the official layout, sharing layers.

    dgm/runtime                       python3, git, patch, the agent user (dgm's runtime)
    dgm/swe-python:<hash>             + venv support, the conda `activate` shim, /opt/wheels
    dgm/swe-env-<repo>-<ver>:<hash>   + the venv `testbed` with the environment's packages
    dgm/swe-<instance id>:<hash>      + /testbed at the base commit, installed; its wheels

Recipes are containers/swebench/*; each tag hashes its recipe, its parent's tag and the
inputs it is made from (install steps, base commit), so an unchanged recipe is reused
without work. An official prebuilt image (`swebench/sweb.eval.x86_64.<id>`) present in
the Docker engine is used instead of building one.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from dgm.benchmarks.swebench import wheels as swe_wheels
from dgm.benchmarks.swebench.data import REQUIREMENTS, Environment, InstanceEnv, SweData
from dgm.errors import SandboxError
from dgm.sandbox import images
from dgm.sandbox.build_steps import Steps, follow_docker_build
from dgm.sandbox.docker_client import docker_client

BUILDER_VERSION = "1"
Log = Callable[[str], None]


def recipe_dir() -> Path:
    return images.containers_dir() / "swebench"


def _hash(*parts: str) -> str:
    digest = hashlib.sha256(f"dgm-swe v{BUILDER_VERSION}\n".encode())
    for part in parts:
        digest.update(f"\n{len(part)}\n{part}".encode())
    return digest.hexdigest()[:12]


def _recipe(*names: str) -> str:
    return "".join((recipe_dir() / n).read_text() for n in names)


def python_tag() -> str:
    recipe = _recipe("python.Dockerfile", "activate")
    return f"dgm/swe-python:{_hash(images.tag('runtime'), recipe)}"


def env_tag(env: Environment) -> str:
    return f"dgm/swe-env-{env.slug}:{_hash(python_tag(), _recipe('env.Dockerfile'), env.key)}"


def instance_tag(inst: InstanceEnv) -> str:
    parts = (env_tag(inst.env), _recipe("instance.Dockerfile"), inst.base_commit,
             "\n".join(inst.project_steps))  # fmt: skip
    return f"dgm/swe-{inst.instance_id.lower()}:{_hash(*parts)}"


def official_image(record: dict) -> str | None:
    """The official prebuilt image's name, when it is present in the Docker engine."""
    name = str(record.get("image") or "")
    if not name:
        iid = str(record["instance_id"]).replace("__", "_1776_").lower()
        name = f"swebench/sweb.eval.x86_64.{iid}:latest"
    return name if _exists(name) else None


def image_for(data: SweData, instance_id: str) -> str:
    """The image an instance runs in: the official one if present, else ours (maybe unbuilt)."""
    record = data.instances[instance_id]
    return official_image(record) or instance_tag(data.instance_env(instance_id))


def _exists(tag: str) -> bool:
    return bool(docker_client().images.list(name=tag))


def _size(tag: str) -> str:
    return f"{docker_client().images.get(tag).attrs['Size'] / 1e6:.0f} MB"


def build(data: SweData, ids: list[str] | None, log: Log = print, force: bool = False) -> dict:
    """Build the images of the selected instances; returns {instance_id: image tag}."""
    selected = data.select(ids)
    started = time.monotonic()
    result: dict[str, str] = {}
    todo = []
    for iid in selected:
        official = official_image(data.instances[iid])
        if official and not force:
            log(f"{iid}: using the official image {official}")
            result[iid] = official
            continue
        inst = data.instance_env(iid)
        if not force and _exists(instance_tag(inst)):  # no lock, no work: reused at once
            log(f"{iid}: {instance_tag(inst)} is up to date")
            result[iid] = instance_tag(inst)
        else:
            todo.append(inst)
    if todo:
        lock_path = Path(tempfile.gettempdir()) / "dgm-image-build.lock"
        with open(lock_path, "w") as lock:  # one builder at a time on this host
            fcntl.flock(lock, fcntl.LOCK_EX)
            result |= _build_locked(data, todo, log, force)
    log(f"swebench: {len(selected)} instance image(s) ready in {time.monotonic() - started:.0f} s")
    return result


def _build_locked(data: SweData, todo: list[InstanceEnv], log: Log, force: bool) -> dict:
    runtime = images.build("runtime", log=log)
    parent = _docker_build("swe-python", python_tag(), runtime, log, force, _python_context)
    result = {}
    envs: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="dgm-swe-repos-") as repos:
        for n, inst in enumerate(todo, 1):
            key = inst.env.key
            if key not in envs:
                envs[key] = _docker_build(
                    f"env {inst.env.slug}", env_tag(inst.env), parent, log, force,
                    lambda ctx, env=inst.env: _env_context(env, ctx, log),
                )  # fmt: skip
            bare = unpack(data, inst.repo, Path(repos))
            result[inst.instance_id] = _docker_build(
                f"[{n}/{len(todo)}] {inst.instance_id}", instance_tag(inst), envs[key], log,
                force, lambda ctx, inst=inst, bare=bare: _instance_context(inst, bare, ctx, log),
            )  # fmt: skip
    return result


def _docker_build(
    what: str, tag: str, parent: str, log: Log, force: bool, make_context: Callable
) -> str:
    if not force and _exists(tag):
        log(f"{what}: {tag} is up to date ({_size(tag)})")
        return tag
    started = time.monotonic()
    log(f"{what}: building {tag}")
    with tempfile.TemporaryDirectory(prefix="dgm-swe-ctx-") as tmp:
        dockerfile = make_context(Path(tmp))
        stream = docker_client(timeout=3600).api.build(
            path=tmp, dockerfile=dockerfile, tag=tag, buildargs={"BASE_IMAGE": parent},
            labels={"dgm.image": tag.split(":")[0].removeprefix("dgm/")},
            rm=True, forcerm=True, pull=False, decode=True,
        )  # fmt: skip
        follow_docker_build(stream, Steps(what, log), "the failing step and its output are above")
    log(f"{what}: built {tag} in {time.monotonic() - started:.0f} s ({_size(tag)})")
    return tag


def _python_context(ctx: Path) -> str:
    for name in ("python.Dockerfile", "activate"):
        shutil.copy(recipe_dir() / name, ctx / name)
    return "python.Dockerfile"


def _env_context(env: Environment, ctx: Path, log: Log) -> str:
    shutil.copy(recipe_dir() / "env.Dockerfile", ctx / "Dockerfile")
    swe_wheels.env_wheels(env, ctx / "wheels", log)
    folder = ctx / "env"
    folder.mkdir()
    swe_wheels.constraints_file(env, folder)
    (folder / "requirements.txt").write_text(env.requirements_txt)
    script = "\n".join(s.replace(REQUIREMENTS, "/opt/dgm-env/requirements.txt") for s in env.steps)
    (folder / "install.sh").write_text(script + "\n")
    return "Dockerfile"


def unpack(data: SweData, repo: str, into: Path) -> Path:
    bare = into / f"{repo.replace('/', '__')}.git"
    if not bare.is_dir():
        with tarfile.open(data.repo_tar(repo)) as tar:
            tar.extractall(into / "x", filter="data")
        found = next((into / "x").rglob("HEAD"), None)
        if found is None:
            raise SandboxError(f"{data.repo_tar(repo)} holds no git repository")
        found.parent.rename(bare)
        shutil.rmtree(into / "x")
    return bare


def _git(*args: str, cwd: Path | None = None) -> None:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SandboxError(f"git {' '.join(args[:3])} failed: {proc.stderr.strip()[-500:]}")


def checkout(bare: Path, commit: str, dest: Path) -> None:
    """`dest` = the repository at `commit` alone: no other branch (later commits would
    show the agent the fix), no remote."""
    dest.mkdir(parents=True)
    _git("init", "-q", cwd=dest)
    _git("fetch", "-q", "--depth=1", str(bare.resolve()), commit, cwd=dest)
    _git("checkout", "-q", "-B", "main", commit, cwd=dest)
    _git("gc", "-q", "--prune=now", cwd=dest)


def _instance_context(inst: InstanceEnv, bare: Path, ctx: Path, log: Log) -> str:
    shutil.copy(recipe_dir() / "instance.Dockerfile", ctx / "Dockerfile")
    checkout(bare, inst.base_commit, ctx / "testbed")
    (ctx / "wheels").mkdir()
    swe_wheels.project_wheels(ctx / "testbed", inst.project_steps, inst.env, ctx / "wheels", log)
    _git("clean", "-fdxq", cwd=ctx / "testbed")  # what resolving left behind (egg-info)
    (ctx / "install.sh").write_text("\n".join(inst.project_steps) + "\n")
    return "Dockerfile"
