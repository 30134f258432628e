"""Money is not wasted twice: an expansion whose diff was taken before an outage cut it
short keeps the diff; its re-run (same job, same log folder) makes no LLM call and no
agent run, only the child's smoke test (off here: no sandbox needed)."""

from __future__ import annotations

import json
from pathlib import Path

from dgm.jobs.diagnose import ImprovementTarget
from dgm.jobs.expand import ExpandJob, ExpandSettings, run_expand
from dgm.jobs.expand.child import KEPT

PATCH = (
    "diff --git a/notes.txt b/notes.txt\nnew file mode 100644\n--- /dev/null\n"
    "+++ b/notes.txt\n@@ -0,0 +1 @@\n+kept\n"
)


def test_a_rerun_after_an_outage_starts_from_the_kept_diff(tmp_path: Path) -> None:
    parent = tmp_path / "parent"
    parent.mkdir()
    (parent / "agent.toml").write_text('[agent]\nname = "p"\n[commands]\nsolve = "false"\n')
    log_dir = tmp_path / "log"
    log_dir.mkdir()
    (log_dir / KEPT).write_text(json.dumps({"patch": PATCH, "statement": "add notes",
                                            "diagnosis": None, "procedure": "dgm",
                                            "improve_changed": False}))  # fmt: skip
    settings = ExpandSettings(run="r", smoke_test=False, backend="local")
    target = ImprovementTarget("task", "t1", "s")
    job = ExpandJob("expand-0-abc", 0, str(parent), target, str(log_dir), settings)
    # No endpoint at all: a diagnosis or agent run would fail; the kept child needs neither.
    result = run_expand(job)
    assert result.status == "ok", result.reason
    assert result.diff == PATCH and result.problem_statement == "add notes"
    assert json.loads((log_dir / "result.json").read_text())["status"] == "ok"
