"""The shared data: a `Task` (serialisable), a `Verdict` (what the judge decided) and
the `TaskSource` interface every loader implements.

A Task carries everything the eval job needs to rebuild the agent's workspace and to
judge a patch, as plain data (paths and strings), so it crosses threads, processes and
Ray workers as JSON. The hidden tests are *named* here, never inlined: the judge reads
them from the benchmark source at judging time.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Task:
    id: str
    """Unique within its benchmark: `<language>__<exercise>` or a SWE-bench instance id."""
    benchmark: str
    """`polyglot` or `swebench`: names the implementation in `dgm.benchmarks.registry`
    that prepares, references and judges the task."""
    language: str
    problem_statement: str
    image: str
    """Sandbox image the agent runs in (a dgm image name or a full tag)."""
    judge_image: str
    """Image of the fresh judge container."""
    test_command: str
    test_timeout_s: int
    """The judge's hard limit for the test command (`[benchmark] test_timeout_s`); the
    agent's own wall clock is the eval job's `agent_timeout_s`."""
    source: str
    """Where the task lives: the exercise folder, or the SWE-bench data file."""
    hidden_files: tuple[str, ...] = ()
    """Workspace-relative paths the agent never sees (tests, test data, test runners)."""
    editable_files: tuple[str, ...] = ()
    """The files the agent is meant to change (Polyglot's solution files)."""
    workspace_in_image: str | None = None
    """SWE-bench: the repository at its base commit inside `image` (e.g. /testbed)."""
    base_commit: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    """Benchmark-specific data the judge needs (SWE-bench: eval script, test lists...)."""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["hidden_files"] = list(self.hidden_files)
        data["editable_files"] = list(self.editable_files)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Task:
        return cls(
            **{
                **data,
                "hidden_files": tuple(data.get("hidden_files", ())),
                "editable_files": tuple(data.get("editable_files", ())),
            }
        )

    def agent_view(self, max_steps: int, agent_timeout_s: int) -> dict[str, Any]:
        """The task file the agent reads at /task/task.json (the agent manifest's contract:
        its `time_limit_s` is the agent's own wall clock, not the judge's test limit)."""
        return {
            "id": self.id,
            "problem_statement": self.problem_statement,
            "language": self.language,
            "max_steps": max_steps,
            "time_limit_s": agent_timeout_s,
        }


@dataclass(frozen=True)
class Verdict:
    """What the judge decided about one patch on one task."""

    resolved: bool
    tests: dict[str, str] = field(default_factory=dict)
    """Per-test status (`PASSED`, `FAILED`, ...) where the test runner reports it."""
    exit_code: int | None = None
    timed_out: bool = False
    error: str | None = None
    """Why the tests could not give a verdict: timeout, patch does not apply, ..."""
    seconds: float = 0.0
    """Wall time of the judge container, start to finish."""
    test_seconds: float = 0.0
    """The test command's own time (as the judge measured it)."""
    details: dict[str, Any] = field(default_factory=dict)
    tampered: bool = False
    """The judge caught the patch interfering with the test run (a canary went the wrong
    way, or went missing). Never resolved; `details["tamper_evidence"]` says what was seen."""

    @property
    def tests_passed(self) -> int | None:
        return sum(s == "PASSED" for s in self.tests.values()) if self.tests else None

    @property
    def tests_total(self) -> int | None:
        return len(self.tests) if self.tests else None


class TaskSource(Protocol):
    """The tasks of a loaded benchmark (`polyglot/loader.py`, `swebench/loader.py`)."""

    name: str

    def task_ids(self) -> list[str]:
        """Every task id of the benchmark, in a stable order."""
        ...

    def task(self, task_id: str) -> Task:
        """One task; an unknown id is a `NotFoundError` naming a near match."""
        ...

    def tasks(self, subset: str) -> list[Task]:
        """The tasks of a subset (see `dgm.benchmarks.subsets`)."""
        ...
