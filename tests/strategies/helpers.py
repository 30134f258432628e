"""Small builders shared by the strategy tests."""

from __future__ import annotations

from dgm.strategies import SearchState, TaskPlan

PLAN = TaskPlan(stage1=("a", "b", "c", "d", "e"), stage2=("f", "g", "h"), stage2_threshold=0.4)


def evaluate(state: SearchState, node: int, results: str, tasks: tuple[str, ...] = ()) -> None:
    """Record results given as a string of 1/0, on `tasks` or the node's open tasks."""
    tasks = tasks or tuple(state.unevaluated_tasks(node))
    for task, mark in zip(tasks, results, strict=False):
        state.record_evaluation(node, task, mark == "1")


def tree(*edges: tuple[int, int]) -> SearchState:
    """A state with the given (child, parent) edges added in order."""
    state = SearchState(PLAN)
    for child, parent in edges:
        state.add_node(child, parent)
    return state
