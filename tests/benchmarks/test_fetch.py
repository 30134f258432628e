"""`dgm bench fetch polyglot` offline: data already there is found and named, and the
network (here: a clone URL that cannot work) is only tried when nothing is there."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dgm.benchmarks.polyglot import loader as polyglot
from dgm.commands.app import app
from dgm.errors import DgmError

runner = CliRunner()


@pytest.fixture(autouse=True)
def offline(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(polyglot, "REPO_URL", str(tmp_path / "no-such-remote"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(polyglot.ENV_VAR, raising=False)
    return tmp_path / "cache" / "dgm" / "polyglot-benchmark"


def tiny_copy(path: Path) -> Path:
    (path / "python" / "exercises" / "practice" / "two-fer").mkdir(parents=True)
    return path


def fetch(*args: str) -> str:
    result = runner.invoke(app, ["bench", "fetch", "polyglot", *args])
    if result.exception:
        raise result.exception
    return " ".join(result.output.split())


def test_env_var_checkout_is_used_without_network(tmp_path, monkeypatch, offline) -> None:
    data = tiny_copy(tmp_path / "shared")
    monkeypatch.setenv(polyglot.ENV_VAR, str(data))
    out = fetch()
    assert f"polyglot benchmark already at {data} (DGM_POLYGLOT_DIR, a copy" in out
    assert not offline.exists()


def test_data_option_is_checked_and_named(tmp_path) -> None:
    data = tiny_copy(tmp_path / "mine")
    out = fetch("--data", str(data))
    assert f"already at {data} (--data" in out and f"use it with --data {data}" in out
    with pytest.raises(DgmError, match="not a polyglot benchmark checkout"):
        fetch("--data", str(tmp_path))


def test_cache_folder_is_used_without_network(offline) -> None:
    tiny_copy(offline)
    assert f"already at {offline} (the cache folder" in fetch()


def test_checkout_at_another_commit_names_the_pinned_one(tmp_path) -> None:
    repo = tiny_copy(tmp_path / "repo")
    (repo / "python" / "README.md").write_text("x\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    with pytest.raises(DgmError, match=f"not the pinned {polyglot.PINNED_COMMIT}"):
        fetch("--dest", str(repo))


def test_nothing_there_tries_the_network_and_says_what_to_do(offline) -> None:
    with pytest.raises(DgmError, match="git clone") as info:
        fetch()
    assert "DGM_POLYGLOT_DIR" in (info.value.hint or "")
