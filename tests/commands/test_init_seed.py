"""`dgm init RUN_DIR --seed ...` from a folder, a local git repository, or a package on the
index plus an agent.toml; each says what it takes before it builds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dgm.store import Run


def dgm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dgm", *args], capture_output=True, text=True,
                          timeout=600)  # fmt: skip


def _agent(root: Path) -> Path:
    root.mkdir()
    (root / "agent.toml").write_text('[agent]\nname = "tiny"\n[commands]\nsolve = "true"\n')
    (root / "run.py").write_text("print('solve')\n")
    return root


def test_seed_from_a_local_git_repository(tmp_path):
    repo = _agent(tmp_path / "agent")
    hook = repo / ".git" / "hooks" / "post-checkout"
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "agent"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo,
                       check=True)  # fmt: skip
    hook.write_text(f"#!/bin/sh\ntouch {tmp_path}/hook-ran\n")
    hook.chmod(0o755)
    done = dgm("init", str(tmp_path / "run"), "--seed", f"file://{repo}")
    assert done.returncode == 0, done.stderr
    assert f"seed: cloning file://{repo}" in done.stdout
    assert not (tmp_path / "hook-ran").exists()
    with Run.open(tmp_path / "run") as run:
        assert sorted(run.archive.files(run.node(0).commit)) == ["agent.toml", "run.py"]


def test_a_remote_url_or_a_bad_requirement_is_refused(tmp_path):
    remote = dgm("init", str(tmp_path / "a"), "--seed", "https://example.com/agent.git")
    assert remote.returncode != 0 and "not an agent folder" in remote.stderr + remote.stdout
    manifest = _agent(tmp_path / "m") / "agent.toml"
    url = dgm("init", str(tmp_path / "b"), "--seed", "pkg @ https://x/y.whl",
              "--manifest", str(manifest))  # fmt: skip
    assert url.returncode != 0 and "is a URL" in url.stderr + url.stdout


@pytest.mark.slow
def test_seed_from_a_package_and_a_manifest(tmp_path):
    """Needs the package index (PyPI): mini-swe-agent's pinned wheel, unpacked."""
    manifest = _agent(tmp_path / "m") / "agent.toml"
    done = dgm("init", str(tmp_path / "run"), "--seed", "mini-swe-agent==2.4.6",
               "--manifest", str(manifest))  # fmt: skip
    if done.returncode != 0 and "package index" in done.stderr + done.stdout:
        pytest.skip(f"no package index: {done.stderr[-300:]}")
    assert done.returncode == 0, done.stderr
    assert "seed: mini-swe-agent==2.4.6 from the package index" in done.stdout
    with Run.open(tmp_path / "run") as run:
        files = run.archive.files(run.node(0).commit)
    assert "minisweagent/run/mini.py" in files and "agent.toml" in files
    assert not any(".dist-info" in f for f in files)
