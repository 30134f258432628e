"""Nothing an agent wrote is followed on the host: source for prompts, manifests, logs,
the archive and export (issue 12, 'Nothing from an agent is followed on the host')."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from dgm import safefs
from dgm.config import RunConfig
from dgm.errors import DgmError
from dgm.jobs.agent_run import load_manifest
from dgm.jobs.diagnose import ImprovementTarget, agent_source, diagnosis_request
from dgm.report.logs import EvalLogs, load_trajectory, read_text
from dgm.store import Run
from dgm.store.archive import UnsafeTreeError

from .conftest import FAKE_KEY, hostile_tree


@pytest.fixture(autouse=True)
def no_hang():
    """A FIFO opened by mistake would block forever: fail the test instead."""
    signal.signal(signal.SIGALRM, lambda *_: pytest.fail("blocked on a special file"))
    signal.alarm(20)
    yield
    signal.alarm(0)


def test_agent_source_skips_links_and_fifos(tmp_path: Path, planted_key: Path) -> None:
    tree = hostile_tree(tmp_path / "agent", planted_key)
    source = agent_source(tree)
    assert "## agent.py" in source and "## sub/inner.py" in source
    for name in ("notes.md", "key.txt", "docs/", "pipe.md", "sub/ok.md"):
        assert f"## {name}" not in source
    assert FAKE_KEY not in source and "ANTHROPIC_API_KEY" not in source
    prompt = json.dumps(diagnosis_request(ImprovementTarget("task", task_id="t"), tree))
    assert FAKE_KEY not in prompt


def test_safe_reads_refuse_links_special_files_and_big_files(tmp_path, planted_key) -> None:
    tree = hostile_tree(tmp_path / "agent", planted_key)
    for rel, why in [
        ("notes.md", "symbolic link"),
        ("docs/host-secret.txt", "folder 'docs' refused"),
        ("pipe.md", "not a regular file"),
        ("../host-secret.txt", "not a plain relative path"),
    ]:
        with pytest.raises(safefs.UnsafeFile, match=why):
            safefs.read_bytes(tree, rel)
    with pytest.raises(safefs.UnsafeFile, match="larger than 4 bytes"):
        safefs.read_bytes(tree, "agent.py", limit=4)
    assert safefs.read_text(tree, "sub/inner.py") == "X = 1\n"
    assert list(safefs.walk_files(tree)) == ["agent.py", "agent.toml", "sub/inner.py"]


def test_manifest_that_is_a_link_is_refused(tmp_path: Path, planted_key: Path) -> None:
    tree = hostile_tree(tmp_path / "agent", planted_key)
    (tree / "agent.toml").unlink()
    (tree / "agent.toml").symlink_to(planted_key)
    with pytest.raises(DgmError, match="agent.toml: refused") as info:
        load_manifest(tree)
    assert FAKE_KEY not in str(info.value)
    (tree / "agent.toml").unlink()
    os.mkfifo(tree / "agent.toml")
    with pytest.raises(DgmError, match="not a regular file"):
        load_manifest(tree)


def test_report_logs_never_follow_a_planted_trajectory(tmp_path, planted_key) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "trajectory.json").symlink_to("/proc/self/environ")
    (logs / "test_output.txt").symlink_to(planted_key)
    os.mkfifo(logs / "llm.jsonl")
    view = EvalLogs(logs)
    assert view.trajectory is None and view.test_output is None and view.llm is None
    assert load_trajectory(view) is None
    assert read_text(logs / "test_output.txt") is None


def test_archive_refuses_links_that_leave_the_tree(tmp_path: Path, planted_key) -> None:
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "agent.toml").write_text('[agent]\nname = "s"\n[commands]\nsolve = "true"\n')
    (seed / "a.py").write_text("A = 1\n")
    run = Run.create(tmp_path / "run", RunConfig(name="t"), seed)
    try:
        for target in ("/proc/self/environ", str(planted_key), "../../etc/passwd", "d/.."):
            diff = (
                "diff --git a/notes.md b/notes.md\nnew file mode 120000\n--- /dev/null\n"
                f"+++ b/notes.md\n@@ -0,0 +1 @@\n+{target}\n\\ No newline at end of file\n"
            )
            with pytest.raises(UnsafeTreeError, match="leaves the agent's tree"):
                run.add_node(0, diff=diff, origin="hostile")
        inside = diff.replace("+d/..", "+a.py")
        node = run.add_node(0, diff=inside, origin="a link to its own file")
        assert run.archive.read_file(node.commit, "notes.md") == "a.py"
        (seed / "out").symlink_to(planted_key)
        with pytest.raises(UnsafeTreeError):
            run.archive.commit_tree(seed, None, "seed with a link out")
        assert [n.id for n in run.nodes()] == [0, node.id]
    finally:
        run.close()


def test_export_replaces_planted_links_instead_of_writing_through(tmp_path, planted_key):
    from dgm.report.export import export

    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "agent.toml").write_text('[agent]\nname = "s"\n[commands]\nsolve = "true"\n')
    (seed / "EXPORT.md").symlink_to("agent.toml")  # inside the tree, so archived
    run = Run.create(tmp_path / "run", RunConfig(name="t"), seed)
    run.close()
    export(tmp_path / "run", "0", tmp_path / "out", "dir")
    assert not (tmp_path / "out" / "EXPORT.md").is_symlink()
    assert (tmp_path / "out" / "agent.toml").read_text().startswith("[agent]")
    assert "node 0" in (tmp_path / "out" / "EXPORT.md").read_text()


def test_link_rules_judge_the_text_of_a_link(tmp_path: Path) -> None:
    inside = [("a/l", "../b"), ("l", "x/y"), ("a/b/l", "../../c"), ("l", "./x")]
    outside = [("l", "../x"), ("l", "/etc/passwd"), ("l", "d/.."), ("a/l", "x/../../y"), ("l", "")]
    assert not any(safefs.link_escapes(link, target) for link, target in inside)
    assert all(safefs.link_escapes(link, target) for link, target in outside)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "ok").symlink_to("../d")
    (tmp_path / "d" / "bad").symlink_to("/proc/self/environ")
    (tmp_path / "up").symlink_to("..")
    assert safefs.escaping_links(tmp_path) == [("d/bad", "/proc/self/environ"), ("up", "..")]
