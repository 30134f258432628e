"""The structured history an improvement step reads (`dgm-history/1`): written from a real
store and its log folders, loaded and rendered for a prompt, and never holding a hidden
test line, a judge canary, tamper evidence, an API key, or what an agent's link points at."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from dgm.jobs.diagnose import choose_target
from dgm.jobs.expand import ExpandJob, ExpandSettings
from dgm.jobs.expand.builtin import job_diagnosis_request
from dgm.jobs.history_format import FORMAT, HistoryError, load_history, read_part, render_history
from dgm.loop.history_writer import budget_left, write_history
from dgm.loop.meta_loop import MetaLoop
from dgm.store import Evaluation, Run
from tests.loop.fake_jobs import FakeJobs

HIDDEN_LINE = "assert compute_hidden_answer(41) == 1764"
HIDDEN = f"def test_real():\n    {HIDDEN_LINE}\n\ndef test_other():\n    assert add(1, 2) == 3\n"
CANARIES = ["test_5ab9c1d2e3f4_ok", "test_5ab9c1d2e3f4_bad"]
EVIDENCE = "must-fail canary test_5ab9c1d2e3f4_bad passed: the runner was patched to pass"
KEY = "sk-" + "ant-" + "HISTfake01234567"  # key-shaped at runtime only (the secret scan)
HOST_SECRET = "HOST-ONLY-SECRET-never-in-a-history"
FORBIDDEN = (HIDDEN_LINE, "compute_hidden_answer", "5ab9c1d2e3f4", "runner was patched", KEY,
             HOST_SECRET)  # fmt: skip


def _diff(name: str, line: str) -> str:
    return (
        f"diff --git a/{name} b/{name}\nnew file mode 100644\n--- /dev/null\n"
        f"+++ b/{name}\n@@ -0,0 +1 @@\n+{line}\n"
    )


def _trajectory(*tool_outputs: str) -> str:
    messages = [
        {"role": "system", "content": "you are an agent"},
        {"role": "user", "content": "fix the bug"},
        {"role": "assistant", "content": "I edited solution.py and ran the tests"},
    ]
    messages += [{"role": "tool", "content": out} for out in tool_outputs]
    return json.dumps({"exit_status": "finished", "messages": messages})  # fmt: skip


def _eval(run: Run, node: int, task: str, resolved: bool, log: str | None = None, **kw) -> None:
    run.record_evaluation(Evaluation(node_id=node, task_id=task, benchmark="b",
                                     resolved=resolved, log_dir=log, **kw))  # fmt: skip


def _log(run: Run, name: str, trajectory: str | None, test_output: str | None) -> str:
    folder = run.log_dir("eval", name)
    if trajectory is not None:
        (folder / "trajectory.json").write_text(trajectory)
    if test_output is not None:
        (folder / "test_output.txt").write_text(test_output)
    return run.relative(folder)


@pytest.fixture
def planted(make_run, tmp_path: Path) -> tuple[Run, int]:
    """A run whose store and logs carry every kind of secret; returns it and the node
    (depth 1, with a sibling, a child and failed expansions) whose history is written."""
    run = make_run(**{"limits.max_evals": 100, "limits.max_expansions": 10,
                      "limits.budget_usd": 5.0, "limits.max_hours": 1.0})  # fmt: skip
    node = run.add_node(0, diff=_diff("gen_a.txt", "better prompts"), origin="a",
                        meta={"improve_changed": True}).id  # fmt: skip
    sibling = run.add_node(0, diff=_diff("gen_b.txt", "cosmetic"), origin="b",
                           meta={"harvested_tools": ["search_files"]}).id  # fmt: skip
    child = run.add_node(node, diff=_diff("gen_c.txt", f"API_KEY = '{KEY}'"), origin="c").id
    _eval(run, 0, "task-1", False)
    _eval(run, 0, "task-2", True)
    _eval(run, sibling, "task-1", True)
    _eval(run, child, "task-2", True)
    # The node's failed tasks: hidden source printed by the solution, canaries in the
    # judge's verdicts and output, a key in the agent's tool output.
    output = "\n".join(
        [
            "test_real FAILED",
            f">   {HIDDEN_LINE}",
            f"{CANARIES[0]} PASSED",
            f"{CANARIES[1]} FAILED",
            "E   assert 4 == 3",
            f"env: KEY={KEY}",
        ]
    )
    log1 = _log(
        run,
        "e1",
        _trajectory(
            "ran tests: 1 failed",
            f"cat secrets: {KEY}",
            f"printed: {HIDDEN_LINE}",
            f"saw {CANARIES[0]}",
        ),
        output,
    )
    _eval(run, node, "task-1", False, log1, tests_passed=1, tests_total=2,
          details={"tests": {"test_real": "failed", "test_other": "passed",
                             CANARIES[1]: "failed"}, "canaries": CANARIES})  # fmt: skip
    # A tampered result: its evidence shows up in the judge's output.
    log2 = _log(run, "e2", _trajectory("patched conftest.py"), f"judge: {EVIDENCE}\n")
    _eval(run, node, "python/task-3", True, log2, tampered=True,
          error=f"judge noted {CANARIES[1]}; key {KEY}",
          details={"tamper_evidence": EVIDENCE, "canaries": CANARIES})  # fmt: skip
    # Links an agent left in a log folder: a trajectory file, and a whole log folder.
    secret = tmp_path / "host-secret.txt"
    secret.write_text(json.dumps({"messages": [{}, {"role": "user", "content": HOST_SECRET}]}))
    log3 = run.log_dir("eval", "e3")
    (log3 / "trajectory.json").symlink_to(secret)
    (log3 / "test_output.txt").symlink_to(secret)
    _eval(run, node, "task-4", False, run.relative(log3))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "trajectory.json").write_text(secret.read_text())
    (run.path / "logs" / "eval" / "e4").symlink_to(outside)
    _eval(run, node, "task-5", False, "logs/eval/e4")
    _eval(run, node, "task-2", True)
    # Failed expansions of the node: an empty patch (reason quoting a key), a crash; the
    # expansion now starting is in flight and not one of them.
    for job, ordinal in (("expand-x1", 1), ("expand-x2", 2), ("expand-x3", 3)):
        run.queue_job(job, "expand", {"parent": str(node), "ordinal": ordinal})
        run.start_job(job)
    run.finish_job("expand-x1", {"status": "empty_patch", "reason": f"nothing; {KEY}"})
    run.fail_job("expand-x2", "docker engine went away")
    return run, node


def _write(run: Run, node: int, dest: Path) -> Path:
    return write_history(
        run, node, 3, dest,
        task_statement=lambda t: f"Statement of {t}.",
        hidden_sources=lambda t: [HIDDEN, "\n".join(CANARIES)],
        budget=budget_left(run, elapsed_s=600.0),
    )  # fmt: skip


def test_the_history_holds_the_lineage_results_diffs_and_budget(planted, tmp_path) -> None:
    run, node = planted
    dest = _write(run, node, tmp_path / "expand-log" / "history")
    data = load_history(dest)
    assert data["format"] == FORMAT and data["node"] == node
    assert data["expansion"] == {"ordinal": 3}
    assert [n["id"] for n in data["lineage"]] == [0, node]
    seed, this = data["lineage"]
    assert seed["diff"] is None and seed["score"] == {"resolved": 1, "total": 2}
    assert this["improve_changed"] is True and this["harvested_tools"] == []
    assert this["score"] == {"resolved": 1, "total": 5}
    tampered = [r for r in this["results"] if r["tampered"]]
    assert [(r["task_id"], r["resolved"]) for r in tampered] == [("python/task-3", False)]
    assert "better prompts" in read_part(dest, this["diff"])
    assert [n["id"] for n in data["children"]] == [node + 2]
    assert [(n["id"], n["harvested_tools"]) for n in data["siblings"]] == [
        (node + 1, ["search_files"])
    ]
    assert [(f["ordinal"], f["status"]) for f in data["failed_expansions"]] == [
        (1, "empty_patch"), (2, "crashed")
    ]  # fmt: skip
    assert data["budget"] == {"evals_left": 91, "expansions_left": 7, "dollars_left": 5.0,
                              "seconds_left": 3000}  # fmt: skip
    failed = {t["task_id"]: t for t in data["failed_tasks"]}
    assert set(failed) == {"task-1", "python/task-3", "task-4", "task-5"}
    first = failed["task-1"]
    assert first["statement"] == "Statement of task-1."
    assert "I edited solution.py" in read_part(dest, first["trajectory"])
    shown = read_part(dest, first["test_output"])
    assert "test_real" in shown and "assert 4 == 3" in shown
    assert failed["python/task-3"]["trajectory"].startswith("failed/1/python_task-3/")
    # Rendered for a prompt: the summary, then the evidence and diffs, within the limit.
    text = render_history(dest, limit=6_000)
    assert len(text) <= 6_000
    for expected in ("node 1 (parent 0, depth 1): 1/5 tasks resolved [improve changed]",
                     "[harvested: search_files]", "expansion #2: crashed",
                     "evaluations: 91", "caught tampering", "Statement of task-1.",
                     "+better prompts"):  # fmt: skip
        assert expected in text
    assert len(render_history(dest, limit=1_500)) <= 1_500


def test_no_planted_secret_reaches_the_history_or_the_diagnosis(
    planted, tmp_path, tiny_seed
) -> None:
    run, node = planted
    agent = tiny_seed
    dest = _write(run, node, tmp_path / "expand-log" / "history")
    files = [p for p in dest.rglob("*") if p.is_file()]
    assert len(files) >= 8  # history.json, 3 diffs, the failed tasks' files
    for path in files:
        text = path.read_text()
        for secret in FORBIDDEN:
            assert secret not in text, f"{secret!r} in {path.relative_to(dest)}"
    assert not any(p.is_symlink() for p in dest.rglob("*"))
    # The built-in diagnosis sees the history too, and nothing secret with it.
    evaluations = run.evaluations(node)
    target = next(
        t for seed in range(50)
        if (t := choose_target(evaluations, run.path, random.Random(seed),
                               hidden_sources=lambda t: [HIDDEN])).kind == "task"
    )  # fmt: skip
    settings = ExpandSettings(run="t")
    job = ExpandJob("expand-1-a", node, str(agent), target, str(tmp_path), settings,
                    history_dir=str(dest))  # fmt: skip
    request = job_diagnosis_request(job)
    prompt = json.dumps(request)
    assert "History of node 1" in prompt and "expansion #1: empty_patch" in prompt
    for secret in FORBIDDEN:
        assert secret not in prompt


def test_the_history_is_rewritten_and_checked_on_load(planted, tmp_path) -> None:
    run, node = planted
    dest = tmp_path / "history"
    (dest / "failed" / "9").mkdir(parents=True)
    (dest / "stale.txt").write_text("left by a crashed attempt")
    _write(run, 0, dest)
    assert not (dest / "stale.txt").exists() and not (dest / "failed" / "9").exists()
    assert load_history(dest)["lineage"][0]["id"] == 0
    assert load_history(dest)["siblings"] == []
    (dest / "history.json").write_text(json.dumps({"format": "other/9"}))
    with pytest.raises(HistoryError, match="not a dgm-history/1"):
        load_history(dest)
    (dest / "history.json").unlink()
    (dest / "history.json").symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(HistoryError, match="no readable"):
        render_history(dest)


def test_unlimited_budget_is_null(make_run) -> None:
    run = make_run()
    run.queue_job("expand-a", "expand", {"parent": "0", "ordinal": 0})
    assert budget_left(run) == {"evals_left": None, "expansions_left": None,
                                "dollars_left": None, "seconds_left": None}  # fmt: skip


def test_the_loop_writes_each_parents_history_before_its_expansion(make_run) -> None:
    run = make_run(**{"limits.max_evals": 24, "workers": 1})
    jobs = FakeJobs(run)
    MetaLoop(run, jobs=jobs).run()
    assert jobs.histories and all(h is not None for h in jobs.histories)
    expansions = [j for j in run.jobs() if j.kind == "expand"]
    assert len(expansions) == len(jobs.histories)
    for job, history in zip(expansions, jobs.histories, strict=True):
        assert history == run.path / "logs" / "expand" / job.id / "history"
        data = load_history(history)
        assert data["node"] == int(job.inputs["parent"])
        assert data["expansion"]["ordinal"] == job.inputs["ordinal"]
        assert data["budget"]["evals_left"] is not None
    last = load_history(jobs.histories[-1])
    assert sum(n["score"]["total"] for n in last["lineage"]) > 0  # results seen so far


def test_an_expansion_goes_on_without_a_history_it_could_not_write(
    make_run, monkeypatch, caplog
) -> None:
    def broken(*args, **kwargs):
        raise OSError("No space left on device")

    monkeypatch.setattr("dgm.loop.job_making.from_actions.write_history", broken)
    run = make_run(**{"limits.max_evals": 10, "workers": 1})
    jobs = FakeJobs(run)
    MetaLoop(run, jobs=jobs).run()
    assert jobs.histories and set(jobs.histories) == {None}
    assert len(run.nodes()) > 1  # the expansions still made children
    assert "no history written: OSError: No space left on device" in caplog.text
