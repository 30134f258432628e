"""The lineage as text: one line per node with its score, children and cost, drawn with
box characters; the best node (the store's one rule) is starred, and a node the judge
caught tampering with the test run is marked TAMPERED (never best)."""

from __future__ import annotations

import networkx as nx

from dgm.report import lineage
from dgm.store.records import Score


def tree_lines(graph: nx.DiGraph) -> list[str]:
    best = lineage.best_node(graph)
    lines: list[str] = []
    open_levels: list[bool] = []  # per depth: does the branch above continue?
    for node, depth, last in lineage.walk(graph):
        del open_levels[depth:]
        prefix = "".join("│  " if cont else "   " for cont in open_levels[1:])
        if depth:
            prefix += "└─ " if last else "├─ "
        open_levels.append(not last)
        a = graph.nodes[node]
        tags = []
        if a["status"] != "active":
            tags.append(a["status"])
        if a.get("tampered"):
            tags.append(f"TAMPERED {a['tampered']}x")
        tags += a.get("marks", [])
        if node == best:
            tags.append("★ best")
        line = (
            f"{prefix}{node}  {Score(a['passed'], a['total'])}  "
            f"children {graph.out_degree(node)}  ${a['cost_usd']:.2f}"
        )
        lines.append(line + (f"  [{', '.join(tags)}]" if tags else ""))
    return lines
