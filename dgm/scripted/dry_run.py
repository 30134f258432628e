"""`dgm run --dry-run`: the whole pipeline, offline and free, with a scripted model.

The built-in script `scripted/capability` plays every role:
- `solve` on a task: writes the task's reference solution with the agent's own `create`
  tool, except on the "hard" tasks, where it first needs a `search_files` tool that the
  seed agent lacks (without it, it gives up and the hidden tests fail);
- `diagnose`: answers a JSON diagnosis asking for that tool;
- `self_improve`: adds the tool to the agent through the agent's own edit tools.
So the seed scores 2/4 on the dry-run tasks and a child that grew the tool scores 4/4,
judged by the real hidden tests in real sandboxes. The end-to-end tests use this script.

On SWE-bench (`--benchmark swebench --data DIR`) the answers are the gold patch's files,
and a task is hard when its problem statement names none of the files the gold patch
changes (finding them takes a search): on eval/subsets/swe_dry_run.txt the seed
resolves 2/3 and the child 3/3.
"""

from __future__ import annotations

import json
from typing import Any

from dgm.benchmarks.registry import BENCHMARKS, benchmark_of
from dgm.benchmarks.task import Task
from dgm.scripted.agent_drivers import CapabilityScript, WriteFilesScript, say

SCRIPT_NAME = "capability"
DRY_RUN_SUBSET = BENCHMARKS["polyglot"].dry_run_subset
HARD_TASKS = frozenset({"python__dominoes", "python__wordy"})
TOOL = "search_files"


class DryRunScript:
    """Stateless, so parallel jobs and retries are safe."""

    def __init__(self, task_lookup: Any, hard_tasks: frozenset[str] = HARD_TASKS) -> None:
        self.task_lookup = task_lookup
        self.hard_tasks = hard_tasks
        self.capability = CapabilityScript(lambda _text: None, tool=TOOL)

    def __call__(self, request: Any, context: Any = None) -> Any:
        binding = getattr(context, "binding", None)
        role = getattr(binding, "role", None)
        if role == "diagnose":
            return say(json.dumps(self.diagnosis()))
        if role == "self_improve":
            return self.capability(request, context)
        task_id = getattr(binding, "task_id", None)
        task = self.task_lookup(task_id) if task_id else None
        files = reference_files(task) if task else {}
        if task and self.is_hard(task):
            return CapabilityScript(lambda _text: files, tool=TOOL)(request, context)
        return WriteFilesScript(files)(request, context)

    def is_hard(self, task: Task) -> bool:
        return task.id in self.hard_tasks or not benchmark_of(task).statement_names_reference(task)

    def diagnosis(self) -> dict[str, str]:
        return {
            "log_summarization": "The agent could not locate the code it needed to change.",
            "potential_improvements": f"A `{TOOL}` tool for searching file contents.",
            "improvement_proposal": f"Add a `{TOOL}` tool.",
            "implementation_suggestion": "Add a tool module and register it.",
            "problem_description": self.capability.improvement_statement(),
        }


def reference_files(task: Task) -> dict[str, str]:
    """The reference solution's files, as the script writes them."""
    return benchmark_of(task).reference_files(task)


def register(task_lookup: Any) -> None:
    """Register the script as `scripted/capability` for this process."""
    from dgm.gateway import register_script

    register_script(SCRIPT_NAME, DryRunScript(task_lookup))
