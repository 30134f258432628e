"""Where dgm finds the files it ships beside the package."""

from __future__ import annotations

from pathlib import Path

from dgm.errors import NotFoundError

REPO_ROOT = Path(__file__).resolve().parent.parent


def seed_agent_dir() -> Path:
    """The seed agent codebase (the root of every new run)."""
    path = REPO_ROOT / "seed_agent"
    if not (path / "agent.toml").is_file():
        raise NotFoundError(
            f"the seed agent was not found at {path}",
            "install dgm from a source checkout (pip install -e .) or pass --seed PATH",
        )
    return path


def default_run_dir(name: str) -> Path:
    return Path("archive") / name
