"""What the HTML report knows about a run, checked without a browser."""

from __future__ import annotations

import json
import re
from pathlib import Path

from runs import BEST_NODE, PLAN

from dgm.report.data import report_data
from dgm.report.html import render_html, write_report
from dgm.report.layout import tidy_layout
from dgm.report.lineage import build_lineage
from dgm.report.progress import run_progress
from dgm.store import Evaluation, Run


def _embedded(page: str) -> dict:
    blob = re.search(r'<script type="application/json" id="dgm-data">(.*?)</script>', page, re.S)
    return json.loads(blob.group(1))


def test_small_run_data_matches_the_run(small_run_dir: Path, tmp_path: Path) -> None:
    with Run.open(small_run_dir) as run:
        data = report_data(run, tmp_path)
    nodes = {n["id"]: n for n in data["nodes"]}
    assert data["run"]["best"] == BEST_NODE
    assert {i for i, n in nodes.items() if n["onPath"]} == {0, 1, 3}
    assert nodes[2]["status"] == "rejected"
    assert "+Before you call finish, run the tests" in nodes[1]["diff"]
    assert nodes[0]["diff"] == ""  # the seed shows no diff against nothing
    for node_id, (_, origin, _, _, behaviour) in enumerate(PLAN):
        assert nodes[node_id]["origin"] == origin
        heat = dict(zip(data["tasks"], nodes[node_id]["heat"], strict=True))
        expect = {"solve": "P", "wrong": "F", "empty": "E"}
        for task, how in behaviour.items():
            assert heat[task] == expect[how], (node_id, task)
    # Every evaluation of the small run logged all four files; links are relative to
    # where the page is written.
    assert all(e[7] == 0b1111 for n in data["nodes"] for e in n["evals"])
    assert data["runHref"].endswith("small/")
    assert set(nodes[1]["usage"]) == {"diagnose", "self_improve", "solve"}
    assert set(data["spendByRole"]) == {"diagnose", "self_improve", "solve"}


def test_page_is_self_contained_and_survives_hostile_text(run_factory) -> None:
    run = run_factory(origin="</script><script>alert(1)</script> & <b>bold</b>")
    page = render_html(report_data(run, run.path))
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "<link" not in page and "<script src" not in page
    data = _embedded(page)  # the JSON blob is still whole and parses
    assert data["nodes"][1]["origin"].startswith("</script><script>alert(1)")


def test_report_default_path_and_bad_output(small_run_dir: Path, tmp_path: Path) -> None:
    out = write_report(small_run_dir, tmp_path / "r.html")
    assert out.stat().st_size > 10_000
    import pytest

    from dgm.errors import DgmError

    with pytest.raises(DgmError, match="does not exist"):
        write_report(small_run_dir, tmp_path / "missing" / "r.html")
    with pytest.raises(DgmError, match="is a directory"):
        write_report(small_run_dir, tmp_path)


def test_progress_best_and_mean(run_factory) -> None:
    run = run_factory()  # nodes 0 (seed) and 1
    for node, resolved in [(0, 0), (0, 1), (1, 1), (1, 1)]:
        run.record_evaluation(
            Evaluation(node, f"t{len(run.evaluations(node))}", "p", bool(resolved))
        )
    p = run_progress(run)
    assert p.evals == [1, 2, 3, 4]
    # Each node gets 2 evaluations: a node counts as best once it has had both.
    assert p.best == [0.0, 0.5, 0.5, 1.0]
    assert p.best_node == [-1, 0, 0, 1]
    assert p.mean == [0.0, 0.5, 0.75, 0.75]


def test_layout_never_overlaps_and_centres_parents(big_run_dir: Path) -> None:
    with Run.open(big_run_dir) as run:
        graph = build_lineage(run)
    pos = tidy_layout(graph)
    assert len(set(pos.values())) == graph.number_of_nodes() == 1000
    for node in graph:
        kids = sorted(graph.successors(node))
        if kids:
            assert pos[node][0] == (pos[kids[0]][0] + pos[kids[-1]][0]) / 2
            assert all(pos[k][1] == pos[node][1] + 1 for k in kids)


def test_a_child_that_changed_its_improve_procedure_is_marked(run_factory) -> None:
    from dgm.report import lineage
    from dgm.report.tree_text import tree_lines

    run = run_factory()  # nodes 0 (seed) and 1, made by the built-in procedure
    diff = "--- a/agent.py\n+++ b/agent.py\n@@ -1 +1 @@\n-VALUE = 1\n+VALUE = 3\n"
    meta = {"procedure": "agent", "improve_changed": True}
    run.add_node(0, diff=diff, origin="show every failed task", meta=meta)
    lines = tree_lines(lineage.build_lineage(run))
    assert [("[improve changed]" in line) for line in lines] == [False, False, True]
    nodes = {n["id"]: n for n in report_data(run, run.path)["nodes"]}
    assert (nodes[1]["marks"], nodes[2]["marks"]) == ([], ["improve changed"])
    assert nodes[2]["meta"]["procedure"] == "agent"
