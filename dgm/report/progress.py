"""Progress of a run over time: best score so far and archive mean, per evaluation.

One point per recorded evaluation, in the order they were recorded, with three x axes a
reader may want: evaluations so far, dollars spent so far, and wall-clock seconds since
the run started. "Best" is a progress line, not the shipping rule: the node with the best
flat lower credible bound (Beta(1 + passed, 1 + failed), eligible) at that moment among
nodes that have finished their first stage (as many evaluations as most nodes get),
shown as its plain pass rate: a node with 1 of 1 solved does not count as 100% until it
has been evaluated as fully as the others. What ships (dgm/store/best.py) adds the
parent prior and needs fewer results; recomputing that at every point would cost
O(evaluations x nodes), so the chart keeps this incremental O(E log N) line.
"""

from __future__ import annotations

import bisect
import heapq
from dataclasses import dataclass, field

from dgm.scoring import lower_bound
from dgm.store import Run
from dgm.store.best import Candidate, eligible


@dataclass
class Progress:
    evals: list[int] = field(default_factory=list)
    dollars: list[float] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    best: list[float] = field(default_factory=list)
    """Pass rate (0..1) of the best node so far."""
    best_node: list[int] = field(default_factory=list)
    mean: list[float] = field(default_factory=list)
    """Mean pass rate over the evaluated archive nodes so far."""

    def as_dict(self) -> dict[str, list]:
        return {k: list(v) for k, v in self.__dict__.items()}


def run_progress(run: Run) -> Progress:
    """O(E log N) over E evaluations: fine for 1,000-node runs with tens of thousands."""
    nodes = run.nodes()
    rejected = {n.id for n in nodes if n.status == "rejected"}
    started = min((n.created_at for n in nodes), default=0.0)
    spend = run.aggregates.spend_series()
    spend_ts = [ts for ts, _ in spend]
    spend_cum: list[float] = []
    total = 0.0
    for _, cost in spend:
        total += cost
        spend_cum.append(total)
    rows = run.aggregates.evaluation_series()
    min_evals = run.aggregates.usual_eval_count()
    quantile = run.config.strategy.final.quantile  # ranked like the final choice
    status = {n.id: n.status for n in nodes}

    counts: dict[int, tuple[int, int]] = {}
    tampered: set[int] = set()  # from its first tampered evaluation on, never best
    rate_sum, archived = 0.0, 0
    heap: list[tuple[float, int, int, int]] = []  # (-bound, -total, node, total): lazy
    out = Progress()
    for i, (node, resolved, created_at, forged) in enumerate(rows, start=1):
        if forged:
            tampered.add(node)
        passed, seen = counts.get(node, (0, 0))
        in_archive = node not in rejected
        if seen and in_archive:
            rate_sum -= passed / seen
        passed, seen = passed + int(resolved), seen + 1
        counts[node] = (passed, seen)
        if in_archive:
            rate_sum += passed / seen
            archived += seen == 1
            candidate = Candidate(node, status[node], passed, seen, int(node in tampered))
            if seen >= min_evals and eligible(candidate):
                bound = lower_bound(passed, seen - passed, quantile)
                heapq.heappush(heap, (-bound, -seen, node, seen))
        while heap and (counts[heap[0][2]][1] != heap[0][3] or heap[0][2] in tampered):
            heapq.heappop(heap)  # outdated (evaluated since) or caught tampering
        k = bisect.bisect_right(spend_ts, created_at)
        out.evals.append(i)
        out.dollars.append(round(spend_cum[k - 1], 6) if k else 0.0)
        out.seconds.append(round(created_at - started, 3))
        if heap:
            best = heap[0][2]
            b_passed, b_seen = counts[best]
            out.best.append(round(b_passed / b_seen, 4))
            out.best_node.append(best)
        else:
            out.best.append(0.0)
            out.best_node.append(-1)
        out.mean.append(round(rate_sum / archived, 4) if archived else 0.0)
    return out
