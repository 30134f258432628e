"""The `improve` contract in real Docker, without an LLM: the parent's own `improve`
command gets its source as a writable git copy at /work, the history read-only at
{history_dir}, and its diff becomes the child (smoke-tested like any child); a
third-party agent without `improve` makes children in both modes, the built-in procedure
standing in for it in agent mode and saying so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dgm.jobs.diagnose import ImprovementTarget
from dgm.jobs.expand import ExpandJob, ExpandSettings, run_expand
from dgm.jobs.expand.improve import FALLBACK
from tests.needs import image_or_missing

pytestmark = pytest.mark.docker

IMPROVE_SH = """set -u
cat "$1/history.json" > /out/seen.json
if echo x > "$1/written" 2>/dev/null; then echo "history is writable"; exit 3; fi
echo "SHOWN=all" > procedure.sh
echo "Show the diagnosis every failed task." > /out/problem_statement.md
"""


@pytest.fixture(scope="module")
def image() -> str:
    return image_or_missing("runtime")


def third_party(root: Path, improve: bool) -> Path:
    """A shell agent: `solve` appends to NOTES; `improve` (if any) edits procedure.sh."""
    root.mkdir()
    toml = '[agent]\nname = "shell"\n[commands]\nsolve = "sh -c \'echo solved >> NOTES\'"\n'
    toml += 'smoke = "test -f {agent_dir}/procedure.sh"\n'
    if improve:
        toml += 'improve = "sh {agent_dir}/improve.sh {history_dir}"\n'
        toml += '[improve]\npaths = ["procedure.sh"]\n'
        (root / "improve.sh").write_text(IMPROVE_SH)
    (root / "agent.toml").write_text(toml)
    (root / "procedure.sh").write_text("SHOWN=1\n")
    return root


def expand(tmp: Path, parent: Path, mode: str, image: str, history: Path | None = None):
    settings = ExpandSettings(run="improve-docker", image=image, timeout_s=120, mode=mode)
    target = ImprovementTarget("stochasticity")  # a special target: no diagnosis call
    log_dir = tmp / f"log-{mode}"
    job = ExpandJob(f"expand-0-{mode}", 0, str(parent), target, str(log_dir), settings,
                    history_dir=str(history) if history else None)  # fmt: skip
    return run_expand(job), log_dir


def test_the_parents_improve_command_makes_the_child(tmp_path: Path, image: str) -> None:
    parent = third_party(tmp_path / "agent", improve=True)
    history = tmp_path / "history"
    history.mkdir()
    (history / "history.json").write_text(json.dumps({"format": "dgm-history/1", "node": 0}))
    result, log_dir = expand(tmp_path, parent, "agent", image, history)
    assert result.status == "ok", result.reason + (log_dir / "agent_output.txt").read_text()
    assert result.procedure == "agent" and result.improve_changed
    assert "+SHOWN=all" in result.diff and "history.json" not in result.diff
    assert result.problem_statement == "Show the diagnosis every failed task."
    assert json.loads((log_dir / "out" / "seen.json").read_text())["node"] == 0
    assert (parent / "procedure.sh").read_text() == "SHOWN=1\n"  # the parent is untouched


def test_a_third_party_agent_without_improve_works_in_both_modes(
    tmp_path: Path, image: str
) -> None:
    parent = third_party(tmp_path / "agent", improve=False)
    made = {mode: expand(tmp_path, parent, mode, image) for mode in ("dgm", "agent")}
    for mode, (result, _) in made.items():
        assert result.status == "ok", (mode, result.reason)
        assert "+solved" in result.diff and not result.improve_changed
    assert made["dgm"][0].procedure == "dgm"
    result, log_dir = made["agent"]
    assert result.procedure == FALLBACK  # said in the result (dgm show) ...
    assert (log_dir / "procedure.txt").read_text().strip() == FALLBACK  # ... and the log
