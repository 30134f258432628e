"""The lineage graph and its clade queries."""

from __future__ import annotations

from dgm.loop.resume import rebuild_state
from dgm.report import lineage
from dgm.store import Evaluation, Run
from dgm.strategies import TaskPlan
from tests.store.conftest import value_diff


def _eval(run: Run, node: int, task: str, ok: bool) -> None:
    run.record_evaluation(Evaluation(node_id=node, task_id=task, benchmark="b", resolved=ok))


def test_lineage_attributes_and_clades(run: Run) -> None:
    a = run.add_node(0, diff=value_diff(1, 2), origin="a").id
    b = run.add_node(a, diff=value_diff(2, 3), origin="b").id
    c = run.add_node(0, diff=value_diff(1, 4), origin="c", status="rejected").id
    _eval(run, 0, "t1", False)
    _eval(run, 0, "t2", True)
    _eval(run, a, "t1", True)
    _eval(run, b, "t1", True)
    _eval(run, b, "t2", True)
    run.record_usage({"node_id": a, "cost_usd": 1.5})
    g = lineage.build_lineage(run)
    assert set(g.successors(0)) == {a, c}
    assert g.nodes[b]["depth"] == 2 and g.nodes[a]["cost_usd"] == 1.5
    # own counts are the node's alone; the clade pools descendants
    assert (g.nodes[a]["passed"], g.nodes[a]["total"]) == (1, 1)
    # one clade count: the search state's, rebuilt from the store as the loop does
    state = rebuild_state(run, TaskPlan(("t1", "t2")))
    assert state.clade_counts(a) == (3, 0)
    assert state.clade_counts(0) == (4, 1)
    assert lineage.clade(g, a) == {a, b}
    assert lineage.ancestry(g, b) == [0, a, b]
    # b: Beta(3,1) mean 0.75 beats a: Beta(2,1) 0.67; rejected c never best
    assert lineage.best_node(g) == b
    assert [n for n, _, _ in lineage.walk(g)] == [0, a, b, c]
