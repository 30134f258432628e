"""Where dgm finds the files it ships beside the package: the one module that knows.

An installed wheel carries them as package data under `dgm/_assets/` (the build step in
setup.py copies `seed_agent/`, `containers/` and `eval/` there); a source checkout (an
editable install) has no `_assets` folder and finds them at the repository root. No
other module computes a repository-relative path.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from dgm.errors import NotFoundError

ASSET_TREES = ("seed_agent", "containers", "eval")  # what setup.py copies into the wheel
REINSTALL_HINT = "reinstall dgm (`pipx install .` or `pip install .` from a source checkout)"


def assets_root() -> Path:
    """The folder holding seed_agent/, containers/ and eval/ for this installation."""
    # pip and pipx always unpack wheels onto the file system, so the Traversable is a path.
    bundled = Path(str(resources.files("dgm") / "_assets"))
    if bundled.is_dir():
        return bundled
    return Path(__file__).resolve().parent.parent  # a source checkout


def installed_from_wheel() -> bool:
    return assets_root().name == "_assets"


def _asset(*parts: str, must_have: str) -> Path:
    path = assets_root().joinpath(*parts)
    if not (path / must_have).exists():
        raise NotFoundError(f"dgm's {'/'.join(parts)} folder was not found at {path}",
                            REINSTALL_HINT)  # fmt: skip
    return path


def seed_agent_dir() -> Path:
    """The seed agent codebase (the root of every new run)."""
    return _asset("seed_agent", must_have="agent.toml")


def containers_dir() -> Path:
    """The sandbox image recipes; DGM_CONTAINERS_DIR points at another copy."""
    override = os.environ.get("DGM_CONTAINERS_DIR")
    if not override:
        return _asset("containers", must_have="runtime/Dockerfile")
    path = Path(override)
    if not (path / "runtime" / "Dockerfile").is_file():
        raise NotFoundError(
            f"image recipes not found at {path} (DGM_CONTAINERS_DIR)",
            "point DGM_CONTAINERS_DIR at a containers/ folder, or unset it",
        )
    return path


def subset_file(name: str) -> Path:
    """A task id list: the papers' subsets, the dry run's, the offline SWE-bench ones.
    Not checked here (a module constant names it); reading a missing one says so."""
    return assets_root() / "eval" / "subsets" / name


def swe_suite_dir() -> Path:
    """dgm's own SWE-bench-format suite: instances, repository, image recipe."""
    return _asset("eval", "swe-dgm-suite", must_have="instances.jsonl")


def builtin_agents_dir() -> Path:
    """The reference agents (oracle, null) inside the package."""
    return Path(__file__).resolve().parent / "benchmarks" / "agents"


def default_run_dir(name: str) -> Path:
    return Path("archive") / name
