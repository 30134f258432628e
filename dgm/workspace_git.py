"""Git on workspaces dgm makes itself (task workspaces, copies of an agent's source).

These repositories are created by dgm on the host, so their `.git` is ours, and git reads
no other configuration: not the user's, not the system's, and never a `.gitconfig` in the
folder (an agent's codebase may hold one, with a `filter` or `fsmonitor` command that git
would run on the host, keys in its environment). Hooks and fsmonitor are off. Fixed
identity and dates make the same files give the same commit sha.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from dgm.errors import DgmError
from dgm.key_redaction import KEY_VARIABLES

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "dgm",
    "GIT_AUTHOR_EMAIL": "dgm@localhost",
    "GIT_COMMITTER_NAME": "dgm",
    "GIT_COMMITTER_EMAIL": "dgm@localhost",
}
_FIXED_DATES = {
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
}


# No global or system config: HOME and XDG_CONFIG_HOME name no folder (git skips them),
# GIT_CONFIG_GLOBAL is empty. Anything the agent wrote in the folder stays plain data.
_NO_CONFIG = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "HOME": os.devnull,
    "XDG_CONFIG_HOME": os.devnull,
}
_SAFE = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false")


def run_git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_IDENTITY, **_FIXED_DATES, **_NO_CONFIG}
    # Git needs no provider key; and only our own GIT_CONFIG_* settings apply.
    env = {k: v for k, v in env.items() if k not in KEY_VARIABLES
           and (not k.startswith("GIT_CONFIG_") or k in _NO_CONFIG)}  # fmt: skip
    proc = subprocess.run(["git", *_SAFE, *args], cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise DgmError(f"git {' '.join(args)} failed in {cwd}: {proc.stderr.strip()[-300:]}")
    return proc.stdout


def git_init(folder: Path) -> str:
    """Make `folder` a git repo with everything in one commit; returns its sha."""
    run_git(folder, "init", "-q", "-b", "main")
    run_git(folder, "add", "-A")
    run_git(folder, "commit", "-q", "--allow-empty", "-m", "task workspace")
    return run_git(folder, "rev-parse", "HEAD").strip()


def git_diff(folder: Path) -> str:
    """Everything changed since the first commit, as a binary-safe patch."""
    run_git(folder, "add", "-A")
    return run_git(folder, "diff", "--cached", "--binary", "HEAD")


def git_apply(folder: Path, patch: str) -> None:
    """Apply `patch` to the files of `folder` (not the index)."""
    patch_file = folder.parent / f".{folder.name}.dgm-patch"
    patch_file.write_text(patch if patch.endswith("\n") else patch + "\n")
    try:
        run_git(folder, "apply", "--binary", "--whitespace=nowarn", str(patch_file))
    finally:
        patch_file.unlink()
