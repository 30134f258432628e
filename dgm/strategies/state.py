"""The search state every strategy reads: the tree, its results, and what is in flight.

Updated one event at a time so choosing an action stays cheap: per-node counts in numpy
arrays by insertion order; a result adds to the node's own counts and to the clade counts
of its whole lineage at once. Resume rebuilds it by replay (`SearchState.replay`). Every
node starts with the stage-1 tasks open; once all are recorded and at least
`stage2_threshold` of them solved, stage 2 opens. Who may be a parent: barren.py.
Strategies read the state only through the queries below (read-only views).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from dgm.config import StrategyConfig
from dgm.strategies.barren import BarrenTracker
from dgm.strategies.task_plan import TaskPlan

NodeId = int
"""A node's id: the store's row id (the seed is 0), the same type everywhere."""

ROOT: NodeId = 0
"""Id of the seed agent, as the store names it."""

DEFAULT_BARREN_AFTER: int = StrategyConfig.model_fields["barren_after"].default
"""`[strategy] barren_after`'s default; a run passes its own setting."""


@dataclass
class _Node:
    """The per-node facts that do not fit a numeric array."""

    id: NodeId
    parent: int  # index of the parent, -1 for the root
    lineage: np.ndarray  # indices of the node and all its ancestors, up to the root
    children: list[int] = field(default_factory=list)
    results: dict[str, bool] = field(default_factory=dict)  # own results only
    pending_tasks: set[str] = field(default_factory=set)
    stage: int = 1


