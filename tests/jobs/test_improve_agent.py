"""Hyperagent mode without Docker: which procedure makes the child (the parent's own
`improve` command, or the built-in one as a fallback that says so), and when a child
counts as having changed its improvement procedure. The sandboxed agent run is replaced
by a stand-in that returns a patch; everything around it (the dispatch, the harness's
diff -> child, the result) is the real code."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from dgm.errors import DgmError
from dgm.jobs.agent_run import AgentRunResult, load_manifest
from dgm.jobs.diagnose import ImprovementTarget
from dgm.jobs.expand import ExpandJob, ExpandSettings, run_expand
from dgm.jobs.expand.child import improve_changed
from dgm.jobs.expand.improve import FALLBACK, procedure_for

IMPROVE = "python3 {agent_dir}/improve.py --history {history_dir} --out {output_dir}"


def agent(
    root: Path, improve: str | None = IMPROVE, paths: str = '["improve.py", "meta/"]'
) -> Path:
    root.mkdir(parents=True)
    toml = '[agent]\nname = "t"\n[commands]\nsolve = "true"\nsmoke = "true"\n'
    if improve is not None:
        toml += f'improve = "{improve}"\n[improve]\npaths = {paths}\n'
    (root / "agent.toml").write_text(toml)
    (root / "improve.py").write_text("SHOWN = 1\n")
    (root / "solve.py").write_text("pass\n")
    return root


def patch_of(root: Path, edit: dict[str, str]) -> str:
    """The git diff that `edit` (path -> new text) makes to a copy of `root`."""
    work = root.parent / f"{root.name}-edit"
    shutil.copytree(root, work)
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    for rel, text in edit.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    subprocess.run([*git, "add", "-A"], check=True)
    return subprocess.run([*git, "diff", "--cached", "HEAD"], check=True, capture_output=True,
                          text=True).stdout  # fmt: skip


def test_manifest_reads_the_improve_contract(tmp_path: Path) -> None:
    manifest = load_manifest(agent(tmp_path / "a"))
    assert manifest.improve_paths == ("improve.py", "meta/")
    assert "--history /history --out /out" in manifest.command("improve")
    bad = agent(tmp_path / "b", paths='"improve.py"')
    with pytest.raises(DgmError, match=r"\[improve\] paths must be a list"):
        load_manifest(bad)


@pytest.mark.parametrize(
    ("edit", "changed"),
    [
        ({"improve.py": "SHOWN = 0\n"}, True),  # a declared file
        ({"meta/prompt.md": "new\n"}, True),  # inside a declared folder
        ({"solve.py": "print(1)\n"}, False),  # the task agent only
        ({"metadata.py": "x\n"}, False),  # a name that only starts like a declared folder
    ],
)
def test_improve_changed_follows_the_parents_declared_paths(
    tmp_path: Path, edit: dict[str, str], changed: bool
) -> None:
    parent = agent(tmp_path / "p")
    patch = patch_of(parent, edit)
    child = tmp_path / "p-edit"
    assert improve_changed(parent, child, patch) is changed


def test_a_new_improve_command_line_is_a_changed_procedure(tmp_path: Path) -> None:
    parent = agent(tmp_path / "p")
    text = (
        (parent / "agent.toml")
        .read_text()
        .replace("improve.py --history", "improve.py -v --history")
    )
    patch = patch_of(parent, {"agent.toml": text})
    assert improve_changed(parent, tmp_path / "p-edit", patch)
    plain = agent(tmp_path / "q", improve=None)  # gaining an improve command changes it too
    patch = patch_of(plain, {"agent.toml": (parent / "agent.toml").read_text()})
    assert improve_changed(plain, tmp_path / "q-edit", patch)


def test_procedure_for_each_mode(tmp_path: Path) -> None:
    own, plain = agent(tmp_path / "own"), agent(tmp_path / "plain", improve=None)
    assert procedure_for("dgm", own) == "dgm"
    assert procedure_for("agent", own) == "agent"
    logs = tmp_path / "logs"
    logs.mkdir()
    assert procedure_for("agent", plain, logs) == FALLBACK
    assert "no improve command" in (logs / "procedure.txt").read_text()


class FakeRun:
    """Stands in for the sandboxed agent run: records the request, returns a patch."""

    def __init__(self, patch: str) -> None:
        self.patch, self.requests = patch, []

    def __call__(self, request: Any, out_dir: Path, endpoint: Any, backend: str) -> AgentRunResult:
        self.requests.append((request, endpoint))
        out_dir.mkdir(parents=True, exist_ok=True)
        if request.command == "improve":
            (out_dir / "problem_statement.md").write_text("Show every failed task.\n")
        return AgentRunResult(self.patch, 0, False, 0.1, "ran", None)


def _job(tmp_path: Path, parent: Path, mode: str, history: Path | None) -> ExpandJob:
    settings = ExpandSettings(run="r", smoke_test=False, backend="local", mode=mode)
    target = ImprovementTarget("stochasticity")  # no diagnosis call in the built-in path
    return ExpandJob("expand-0-x", 0, str(parent), target, str(tmp_path / "log"), settings,
                     improve_llm="improve-endpoint", self_improve_llm="si-endpoint",  # type: ignore[arg-type]
                     history_dir=str(history) if history else None)  # fmt: skip


def test_agent_mode_runs_the_parents_improve_command(tmp_path: Path, monkeypatch) -> None:
    parent = agent(tmp_path / "p")
    fake = FakeRun(patch_of(parent, {"improve.py": "SHOWN = 0\n"}))
    monkeypatch.setattr("dgm.jobs.agent_run.run_agent", fake)
    history = tmp_path / "history"
    history.mkdir()
    (history / "history.json").write_text(json.dumps({"format": "dgm-history/1"}))
    result = run_expand(_job(tmp_path, parent, "agent", history))
    [(request, endpoint)] = fake.requests
    assert (request.command, request.history, endpoint) == ("improve", history, "improve-endpoint")
    assert result.status == "ok" and result.procedure == "agent" and result.improve_changed
    assert result.problem_statement == "Show every failed task."  # the procedure's own choice
    assert "+SHOWN = 0" in result.diff


def test_agent_mode_without_improve_falls_back_and_says_so(tmp_path: Path, monkeypatch) -> None:
    parent = agent(tmp_path / "p", improve=None)
    fake = FakeRun(patch_of(parent, {"solve.py": "print(2)\n"}))
    monkeypatch.setattr("dgm.jobs.agent_run.run_agent", fake)
    result = run_expand(_job(tmp_path, parent, "agent", None))
    [(request, endpoint)] = fake.requests
    assert (request.command, request.history, endpoint) == ("solve", None, "si-endpoint")
    assert result.status == "ok" and result.procedure == FALLBACK and not result.improve_changed
    saved = json.loads((tmp_path / "log" / "result.json").read_text())
    assert saved["procedure"] == FALLBACK


def test_agent_mode_without_a_history_is_an_agent_error(tmp_path: Path, monkeypatch) -> None:
    parent = agent(tmp_path / "p")
    monkeypatch.setattr("dgm.jobs.agent_run.run_agent", FakeRun(""))
    result = run_expand(_job(tmp_path, parent, "agent", None))
    assert result.status == "agent_error" and "no history" in result.reason


def test_an_agent_mode_job_round_trips_through_json(tmp_path: Path) -> None:
    from dgm.jobs import job_from_dict, job_to_dict
    from dgm.jobs.llm_access import LLMAccess

    access = LLMAccess("unix:///s/im.sock", "tok", "m", {"DGM_LLM_URL": "unix:///run/x"}, "/s")
    job = _job(tmp_path, agent(tmp_path / "p"), "agent", tmp_path / "h")
    job = ExpandJob(**{**job.__dict__, "improve_llm": access, "self_improve_llm": None})
    again = job_from_dict(json.loads(json.dumps(job_to_dict(job))))
    assert again == job and again.settings.mode == "agent" and again.improve_llm == access
