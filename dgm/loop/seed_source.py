"""Where a run's seed agent comes from (`dgm init RUN_DIR --seed ...`): a folder, a git URL of
a local repository, or a pip requirement plus an agent.toml. Each becomes a plain folder
(no .git) that `Run.create` takes as node 0; nothing of the agent runs on the host.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

from dgm.errors import DgmError
from dgm.sandbox.env_requirements import RequirementRefused, check_requirement


def resolve_seed(seed: str, manifest: Path | None, work: Path, echo: Callable[[str], None]) -> Path:
    """A folder holding the seed agent (under `work` unless `seed` already is one)."""
    path = Path(seed)
    if manifest is None and path.is_dir() and not _is_bare_repo(path):
        if not (path / "agent.toml").is_file():
            raise DgmError(f"{path} has no agent.toml", "an agent folder needs agent.toml")
        echo(f"seed: the agent folder {path}")
        return path
    if manifest is None and (seed.startswith("file://") or _is_bare_repo(path)):
        return _clone(seed, work / "seed", echo)
    if manifest is None:
        raise DgmError(
            f"--seed {seed!r} is not an agent folder or a local git repository",
            "for a package on the index give --seed NAME==VERSION --manifest path/agent.toml",
        )
    return _from_package(seed, manifest, work / "seed", echo)


def _is_bare_repo(path: Path) -> bool:
    return path.is_dir() and (path / "HEAD").is_file() and (path / "objects").is_dir()


def _clone(url: str, dest: Path, echo: Callable[[str], None]) -> Path:
    if "://" in url and not url.startswith("file://"):
        raise DgmError(f"--seed {url}: only local repositories (file://, a path) are cloned",
                       "clone it yourself and pass the folder")  # fmt: skip
    echo(f"seed: cloning {url} (no hooks run; the tree at its HEAD, without .git)")
    done = subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", "-c", "protocol.allow=never",
         "-c", "protocol.file.allow=always", "clone", "-q", "--depth", "1",
         "--no-recurse-submodules", url, str(dest)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if done.returncode != 0:
        raise DgmError(f"git could not clone {url}: {done.stderr.strip()[-400:]}",
                       "give a local repository (file:///path/repo.git or a path)")  # fmt: skip
    shutil.rmtree(dest / ".git")
    if not (dest / "agent.toml").is_file():
        raise DgmError(f"{url} has no agent.toml at its root", "add one (see examples/agents/)")
    return dest


def _from_package(
    requirement: str, manifest: Path, dest: Path, echo: Callable[[str], None]
) -> Path:
    try:
        pinned = check_requirement(requirement, "--seed")
    except RequirementRefused as exc:
        raise DgmError(exc.message, exc.hint) from None
    if not manifest.is_file() or manifest.name != "agent.toml":
        raise DgmError(f"--manifest {manifest} is not an agent.toml file",
                       "give the path of the agent.toml to run the package with")  # fmt: skip
    echo(f"seed: {pinned} from the package index (its wheel is unpacked, never run here) "
         f"with {manifest} and the files beside it")  # fmt: skip
    shutil.copytree(manifest.parent, dest, ignore=shutil.ignore_patterns(".git", "__pycache__"))
    wheels = dest.parent / "wheel"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet",
         "--disable-pip-version-check", "--dest", str(wheels), pinned],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if done.returncode != 0:
        raise DgmError(f"{pinned} has no wheel on the package index: {done.stderr.strip()[-300:]}",
                       "pin a released version that publishes a wheel")  # fmt: skip
    wheel = next(wheels.glob("*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        code = [m for m in archive.namelist()  # extractall drops `..` and absolute names
                if not m.split("/", 1)[0].endswith((".dist-info", ".data"))]  # fmt: skip
        archive.extractall(dest, code)
    return dest
