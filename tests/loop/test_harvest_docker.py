"""The harvest expansion, end to end for real: real Docker, real Polyglot tasks and hidden
tests, the `toolmaker` scripted world (`dgm run --dry-run --dry-run-world toolmaker`).

The seed writes a `search_files` runtime tool with `make_tool` on every task; it solves
the two easy tasks, but on the hard ones the tool comes too late (it had to be offered in
the first request). A harvest keeps the tool from the solved tasks in the child's
`tools/` with no LLM call, and the child then solves all four.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dgm.store import Run
from tests.loop.test_e2e_docker import dgm

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_a_harvested_child_beats_its_parent_with_no_llm_call(tmp_path: Path) -> None:
    run_dir = tmp_path / "harvest-run"
    result = dgm("run", str(run_dir), "--dry-run", "--dry-run-world", "toolmaker",
                 "--strategy", "dgm", "--workers", "1", "--max-evals", "8")  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    with Run.open(run_dir) as run:
        harvested = [n for n in run.nodes() if n.meta.get("harvested_tools")]
        assert len(harvested) == 1, [n.meta for n in run.nodes()]
        child = harvested[0]
        assert child.meta["harvested_tools"] == ["search_files"]
        assert child.parent_id == 0 and child.meta["target"] == "harvest"
        seed, score = run.score(0), run.score(child.id)
        assert (seed.passed, seed.total) == (2, 4)
        assert (score.passed, score.total) == (4, 4), score  # the real hidden tests
        files = run.archive.files(child.commit)
        assert {"tools/search_files/tool.json", "tools/search_files/tool.py"} <= set(files)
        # The expansion made no LLM call: no endpoint, no exchange log, no usage row.
        log_dir = run.path / child.meta["log_dir"]
        assert not list(log_dir.glob("llm*.jsonl"))
        assert child.job_id not in run.usage_by("job_id")
        assert json.loads((log_dir / "tool_smoke.json").read_text())[0]["passed"] is True
        # It won for the reason given: the tool is offered from the first step, kept.
        for evaluation in run.evaluations(child.id):
            trajectory = json.loads((run.path / evaluation.log_dir / "trajectory.json").read_text())
            assert trajectory["runtime_tools"] == {"kept": ["search_files"], "made": []}
        # ... while the seed made it at run time, too late on the hard tasks.
        seed_runs = {e.task_id: e for e in run.evaluations(0)}
        wordy = run.path / seed_runs["python__wordy"].log_dir
        assert not seed_runs["python__wordy"].resolved
        assert (wordy / "out" / "tools" / "search_files" / "tool.py").is_file()
        from dgm.report.data import report_data

        nodes = {n["id"]: n for n in report_data(run, tmp_path / "report")["nodes"]}
        assert nodes[child.id]["marks"] == ["harvested: search_files"] and not nodes[0]["marks"]
    best = re.search(r"^best:\s+node (\d+): 4/4", result.stdout, re.M)
    assert best and int(best.group(1)) == child.id, result.stdout
    tree = dgm("tree", str(run_dir)).stdout
    assert re.search(rf"\b{child.id}  4/4.*\[harvested: search_files, ★ best\]", tree), tree
    show = dgm("show", str(run_dir), str(child.id)).stdout
    assert "harvested search_files" in show and "expansion $0.0000, 0 calls" in show, show
