"""The run folders a `dgm serve` shows, each opened read-only.

A reader never writes, migrates or repairs anything: the run may be live, and its loop is
the only writer. (Steering requests go in through `dgm.store.steering`, one row each.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from dgm.config import RunConfig
from dgm.errors import RunDirError
from dgm.store import Run
from dgm.store.archive import Archive
from dgm.store.db import Database
from dgm.store.run import ARCHIVE_DIR, CONFIG_FILE, DB_FILE

NAME = re.compile(r"[^A-Za-z0-9._-]+")


def is_run_dir(path: Path) -> bool:
    return all((path / name).exists() for name in (CONFIG_FILE, DB_FILE, ARCHIVE_DIR))


def find_runs(paths: list[Path]) -> dict[str, Path]:
    """Run folders by a short unique name: each path is a run folder, or a folder holding
    run folders (one level down; none yet is fine: runs started later appear)."""
    found: list[Path] = []
    for path in paths:
        path = Path(path).resolve()
        if not path.is_dir():
            raise RunDirError(f"{path} is not a folder", "give run folders, or a folder of them")
        if is_run_dir(path):
            found.append(path)
            continue
        inside = sorted(p for p in path.iterdir() if p.is_dir() and is_run_dir(p))
        found += inside
    named: dict[str, Path] = {}
    for path in dict.fromkeys(found):
        name = NAME.sub("-", path.name) or "run"
        key, n = name, 2
        while key in named:
            key, n = f"{name}-{n}", n + 1
        named[key] = path
    return named


@dataclass
class RunView:
    """A read-only `Run` over one folder; its config is re-read when run.toml changes
    (steering changes limits there)."""

    name: str
    path: Path
    run: Run = field(init=False)
    _config_mtime: float = field(init=False, default=-1.0)
    cached: dict[str, tuple[str, str]] = field(default_factory=dict)
    """View name -> (change token, JSON): built once per change, whoever asks."""
    curves: tuple[float, float, dict] | None = None
    """(built at, seconds it took, the progress curves): see `Server._progress`."""

    def __post_init__(self) -> None:
        db = Database.read_only(self.path / DB_FILE)
        self.run = Run(self.path, RunConfig.load(self.path / CONFIG_FILE), db,
                       Archive(self.path / ARCHIVE_DIR))  # fmt: skip
        self._config_mtime = (self.path / CONFIG_FILE).stat().st_mtime

    def fresh(self) -> Run:
        mtime = (self.path / CONFIG_FILE).stat().st_mtime
        if mtime != self._config_mtime:
            self.run.config = RunConfig.load(self.path / CONFIG_FILE)
            self._config_mtime = mtime
        return self.run
