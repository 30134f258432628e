"""Tree layout for the lineage drawing, computed once in Python for the HTML and the plots.

Layered by depth: y is the depth; leaves take consecutive x slots in depth-first order
(children by id) and a parent sits midway between its first and last child. That never
overlaps, costs O(n), and keeps a clade together, which is what a reader scans for.
"""

from __future__ import annotations

import networkx as nx

from dgm.report.lineage import root


def tidy_layout(graph: nx.DiGraph) -> dict[int, tuple[float, int]]:
    """{node: (x, depth)} with x in leaf slots (0, 1, 2, ...)."""
    if graph.number_of_nodes() == 0:
        return {}
    start = root(graph)
    pos: dict[int, tuple[float, int]] = {}
    next_slot = 0
    # Iterative post-order: a node is placed after all of its children.
    stack: list[tuple[int, int, bool]] = [(start, 0, False)]
    while stack:
        node, depth, expanded = stack.pop()
        kids = sorted(graph.successors(node))
        if not kids:
            pos[node] = (float(next_slot), depth)
            next_slot += 1
        elif expanded:
            pos[node] = ((pos[kids[0]][0] + pos[kids[-1]][0]) / 2, depth)
        else:
            stack.append((node, depth, True))
            stack.extend((kid, depth + 1, False) for kid in reversed(kids))
    return pos
