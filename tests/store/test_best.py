"""The one best-node rule (dgm/store/best.py): confirmed node, else best lower credible
bound among nodes with enough evaluations; every caller (loop, status, report) agrees."""

from __future__ import annotations

import json

from dgm.report import lineage
from dgm.store import Evaluation, Run, best_node
from dgm.store.best import BestRule, Candidate, pick_best
from dgm.store.selection import CONFIRMATION_KEY
from tests.store.conftest import value_diff


def _evals(run: Run, node: int, passed: int, total: int) -> None:
    for i in range(total):
        run.record_evaluation(
            Evaluation(node_id=node, task_id=f"t{i:02d}", benchmark="b", resolved=i < passed)
        )


def test_lower_bound_prefers_the_well_measured_node() -> None:
    # 2/5 has the higher posterior mean (0.43 vs 0.40); 20/50 the higher 0.1 quantile.
    lucky, measured = Candidate(1, "active", 2, 5), Candidate(2, "active", 20, 50)
    assert pick_best([lucky, measured], BestRule(0.1, min_evals=1)) == 2
    # min_evals is capped at the most any node has: 3 nodes with 4 evaluations still rank.
    few = [Candidate(n, "active", n, 4) for n in (1, 2, 3)]
    assert pick_best(few, BestRule(0.1, min_evals=10)) == 3
    # ties: more evaluations, then the older node
    assert pick_best([Candidate(5, "active", 2, 4), Candidate(3, "active", 2, 4)]) == 3


def test_rejected_and_unevaluated_nodes_are_never_best() -> None:
    rejected = Candidate(1, "rejected", 50, 50)
    assert pick_best([rejected, Candidate(2, "active", 1, 50)]) == 2
    assert pick_best([Candidate(3, "active", 0, 0)]) is None
    # a confirmed node that is not eligible does not ship; the bound rule decides
    rule = BestRule(confirmed=1)
    assert pick_best([rejected, Candidate(2, "active", 1, 50)], rule) == 2


def test_confirmed_node_is_best_in_the_store_and_the_report(run: Run) -> None:
    a = run.add_node(0, diff=value_diff(1, 2), origin="a").id
    b = run.add_node(0, diff=value_diff(1, 3), origin="b").id
    _evals(run, 0, 2, 12)
    _evals(run, a, 9, 12)
    _evals(run, b, 7, 12)
    assert best_node(run) == a == lineage.best_node(lineage.build_lineage(run))
    run.db.set_meta(CONFIRMATION_KEY, json.dumps({"node": b}))
    assert best_node(run) == b == lineage.best_node(lineage.build_lineage(run))
