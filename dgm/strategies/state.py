"""The search state every strategy reads: the tree, its results, and what is in flight.

Updated incrementally, one event at a time, so that choosing an action stays cheap on
large archives: per-node counts live in numpy arrays indexed by insertion order, and a
recorded result is added to the node's own counts and to the clade counts of the node and
all its ancestors at once. The meta loop rebuilds it on resume by replaying the store's
nodes and evaluations in order (`SearchState.replay`).

Stages: every node starts with the stage-1 tasks open. Once all of them are recorded, and
the node solved at least `stage2_threshold` of them, the stage-2 tasks open too.

Barren parents: expansions are not free (a real model costs money for each), so a parent
whose last `barren_after` expansions produced nothing new (no child, or a child whose
code some node already has) drops out of `expandable_column` until its code fails a task
it had not failed before: the diagnosis works from failures, so only a new one gives it
new material. Expansions in flight count too once a parent has failed to make news, so
parallel workers do not overshoot. Nodes with identical code (the same git tree) share
one count: they are one agent, and expanding a twin fails the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from dgm.config import StrategyConfig

NodeId = int
"""A node's id: the store's row id (the seed is 0), the same type everywhere."""

ROOT: NodeId = 0
"""Id of the seed agent, as the store names it."""

BARREN_AFTER: int = StrategyConfig.model_fields["barren_after"].default
"""`[strategy] barren_after`'s default (one number, kept by the config): a parent whose last
this-many expansions produced nothing new is not expanded again until it is evaluated again
(`expandable_column`)."""


@dataclass(frozen=True)
class TaskPlan:
    """The benchmark's task ids, split in stages."""

    stage1: tuple[str, ...]
    stage2: tuple[str, ...] = ()
    stage2_threshold: float = 0.4

    def __post_init__(self) -> None:
        if not self.stage1:
            raise ValueError("a task plan needs at least one stage-1 task")
        if len(set(self.stage1) | set(self.stage2)) != len(self.stage1) + len(self.stage2):
            raise ValueError("task ids must be unique across both stages")


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
    """Read by strategies, written only by the scheduler (or by replay)."""

    def __init__(
        self, plan: TaskPlan, root: NodeId = ROOT, capacity: int = 256, root_code: str | None = None
    ) -> None:
        self.plan = plan
        self._nodes: list[_Node] = []
        self._index: dict[NodeId, int] = {}
        # Numeric per-node columns, grown by doubling. Index = insertion order.
        self.own_successes = np.zeros(capacity, dtype=np.int64)
        self.own_failures = np.zeros(capacity, dtype=np.int64)
        self.clade_successes = np.zeros(capacity, dtype=np.int64)
        self.clade_failures = np.zeros(capacity, dtype=np.int64)
        self.todo_count = np.zeros(capacity, dtype=np.int64)  # open, unrecorded, not pending
        self.pending_evals = np.zeros(capacity, dtype=np.int64)
        self.pending_expansions = np.zeros(capacity, dtype=np.int64)
        self.child_count = np.zeros(capacity, dtype=np.int64)
        self.failed_expansions_of = np.zeros(capacity, dtype=np.int64)
        self.code_group = np.zeros(capacity, dtype=np.int64)  # nodes with the same code
        self.barren_streak: list[int] = []  # per code group: expansions without news
        self._group_failed: list[set[str]] = []  # per code group: tasks it failed
        self.barren_after = BARREN_AFTER
        self._groups: dict[str, int] = {}
        self.total_evals = 0
        # Pooled over every node: (solved, failed) per task, for task-choice rules.
        self.task_results: dict[str, list[int]] = {t: [0, 0] for t in plan.stage1 + plan.stage2}
        self.total_failed_expansions = 0
        self.total_pending_evals = 0
        self.total_pending_expansions = 0
        self.pinned: set[NodeId] = set()  # a person's (loop/steering.py): a parent, however barren
        self.banned: set[NodeId] = set()  # a person's: never a parent
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
    ) -> SearchState:
        """Rebuild from recorded history: nodes as (id, parent) in creation order, the root
        first with parent None; evaluations as (node, task, solved); failed expansions by
        parent id; `codes` each node's codebase id. Jobs that were in flight are not part
        of the history: the loop re-submits them and reports them with the `*_started`
        events."""
        node_list = list(nodes)
        if not node_list or node_list[0][1] is not None:
            raise ValueError("replay needs the root node first, with parent None")
        codes = codes or {}
        root = node_list[0][0]
        capacity = max(256, 2 * len(node_list))
        state = cls(plan, root=root, capacity=capacity, root_code=codes.get(root))
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
        if i == len(self.own_successes):
            self._grow()
        # A result updates the clade counts of the whole lineage in one vectorised add; the
        # lineage is kept per node (memory: the sum of depths, 4 bytes each).
        above = self._nodes[parent_index].lineage if parent_index >= 0 else np.empty(0, np.int32)
        lineage = np.concatenate((np.array([i], dtype=np.int32), above))
        self._nodes.append(_Node(node_id, parent_index, lineage))
        self._index[node_id] = i
        self.todo_count[i] = len(self.plan.stage1)
        if parent_index >= 0:
            self._nodes[parent_index].children.append(i)
            self.child_count[parent_index] += 1
        group = self._groups.get(code) if code is not None else None
        novel = group is None
        if group is None:
            group = len(self.barren_streak)
            self.barren_streak.append(0)
            self._group_failed.append(set())
            if code is not None:
                self._groups[code] = group
        self.code_group[i] = group
        return novel

    def record_failed_expansion(self, parent: NodeId) -> None:
        i = self.index(parent)
        self.failed_expansions_of[i] += 1
        self.total_failed_expansions += 1
        self.barren_streak[self.code_group[i]] += 1

    def set_barren_streak(self, node_id: NodeId, count: int) -> None:
        """Restore a count from recorded history (resume: replay does not keep the order of
        expansions and evaluations, which the count depends on)."""
        self.barren_streak[self.code_group[self.index(node_id)]] = count

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
        group = self.code_group[i]
        if not solved and task not in self._group_failed[group]:  # new material
            self._group_failed[group].add(task)
            self.barren_streak[group] = 0
        self.task_results[task][0 if solved else 1] += 1
        if task not in node.pending_tasks:
            self.todo_count[i] -= 1
        if solved:
            self.own_successes[i] += 1
            if update_clades:
                self.clade_successes[node.lineage] += 1
        else:
            self.own_failures[i] += 1
            if update_clades:
                self.clade_failures[node.lineage] += 1
        self.total_evals += 1
        self._maybe_open_stage2(i)

    def expansion_started(self, parent: NodeId) -> None:
        self.pending_expansions[self.index(parent)] += 1
        self.total_pending_expansions += 1

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
        group = self.code_group[self.index(parent)]
        self.barren_streak[group] = 0 if novel else self.barren_streak[group] + 1

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
        self.todo_count[i] -= 1
        self.pending_evals[i] += 1
        self.total_pending_evals += 1

    def evaluation_finished(self, node_id: NodeId, task: str, solved: bool) -> None:
        self.record_evaluation(node_id, task, solved)
        self._release_evaluation(node_id, task)

    def evaluation_abandoned(self, node_id: NodeId, task: str) -> None:
        """The job broke outside the agent's control: the task becomes unevaluated again."""
        self._release_evaluation(node_id, task)
        self.todo_count[self.index(node_id)] += 1

    # -- queries ------------------------------------------------------------------------
    @property
    def size(self) -> int:
        return len(self._nodes)

    @property
    def in_flight(self) -> int:
        return self.total_pending_evals + self.total_pending_expansions

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
        i = self.index(node_id)
        return int(self.own_successes[i]), int(self.own_failures[i])

    def clade_counts(self, node_id: NodeId) -> tuple[int, int]:
        i = self.index(node_id)
        return int(self.clade_successes[i]), int(self.clade_failures[i])

    # Column views over the live nodes, for vectorised strategy code.
    def evals_column(self) -> np.ndarray:
        n = self.size
        return self.own_successes[:n] + self.own_failures[:n]

    def expandable_column(self) -> np.ndarray:
        """Nodes not barren: fewer than `barren_after` expansions without news since their
        code last failed a new task, counting those in flight once there was one without
        news (every strategy picks parents among these)."""
        n = self.size
        groups = self.code_group[:n]
        streaks = np.asarray(self.barren_streak, dtype=np.int64)[groups]
        pending = np.bincount(groups, weights=self.pending_expansions[:n])[groups]
        column = (streaks == 0) | (streaks + pending < self.barren_after)
        column[self.steered_indices(self.pinned)] = True
        column[self.steered_indices(self.banned)] = False
        return column

    def steered_indices(self, nodes: set[NodeId]) -> list[int]:
        return [self._index[n] for n in nodes if n in self._index]

    def open_stage2(self, node_id: NodeId) -> bool:
        """Open a node's stage-2 tasks now (a person asked for more); False if none to open."""
        return self._maybe_open_stage2(self.index(node_id), force=True)

    def settled_column(self) -> np.ndarray:
        """Nodes whose open tasks are all recorded (nothing left, nothing running)."""
        n = self.size
        return (self.todo_count[:n] == 0) & (self.pending_evals[:n] == 0)

    # -- internals ----------------------------------------------------------------------
    def _rebuild_clades(self) -> None:
        """Clade counts from own counts: children always come after their parent, so one
        pass from the newest node back adds each finished subtree into its parent."""
        n = self.size
        self.clade_successes[:n] = self.own_successes[:n]
        self.clade_failures[:n] = self.own_failures[:n]
        successes, failures = self.clade_successes.tolist(), self.clade_failures.tolist()
        for i in range(n - 1, 0, -1):
            parent = self._nodes[i].parent
            successes[parent] += successes[i]
            failures[parent] += failures[i]
        self.clade_successes[:n] = successes[:n]
        self.clade_failures[:n] = failures[:n]

    def _maybe_open_stage2(self, i: int, force: bool = False) -> bool:
        node = self._nodes[i]
        plan = self.plan
        if node.stage != 1 or not plan.stage2:
            return False
        stage1_results = [node.results[t] for t in plan.stage1 if t in node.results]
        done = len(stage1_results) == len(plan.stage1)
        if force or (done and sum(stage1_results) >= plan.stage2_threshold * len(plan.stage1)):
            node.stage = 2
            self.todo_count[i] += len(plan.stage2)
            return True
        return False

    def _release_expansion(self, parent: NodeId) -> None:
        i = self.index(parent)
        if self.pending_expansions[i] <= 0:
            raise ValueError(f"no expansion of {parent} is running")
        self.pending_expansions[i] -= 1
        self.total_pending_expansions -= 1

    def _release_evaluation(self, node_id: NodeId, task: str) -> None:
        i = self.index(node_id)
        node = self._nodes[i]
        if task not in node.pending_tasks:
            raise ValueError(f"no evaluation of {node_id} on {task} is running")
        node.pending_tasks.discard(task)
        self.pending_evals[i] -= 1
        self.total_pending_evals -= 1

    def _grow(self) -> None:
        for name in (
            "own_successes",
            "own_failures",
            "clade_successes",
            "clade_failures",
            "todo_count",
            "pending_evals",
            "pending_expansions",
            "child_count",
            "failed_expansions_of",
            "code_group",
        ):
            column = getattr(self, name)
            grown = np.zeros(2 * len(column), dtype=column.dtype)
            grown[: len(column)] = column
            setattr(self, name, grown)
