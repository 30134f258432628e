"""Git on the host never takes orders from an agent's files (issue 12, 'Nothing from an
agent is followed on the host'): a self-improving agent's codebase is copied and
`git init`/`git apply`-ed on the host by every expansion (dgm/jobs/expand/child.py), and git
used to read the folder's own `.gitconfig` (HOME was the folder). A `filter` clean
command or an fsmonitor hook there ran on the host, with the API keys in its env."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dgm.config import RunConfig
from dgm.store import Run
from dgm.workspace_git import git_apply, git_diff, git_init, run_git

from .conftest import FAKE_KEY


def _hostile_config(root: Path, marker: Path) -> None:
    """Every way a config file can name a command git would run on `git add`/`apply`."""
    (root / ".gitconfig").write_text(
        f'[filter "x"]\n\tclean = "env > {marker}; cat"\n\tsmudge = "env > {marker}; cat"\n'
        f'[core]\n\tfsmonitor = "env > {marker}; false"\n\thooksPath = hooks\n'
        f'[diff]\n\texternal = "env > {marker}; true"\n'
    )
    (root / ".gitattributes").write_text("* filter=x\n")
    (root / "hooks").mkdir()
    for hook in ("pre-commit", "post-commit", "post-applypatch"):
        (root / "hooks" / hook).write_text(f"#!/bin/sh\nenv > {marker}\n")
        (root / "hooks" / hook).chmod(0o755)


def test_git_on_an_agent_folder_runs_none_of_its_commands(
    tmp_path: Path, planted_key: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "ran-on-the-host.txt"
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "agent.toml").write_text('[agent]\nname = "s"\n[commands]\nsolve = "true"\n')
    (seed / "agent.py").write_text("A = 1\n")
    _hostile_config(seed, marker)
    # The codebase goes through the archive as an expansion's parent would.
    with Run.create(tmp_path / "run", RunConfig(name="t"), seed) as run:
        parent = run.checkout(0, tmp_path / "parent")
    workspace = tmp_path / "work"
    shutil.copytree(parent, workspace, symlinks=True)  # what run_expand does
    monkeypatch.setenv("HOME", str(workspace))  # even a HOME pointing at it is not read
    git_init(workspace)
    patch = "--- a/agent.py\n+++ b/agent.py\n@@ -1 +1 @@\n-A = 1\n+A = 2\n"
    git_apply(workspace, patch)
    assert (workspace / "agent.py").read_text() == "A = 2\n"
    assert "+A = 2" in git_diff(workspace)
    assert not marker.exists(), "git ran a command the agent's files named"


def test_git_gets_no_provider_key(tmp_path: Path, planted_key: Path) -> None:
    """Defence in depth: even a command git did run would find no key in its env."""
    folder = tmp_path / "w"
    folder.mkdir()
    (folder / "x.py").write_text("X = 1\n")
    git_init(folder)
    probe = tmp_path / "probe.sh"
    probe.write_text("#!/bin/sh\nenv\n")
    probe.chmod(0o755)
    (folder / "y.py").write_text("Y = 1\n")
    env_seen = run_git(folder, "-c", f"alias.probe=!{probe}", "probe")
    assert "GIT_AUTHOR_NAME=dgm" in env_seen and FAKE_KEY not in env_seen


def test_the_same_files_still_give_the_same_commit(tmp_path: Path) -> None:
    shas = []
    for name in ("a", "b"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "x.py").write_text("X = 1\n")
        shas.append(git_init(folder))
    assert shas[0] == shas[1]
