"""Hyperagent mode end to end, for real: `dgm run --dry-run --self-improve agent` in real
Docker on real Polyglot tasks judged by their hidden tests, with the scripted world
`hyperagent` (dgm/scripted/hyperagent.py).

Every child is made by its parent's own `improve` command (seed_agent/coder/improve.py).
Shown one failed task, the seed's procedure either improves itself (to show every failed
task) or makes a cosmetic change; only a procedure that shows several failed tasks
finds their common cause, the missing `search_files` tool. So the best node must descend
from a child whose improvement procedure changed, and that child's children must beat
those of its unchanged sibling. Sequential (one worker) and `best` parent selection with
three children a generation, so the seed's three children (one per expansion ordinal:
procedure changed, cosmetic, procedure changed) are nodes 1-3 and nodes 1 and 2 are
expanded next to the seed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dgm.scripted.dry_run import DRY_RUN_SUBSET
from dgm.store import Run
from tests.loop.test_e2e_docker import dgm
from tests.needs import image_or_missing

pytestmark = [pytest.mark.docker, pytest.mark.slow]
CONFIG = """\
workers = 1
[strategy]
name = "dgm"
[strategy.dgm]
children_per_generation = 3
parent_selection = "best"
"""


@pytest.fixture(scope="module")
def images() -> None:
    for name in ("runtime", "polyglot"):
        image_or_missing(name)


def test_a_better_improve_procedure_makes_better_grandchildren(
    tmp_path: Path, images: None
) -> None:
    (tmp_path / "run.toml").write_text(CONFIG)
    run_dir = tmp_path / "hyper"
    result = dgm("run", str(run_dir), "--dry-run", "--self-improve", "agent",
                 "--config", str(tmp_path / "run.toml"), "--subset", DRY_RUN_SUBSET,
                 "--max-evals", "28", timeout=1500)  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    with Run.open(run_dir) as run:
        assert run.config.self_improve.mode == "agent"
        assert run.config.llm.model == "scripted/hyperagent"
        assert (run.score(0).passed, run.score(0).total) == (2, 4)
        made = {n.id: n for n in run.nodes() if n.parent_id is not None}
        assert all(n.meta["procedure"] == "agent" for n in made.values())
        assert all("own choice" in n.meta["target"] for n in made.values())
        first = [made[i] for i in (1, 2, 3)]
        assert [n.parent_id for n in first] == [0, 0, 0]
        assert [n.meta["improve_changed"] for n in first] == [True, False, True]
        changed, unchanged = first[0], first[1]
        assert "coder/improve.py" in run.diff(changed.id)
        assert "coder/improve.py" not in run.diff(unchanged.id)

        def scores_of_children(parent: int) -> list[tuple[int, int]]:
            return [(s.passed, s.total) for c in run.children(parent)
                    if (s := run.score(c.id)).total]  # fmt: skip

        # Judged by the hidden tests: the changed procedure's children grew the tool and
        # solve everything; the unchanged sibling's stay where the seed was.
        assert scores_of_children(changed.id) == [(4, 4)]
        assert scores_of_children(unchanged.id) == [(2, 4)]
        [grandchild] = run.children(changed.id)
        assert "coder/tools/search_files.py" in run.archive.files(grandchild.commit)
        assert "search_files" in grandchild.origin  # the diagnosis saw the common cause
        best = re.search(r"^best:\s+node (\d+): 4/4", result.stdout, re.M)
        assert best and int(best.group(1)) == grandchild.id, result.stdout
    tree = dgm("tree", str(run_dir)).stdout
    assert re.search(rf"\b{changed.id}  2/4 .*\[improve changed\]", tree), tree
    assert not re.search(rf"\b{unchanged.id}  2/4 .*improve changed", tree), tree
    shown = dgm("show", str(run_dir), str(changed.id), "--no-diff").stdout
    assert re.search(r"^procedure\s+agent$", shown, re.M), shown
    assert re.search(r"^improve_changed\s+True$", shown, re.M), shown
