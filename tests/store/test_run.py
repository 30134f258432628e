"""The run store's library API: nodes, evaluations, jobs, usage, reading back."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from dgm.config import RunConfig
from dgm.errors import DgmError, NotFoundError, RunDirError
from dgm.store import Evaluation, Run
from dgm.store.db import SCHEMA_VERSION
from tests.store.conftest import value_diff


def test_create_makes_seed_root_and_layout(run: Run, seed_dir: Path) -> None:
    for name in ("run.toml", "run.sqlite", "archive.git", "logs"):
        assert (run.path / name).exists()
    seed = run.node(0)
    assert seed.parent_id is None and seed.origin == "seed" and seed.depth == 0
    assert sorted(run.archive.files(seed.commit)) == ["agent.py", "agent.toml", "tools/bash.py"]
    assert run.archive.refs() == {0: seed.commit}
    assert RunConfig.load(run.path / "run.toml").name == "t"


def test_the_seed_commit_leaves_out_bytecode_caches(tmp_path: Path, seed_dir: Path) -> None:
    # pip compiles the wheel's copy of the seed agent on install: no .pyc in any node
    for folder in (seed_dir / "__pycache__", seed_dir / "tools" / "__pycache__"):
        folder.mkdir()
        (folder / "agent.cpython-311.pyc").write_bytes(b"\x00bytecode")
    (seed_dir / "stray.pyc").write_bytes(b"\x00")
    with Run.create(tmp_path / "r", RunConfig(name="t"), seed_dir) as run:
        files = run.archive.files(run.node(0).commit)
    assert sorted(files) == ["agent.py", "agent.toml", "tools/bash.py"]


def test_create_refuses_existing_run(run: Run, seed_dir: Path) -> None:
    with pytest.raises(RunDirError, match="already holds a run"):
        Run.create(run.path, RunConfig(), seed_dir)


def test_create_requires_manifest(tmp_path: Path) -> None:
    (tmp_path / "bare").mkdir()
    with pytest.raises(DgmError, match="agent.toml"):
        Run.create(tmp_path / "r", RunConfig(), tmp_path / "bare")


def test_nodes_from_diff_and_tree_are_git_children(run: Run, tmp_path: Path) -> None:
    a = run.add_node(0, diff=value_diff(1, 2), origin="set value 2")
    tree = tmp_path / "tree"
    run.checkout(a.id, tree)
    (tree / "tools" / "search.py").write_text("def run():\n    return 'search'\n")
    b = run.add_node(a.id, tree=tree, origin="add a search tool")
    assert (a.depth, b.depth) == (1, 2)
    parents = run.archive.repo.git.rev_list("--parents", "-n1", b.commit).split()
    assert parents[1] == a.commit  # the git parent is the parent node's commit
    assert "VALUE = 2" in run.read_file(b.id, "agent.py")
    assert "+def run():" in run.diff(b.id)
    assert "tools/search.py" in run.diff(0, b.id)
    assert [c.id for c in run.children(0)] == [a.id]


def test_checkout_gives_exact_codebase(run: Run, tmp_path: Path) -> None:
    a = run.add_node(0, diff=value_diff(1, 5), origin="x")
    out = run.checkout(a.id, tmp_path / "out")
    assert (out / "agent.py").read_text() == "VALUE = 5\n"
    assert (out / "tools" / "bash.py").exists()


def test_diff_that_does_not_apply_is_a_clear_error(run: Run) -> None:
    with pytest.raises(DgmError, match="does not apply"):
        run.add_node(0, diff=value_diff(7, 8), origin="bad")
    assert len(run.nodes()) == 1


def test_unknown_node_is_not_found(run: Run) -> None:
    with pytest.raises(NotFoundError, match="node 42 does not exist"):
        run.node(42)
    with pytest.raises(NotFoundError, match="not a number"):
        run.node("abc")


def test_job_bound_node_is_recorded_once(run: Run) -> None:
    run.queue_job("expand-1", "expand", {"parent": 0})
    run.start_job("expand-1")
    first = run.add_node(0, diff=value_diff(1, 2), origin="x", job_id="expand-1")
    again = run.add_node(0, diff=value_diff(1, 3), origin="y", job_id="expand-1")
    assert first == again
    assert len(run.nodes()) == 2
    job = run.job("expand-1")
    assert job.state == "done" and job.result == {"node_id": first.id} and job.attempts == 1


def test_evaluations_recorded_once_per_job_and_scored(run: Run) -> None:
    run.queue_job("eval-a", "eval", {"node": 0, "task": "a"})
    run.record_evaluation(
        Evaluation(node_id=0, task_id="a", benchmark="polyglot", resolved=True, job_id="eval-a")
    )
    run.record_evaluation(
        Evaluation(node_id=0, task_id="a", benchmark="polyglot", resolved=False, job_id="eval-a")
    )
    run.record_evaluation(Evaluation(node_id=0, task_id="b", benchmark="polyglot", resolved=False))
    assert str(run.score(0)) == "1/2 (50%)"
    assert run.job("eval-a").state == "done"
    assert [e.task_id for e in run.evaluations(0)] == ["a", "b"]


def test_usage_totals(run: Run) -> None:
    run.record_usage(
        {
            "job_id": "j",
            "node_id": 0,
            "role": "solve",
            "model": "m",
            "input_tokens": 10,
            "output_tokens": 5,
            "cost_usd": 0.25,
        }
    )
    run.record_usage({"job_id": "k", "node_id": 0, "role": "diagnose", "cost_usd": 0.5})
    assert run.spend_usd() == pytest.approx(0.75)
    by_role = run.usage_by("role")
    assert by_role["solve"]["input_tokens"] == 10 and by_role["diagnose"]["calls"] == 1


def test_open_rejects_missing_and_corrupt_dirs(run: Run, tmp_path: Path) -> None:
    with pytest.raises(RunDirError, match="does not exist"):
        Run.open(tmp_path / "nope")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "run.toml").write_text("")
    with pytest.raises(RunDirError, match="missing run.sqlite, archive.git"):
        Run.open(tmp_path / "half")
    run.close()
    (run.path / "run.sqlite").write_bytes(b"this is not sqlite" * 100)
    for suffix in ("-wal", "-shm"):
        (run.path / f"run.sqlite{suffix}").unlink(missing_ok=True)
    with pytest.raises(RunDirError, match="not a readable run database"):
        Run.open(run.path)


def test_open_rejects_newer_schema(run: Run) -> None:
    run.close()
    conn = sqlite3.connect(run.path / "run.sqlite")
    conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (SCHEMA_VERSION + 1,))
    conn.commit()
    conn.close()
    with pytest.raises(RunDirError, match="newer than this dgm supports"):
        Run.open(run.path)


def test_open_repairs_ref_lost_in_a_crash(run: Run) -> None:
    a = run.add_node(0, diff=value_diff(1, 2), origin="x")
    run.archive.repo.git.update_ref("-d", f"refs/nodes/{a.id}")
    reopened = Run.open(run.path)
    assert reopened.archive.refs()[a.id] == a.commit


def test_invalid_config_in_run_dir_names_field(run: Run) -> None:
    (run.path / "run.toml").write_text('[strategy]\nname = "genetic"\n')
    with pytest.raises(DgmError, match="strategy.name"):
        Run.open(run.path)
