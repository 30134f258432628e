"""A job packed for a node with no shared filesystem: the folders it reads travel inside
it, its endpoints are rewritten to the node's relay, and its logs come back into the log
folder the head chose (plain files only)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from dgm.benchmarks.task import Task
from dgm.errors import SandboxError
from dgm.executors.distributed.parcel import Returned, pack, pack_logs, receive, unpack
from dgm.jobs.evaluate import AgentRef, EvalJob
from dgm.jobs.llm_access import LLMAccess
from dgm.store import Evaluation


def _job(tmp_path: Path) -> EvalJob:
    agent, exercise = tmp_path / "head" / "agent", tmp_path / "head" / "exercise"
    (agent / "coder").mkdir(parents=True)
    (agent / "agent.toml").write_text("[agent]\n")
    (agent / "coder" / "main.py").write_text("print(1)\n")
    exercise.mkdir()
    (exercise / "wordy.py").write_text("def answer(q): ...\n")
    task = Task("python__wordy", "polyglot", "python", "solve it", "dgm/polyglot:abc",
                "dgm/polyglot:abc", "pytest", 60, str(exercise))  # fmt: skip
    llm = LLMAccess("unix:///run/dgm/llm.sock", "tok", "m", {"DGM_LLM_URL": "unix:///run/dgm/llm.sock"},
                    "/head/socket.sock", "/run/dgm/llm.sock")  # fmt: skip
    log_dir = tmp_path / "run" / "logs" / "eval" / "eval-0-abc"
    log_dir.mkdir(parents=True)
    (log_dir / "llm.jsonl").write_text("{}\n")  # the head's gateway writes this one
    return EvalJob(AgentRef(str(agent), commit="c0ffee"), task, str(log_dir), llm=llm)


def test_a_parcel_carries_the_folders_and_brings_the_logs_back(tmp_path) -> None:
    job = _job(tmp_path)
    parcel = pack(job)
    assert parcel.job_id == "eval-0-abc" and parcel.images == ("dgm/polyglot:abc",)
    node = tmp_path / "node"
    there, log_dir = unpack(parcel, node, lambda field, access: "/node/relay.sock")
    assert Path(there.agent.path, "coder", "main.py").read_text() == "print(1)\n"
    assert Path(there.task.source, "wordy.py").is_file()
    assert str(node) in there.agent.path and str(node) in there.task.source
    assert there.llm.socket_path == "/node/relay.sock"  # mounted where the gateway's was
    assert there.llm.url == "unix:///run/dgm/llm.sock" and there.llm.token == "tok"
    assert Path(there.log_dir) == log_dir and not any(log_dir.iterdir())
    (log_dir / "patch.diff").write_text("diff\n")
    (log_dir / "out").mkdir()
    (log_dir / "out" / "trajectory.json").write_text("[]")
    outcome = Evaluation(None, "python__wordy", "polyglot", True, log_dir=str(log_dir))
    returned = Returned(outcome, pack_logs(log_dir), str(log_dir), {"name": "b"})
    result = receive(parcel, returned)
    head_log = Path(job.log_dir)
    assert (head_log / "patch.diff").read_text() == "diff\n"
    assert (head_log / "out" / "trajectory.json").is_file()
    assert result.log_dir == str(head_log)  # with the head gateway's llm.jsonl
    assert (head_log / "llm.jsonl").is_file()


def test_logs_with_a_link_are_refused_on_the_head(tmp_path) -> None:
    job = _job(tmp_path)
    node_log = tmp_path / "node-log"
    node_log.mkdir()
    (node_log / "evil").symlink_to("/etc/passwd")
    returned = Returned(None, pack_logs(node_log), str(node_log), {"name": "b"})
    with pytest.raises(SandboxError, match="refused"):
        receive(pack(job), returned)
    assert not Path(job.log_dir, "evil").exists()


def test_a_host_side_endpoint_points_at_the_relay_socket(tmp_path) -> None:
    job = _job(tmp_path)
    host_side = dataclasses.replace(job.llm, container_socket_path=None, url="unix:///head.sock")
    parcel = pack(dataclasses.replace(job, llm=host_side))
    there, _ = unpack(parcel, tmp_path / "node", lambda field, access: "/node/relay.sock")
    assert there.llm.url == "unix:///node/relay.sock"
    assert there.llm.env["DGM_LLM_URL"] == "unix:///node/relay.sock"


def test_an_expansion_carries_its_history_and_goes_without_one(tmp_path) -> None:
    from dgm.jobs.diagnose import ImprovementTarget
    from dgm.jobs.expand import ExpandJob, ExpandSettings

    parent, log_dir = tmp_path / "head" / "parent", tmp_path / "head" / "logs" / "expand-0-a"
    parent.mkdir(parents=True)
    (parent / "agent.toml").write_text("[agent]\n")
    (log_dir / "history").mkdir(parents=True)
    (log_dir / "history" / "history.json").write_text('{"format": "dgm-history/1"}')
    job = ExpandJob("expand-0-a", 0, str(parent), ImprovementTarget("stochasticity"),
                    str(log_dir), ExpandSettings(run="t", backend="local"),
                    history_dir=str(log_dir / "history"))  # fmt: skip
    there, _ = unpack(pack(job), tmp_path / "node", lambda field, access: "")
    assert there.history_dir.startswith(str(tmp_path / "node"))
    assert Path(there.history_dir, "history.json").read_text() == '{"format": "dgm-history/1"}'
    bare = dataclasses.replace(job, history_dir=None)
    assert set(pack(bare).trees) == {"parent_code"}
    there, _ = unpack(pack(bare), tmp_path / "node2", lambda field, access: "")
    assert there.history_dir is None and Path(there.parent_code, "agent.toml").is_file()
    assert ExpandJob.from_dict(json.loads(json.dumps(job.to_dict()))) == job  # plain data