class SearchState:
    """Read by strategies through the queries, written only by the scheduler's events."""

    def __init__(
        self,
        plan: TaskPlan,
        root: NodeId = ROOT,
        capacity: int = 256,
        root_code: str | None = None,
        barren_after: int = DEFAULT_BARREN_AFTER,
    ) -> None:
        self.plan = plan
        self._nodes: list[_Node] = []
        self._index: dict[NodeId, int] = {}
        # Numeric per-node columns (_COLUMNS), grown by doubling. Index = insertion order.
        for name in _COLUMNS:
            setattr(self, name, np.zeros(capacity, dtype=np.int64))
        self._barren = BarrenTracker(barren_after)
        self._total_evals = 0
        # Pooled over every node: (solved, failed) per task, for task-choice rules.
        self._task_results: dict[str, list[int]] = {t: [0, 0] for t in plan.stage1 + plan.stage2}
        self._total_failed_expansions = 0
        self._total_pending_evals = 0
        self._total_pending_expansions = 0
        self.add_node(root, None, root_code)

    # -- construction by replay ---------------------------------------------------------
    @classmethod
    def replay(
        cls,
        plan: TaskPlan,
        nodes: Iterable[tuple[NodeId, NodeId | None]],
        evaluations: Iterable[tuple[NodeId, str, bool]] = (),
        failed_expansions: Iterable[NodeId] = (),
        codes: Mapping[NodeId, str] | None = None,
        barren_after: int = DEFAULT_BARREN_AFTER,
    ) -> SearchState:
        """Rebuild from history: nodes as (id, parent) in creation order, root first; results
        as (node, task, solved); failed expansions by parent; `codes`: each node's code."""
        node_list = list(nodes)
        if not node_list or node_list[0][1] is not None:
            raise ValueError("replay needs the root node first, with parent None")
        codes = codes or {}
        root = node_list[0][0]
        capacity = max(256, 2 * len(node_list))
        state = cls(plan, root, capacity, codes.get(root), barren_after)
        for node_id, parent in node_list[1:]:
            if parent is None:
                raise ValueError(f"node {node_id} has no parent; only the root may")
            state.add_node(node_id, parent, codes.get(node_id))
        for parent in failed_expansions:
            state.record_failed_expansion(parent)
        for node_id, task, solved in evaluations:
            state._record(node_id, task, solved, update_clades=False)
        state._rebuild_clades()  # one pass instead of a lineage walk per result
        return state

    # -- events -------------------------------------------------------------------------
    def add_node(self, node_id: NodeId, parent: NodeId | None, code: str | None = None) -> bool:
        """Add a node; `code` identifies its codebase (a git tree), None: unlike any other.
        Returns whether the code is new to the tree."""
        if node_id in self._index:
            raise ValueError(f"node {node_id} already exists")
        parent_index = -1 if parent is None else self.index(parent)
        if parent is None and self._nodes:
            raise ValueError("only the first node may be the root")
        i = len(self._nodes)
        if i == len(self._own_successes):
            self._grow()
        # A result updates the clade counts of the whole lineage in one vectorised add; the
        # lineage is kept per node (memory: the sum of depths, 4 bytes each).
        above = self._nodes[parent_index].lineage if parent_index >= 0 else np.empty(0, np.int32)
        lineage = np.concatenate((np.array([i], dtype=np.int32), above))
        self._nodes.append(_Node(node_id, parent_index, lineage))
        self._index[node_id] = i
        self._todo_count[i], self._parent_index[i] = len(self.plan.stage1), parent_index
        if parent_index >= 0:
            self._nodes[parent_index].children.append(i)
            self._child_count[parent_index] += 1
        group, novel = self._barren.group_of(code)
        self._code_group[i] = group
        return novel

    def record_failed_expansion(self, parent: NodeId) -> None:
        i = self.index(parent)
        self._failed_expansions_of[i] += 1
        self._total_failed_expansions += 1
        self._barren.expansion_made(self._code_group[i], news=False)

    def set_barren_streak(self, node_id: NodeId, count: int) -> None:
        """Restore a count from recorded history (resume: replay does not keep the order of
        expansions and evaluations, which the count depends on)."""
        self._barren.set_streak(self._code_group[self.index(node_id)], count)

    def record_evaluation(self, node_id: NodeId, task: str, solved: bool) -> None:
        self._record(node_id, task, solved, update_clades=True)

    def _record(self, node_id: NodeId, task: str, solved: bool, update_clades: bool) -> None:
        i = self.index(node_id)
        node = self._nodes[i]
        if task in node.results:
            raise ValueError(f"node {node_id} already has a result on task {task}")
        if task not in self.open_tasks(node_id):
            raise ValueError(f"task {task} is not open for node {node_id} (stage {node.stage})")
        node.results[task] = bool(solved)
        if not solved:
            self._barren.task_failed(self._code_group[i], task)
        self._task_results[task][0 if solved else 1] += 1
        if task not in node.pending_tasks:
            self._todo_count[i] -= 1
        if solved:
            self._own_successes[i] += 1
            if update_clades:
                self._clade_successes[node.lineage] += 1
        else:
            self._own_failures[i] += 1
            if update_clades:
                self._clade_failures[node.lineage] += 1
        self._total_evals += 1
        self._maybe_open_stage2(i)

    def expansion_started(self, parent: NodeId) -> None:
        self._pending_expansions[self.index(parent)] += 1
        self._total_pending_expansions += 1

    def expansion_finished(
        self, parent: NodeId, child: NodeId | None, code: str | None = None
    ) -> None:
        """`child` None: the expansion produced no valid child (recorded as a failure).
        `code` identifies the child's codebase; a child with code the tree already has is
        valid but new to nobody, so it counts towards the parent's barren streak."""
        self._release_expansion(parent)
        if child is None:
            self.record_failed_expansion(parent)
            return
        novel = self.add_node(child, parent, code)
        self._barren.expansion_made(self._code_group[self.index(parent)], news=novel)

    def expansion_abandoned(self, parent: NodeId) -> None:
        """The job broke for reasons outside the agent (infrastructure): nothing recorded."""
        self._release_expansion(parent)

    def evaluation_started(self, node_id: NodeId, task: str) -> None:
        i = self.index(node_id)
        node = self._nodes[i]
        if task in node.results or task in node.pending_tasks:
            raise ValueError(f"task {task} on node {node_id} is already recorded or running")
        if task not in self.open_tasks(node_id):
            raise ValueError(f"task {task} is not open for node {node_id}")
        node.pending_tasks.add(task)
        self._todo_count[i] -= 1
        self._pending_evals[i] += 1
        self._total_pending_evals += 1

    def evaluation_finished(self, node_id: NodeId, task: str, solved: bool) -> None:
        self.record_evaluation(node_id, task, solved)
        self._release_evaluation(node_id, task)

    def evaluation_abandoned(self, node_id: NodeId, task: str) -> None:
        """The job broke outside the agent's control: the task becomes unevaluated again."""
        self._release_evaluation(node_id, task)
        self._todo_count[self.index(node_id)] += 1

    # -- queries ------------------------------------------------------------------------
    @property
    def size(self) -> int:
        return len(self._nodes)

    @property
    def barren_after(self) -> int:
        return self._barren.after

    @property
    def in_flight(self) -> int:
        return self._total_pending_evals + self._total_pending_expansions

    def index(self, node_id: NodeId) -> int:
        try:
            return self._index[node_id]
        except KeyError:
            raise KeyError(f"no node {node_id!r} in the search state") from None

    def node_id(self, index: int) -> NodeId:
        return self._nodes[index].id

    @property
    def node_ids(self) -> list[NodeId]:
        return [node.id for node in self._nodes]

    def parent(self, node_id: NodeId) -> NodeId | None:
        p = self._nodes[self.index(node_id)].parent
        return None if p < 0 else self._nodes[p].id

    def children(self, node_id: NodeId) -> list[NodeId]:
        return [self._nodes[c].id for c in self._nodes[self.index(node_id)].children]

    def results(self, node_id: NodeId) -> dict[str, bool]:
        """The node's own results (a copy), never its descendants'."""
        return dict(self._nodes[self.index(node_id)].results)

    def stage(self, node_id: NodeId) -> int:
        return self._nodes[self.index(node_id)].stage

    def open_tasks(self, node_id: NodeId) -> Sequence[str]:
        node = self._nodes[self.index(node_id)]
        return self.plan.stage1 + self.plan.stage2 if node.stage == 2 else self.plan.stage1

    def unevaluated_tasks(self, node_id: NodeId) -> list[str]:
        """Open tasks with neither a result nor a running evaluation, in plan order."""
        node = self._nodes[self.index(node_id)]
        return [
            t
            for t in self.open_tasks(node_id)
            if t not in node.results and t not in node.pending_tasks
        ]

    def own_counts(self, node_id: NodeId) -> tuple[int, int]:
        return int(self._own_successes[i := self.index(node_id)]), int(self._own_failures[i])

    def clade_counts(self, node_id: NodeId) -> tuple[int, int]:
        return int(self._clade_successes[i := self.index(node_id)]), int(self._clade_failures[i])

    # Counters and read-only column views (index = insertion order): strategies ask.
    @property
    def total_evals(self) -> int:
        """Evaluations recorded."""
        return self._total_evals

    @property
    def total_pending_evals(self) -> int:
        return self._total_pending_evals

    @property
    def total_pending_expansions(self) -> int:
        return self._total_pending_expansions

    @property
    def total_failed_expansions(self) -> int:
        """Expansions that made no valid child."""
        return self._total_failed_expansions

    def own_record(self) -> tuple[np.ndarray, np.ndarray]:
        """(solved, failed) per node: its own results only."""
        return _frozen(self._own_successes[: self.size]), _frozen(self._own_failures[: self.size])

    def clade_record(self) -> tuple[np.ndarray, np.ndarray]:
        """(solved, failed) per node: its own results and all its descendants'."""
        n = self.size
        return _frozen(self._clade_successes[:n]), _frozen(self._clade_failures[:n])

    def parent_column(self) -> np.ndarray:
        """Each node's parent index (insertion order), -1 for the root."""
        return _frozen(self._parent_index[: self.size])

    def evals_column(self) -> np.ndarray:
        return self._own_successes[: self.size] + self._own_failures[: self.size]

    def pending_evals_column(self) -> np.ndarray:
        """Each node's evaluations running now."""
        return _frozen(self._pending_evals[: self.size])

    def awaiting_evaluation_column(self) -> np.ndarray:
        """Nodes with an open task neither recorded nor running."""
        return self._todo_count[: self.size] > 0

    def children_column(self) -> np.ndarray:
        """Each node's number of valid children."""
        return _frozen(self._child_count[: self.size])

    def expansions_of(self, node_id: NodeId) -> int:
        """Expansions of the node so far: valid children, failed ones and running ones."""
        i, pending = self.index(node_id), self._pending_expansions
        return int(self._child_count[i] + self._failed_expansions_of[i] + pending[i])

    def task_record(self, task: str) -> tuple[int, int]:
        """(solved, failed) on `task`, pooled over every node."""
        solved, failed = self._task_results[task]
        return solved, failed

    def barren_streak(self, node_id: NodeId) -> int:
        """Expansions of the node's code without news since it last failed a new task."""
        return self._barren.streak(self._code_group[self.index(node_id)])

    def expandable_column(self, skip_barren: bool = True) -> np.ndarray:
        """Nodes that may be parents (barren.py): not barren (unless `skip_barren` is
        off, as reference hgm), pinned ones always, banned ones never."""
        n, groups, pending = self.size, self._code_group, self._pending_expansions
        return self._barren.may_expand(groups[:n], pending[:n], self._index, skip_barren)

    @property
    def parents(self) -> BarrenTracker:
        """Who may be a parent: barren codes, and a person's `pin` and `ban` (barren.py)."""
        return self._barren

    def open_stage2(self, node_id: NodeId) -> bool:
        """Open a node's stage-2 tasks now (a person asked for more); False if none to open."""
        return self._maybe_open_stage2(self.index(node_id), force=True)

    def settled_column(self) -> np.ndarray:
        """Nodes whose open tasks are all recorded (nothing left, nothing running)."""
        return (self._todo_count[: self.size] == 0) & (self._pending_evals[: self.size] == 0)

    # -- internals ----------------------------------------------------------------------
    def _rebuild_clades(self) -> None:
        """Clade counts from own counts: children always come after their parent, so one
        pass from the newest node back adds each finished subtree into its parent."""
        n = self.size
        successes, failures = self._own_successes[:n].tolist(), self._own_failures[:n].tolist()
        for i in range(n - 1, 0, -1):
            parent = self._nodes[i].parent
            successes[parent] += successes[i]
            failures[parent] += failures[i]
        self._clade_successes[:n], self._clade_failures[:n] = successes, failures

    def _maybe_open_stage2(self, i: int, force: bool = False) -> bool:
        node, plan = self._nodes[i], self.plan
        if node.stage != 1 or not plan.stage2:
            return False
        solved = [node.results[t] for t in plan.stage1 if t in node.results]
        done = len(solved) == len(plan.stage1)
        passed = done and sum(solved) >= plan.stage2_threshold * len(solved)
        if force or passed:
            node.stage = 2
            self._todo_count[i] += len(plan.stage2)
        return force or passed

    def _release_expansion(self, parent: NodeId) -> None:
        i = self.index(parent)
        if self._pending_expansions[i] <= 0:
            raise ValueError(f"no expansion of {parent} is running")
        self._pending_expansions[i] -= 1
        self._total_pending_expansions -= 1

    def _release_evaluation(self, node_id: NodeId, task: str) -> None:
        i = self.index(node_id)
        node = self._nodes[i]
        if task not in node.pending_tasks:
            raise ValueError(f"no evaluation of {node_id} on {task} is running")
        node.pending_tasks.discard(task)
        self._pending_evals[i] -= 1
        self._total_pending_evals -= 1

    def _grow(self) -> None:
        for name in _COLUMNS:
            column = getattr(self, name)
            setattr(self, name, np.concatenate((column, np.zeros_like(column))))


_COLUMNS = ("_own_successes", "_own_failures", "_clade_successes", "_clade_failures",
            "_todo_count", "_pending_evals", "_pending_expansions", "_child_count",
            "_failed_expansions_of", "_code_group", "_parent_index")  # fmt: skip
"""Per-node int64 columns, grown together (`_todo_count`: open, unrecorded, not running)."""


def _frozen(column: np.ndarray) -> np.ndarray:
    return np.lib.stride_tricks.as_strided(column, writeable=False)  # a read-only view
