"""`dgm bench fetch polyglot`: use the checkout that is already there, else clone one.

The network is touched only when no checkout is found where dgm would look (--data,
$DGM_POLYGLOT_DIR, the cache folder), so an offline machine with the data succeeds.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from dgm.benchmarks.polyglot import loader as polyglot
from dgm.errors import DgmError


@dataclass(frozen=True)
class Checkout:
    path: Path
    origin: str  # where it was found: --data, DGM_POLYGLOT_DIR, --dest, the cache
    commit: str | None  # None: not a git checkout (a copy)
    cloned: bool = False

    def describe(self) -> str:
        commit = f"commit {self.commit[:7]}" if self.commit else "a copy, not a git checkout"
        verb = "fetched to" if self.cloned else "already at"
        return f"polyglot benchmark {verb} {self.path} ({self.origin}, {commit})"

    def usage_hint(self) -> str | None:
        """How later commands find it, unless they do on their own."""
        if self.origin in ("--data", "--dest"):
            return f"use it with --data {self.path} or DGM_POLYGLOT_DIR={self.path}"
        return None


def _commit(path: Path) -> str | None:
    done = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"],
                          capture_output=True, text=True)  # fmt: skip
    top = subprocess.run(["git", "-C", str(path), "rev-parse", "--show-toplevel"],
                         capture_output=True, text=True)  # fmt: skip
    if done.returncode or Path(top.stdout.strip()).resolve() != path.resolve():
        return None  # not its own repository (maybe a folder inside another one)
    return done.stdout.strip()


def _existing(path: Path, origin: str) -> Checkout:
    path = polyglot.find_checkout(path)  # a clear error when it is not a checkout
    commit = _commit(path)
    if commit and not commit.startswith(polyglot.PINNED_COMMIT):
        raise DgmError(
            f"{path} ({origin}) is at commit {commit[:7]}, not the pinned {polyglot.PINNED_COMMIT}",
            f"`git -C {path} checkout {polyglot.PINNED_COMMIT}`, or remove it and fetch again",
        )
    return Checkout(path, origin, commit)


def fetch(data: Path | None = None, dest: Path | None = None) -> Checkout:
    """The checkout to use: --data, else --dest or $DGM_POLYGLOT_DIR or the cache folder
    when it holds one, else a fresh clone into --dest or the cache folder."""
    if data is not None:
        return _existing(data, "--data")
    env = os.environ.get(polyglot.ENV_VAR)
    if dest is None and env:
        return _existing(Path(env), polyglot.ENV_VAR)
    origin = "--dest" if dest is not None else "the cache folder"
    dest = dest or polyglot.default_dir()
    if dest.exists():
        return _existing(dest, origin)
    dest.parent.mkdir(parents=True, exist_ok=True)
    for cmd in (
        ["git", "clone", "-q", polyglot.REPO_URL, str(dest)],
        ["git", "-C", str(dest), "checkout", "-q", polyglot.PINNED_COMMIT],
    ):
        if subprocess.run(cmd).returncode != 0:
            raise DgmError(
                f"`{' '.join(cmd)}` failed",
                "check the network, or point --data / DGM_POLYGLOT_DIR at a copy",
            )
    return Checkout(dest, origin, _commit(dest), cloned=True)
