"""The Aider polyglot benchmark: 225 Exercism exercises in six languages.

Task id `<language>__<exercise>`. The agent sees the instructions (as its problem
statement), the stubs and the build files. The test files named in `.meta/config.json`
(plus test data such as Go's `cases_test.go` and C++'s `test/` runner) are hidden: they
never enter the agent's container. Aider shows the tests to the model; DGM's harness
leaves them in the workspace. We do neither, so a score cannot come from reading tests.

Per-language knowledge of running the tests offline lives in `toolchains.py`.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import sys
import tempfile
from functools import cached_property, lru_cache
from pathlib import Path

from dgm.benchmarks import subsets
from dgm.benchmarks.polyglot import reports as polyglot_reports
from dgm.benchmarks.polyglot import toolchains as chains
from dgm.benchmarks.task import Task
from dgm.errors import DgmError, NotFoundError
from dgm.workspace_git import git_diff, git_init

NAME = "polyglot"
REPO_URL = "https://github.com/Aider-AI/polyglot-benchmark"
PINNED_COMMIT = "7e0611e"
ENV_VAR = "DGM_POLYGLOT_DIR"
SUBSETS = {"small": "polyglot_small.json", "medium": "polyglot_medium.json"}
"""Named subsets: DGM's id lists, in eval/subsets."""


def default_dir() -> Path:
    """Where `dgm bench fetch polyglot` puts the checkout."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "dgm" / "polyglot-benchmark"


def find_checkout(data: str | Path | None = None) -> Path:
    """--data PATH, else $DGM_POLYGLOT_DIR, else the `dgm bench fetch` location."""
    if data is not None:
        path, origin = Path(data), "--data"
    elif os.environ.get(ENV_VAR):
        path, origin = Path(os.environ[ENV_VAR]), ENV_VAR
    else:
        path, origin = default_dir(), "the default location"
    if not path.is_dir():
        raise NotFoundError(
            f"polyglot benchmark checkout not found at {path} ({origin})",
            "run `dgm bench fetch polyglot`, or pass --data PATH / set DGM_POLYGLOT_DIR",
        )
    if not is_checkout(path):
        raise DgmError(
            f"{path} is not a polyglot benchmark checkout (no <language>/exercises/practice)",
            f"point --data at a clone of {REPO_URL}",
        )
    return path


def is_checkout(path: Path) -> bool:
    return any((path / lang / "exercises" / "practice").is_dir() for lang in chains.LANGUAGES)


class PolyglotTasks:
    name = NAME

    def __init__(self, root: str | Path | None = None, test_timeout_s: int = 300) -> None:
        self.root = find_checkout(root)
        self.test_timeout_s = test_timeout_s
        self.refused: dict[str, str] = {}
        """The tasks the last `tasks` call left out, with why (toolchains.UNSCORABLE)."""

    @cached_property
    def _exercises(self) -> dict[str, Path]:
        found = {}
        for language in chains.LANGUAGES:
            practice = self.root / language / "exercises" / "practice"
            for folder in sorted(practice.iterdir()) if practice.is_dir() else []:
                if (folder / ".meta" / "config.json").is_file():
                    found[f"{language}__{folder.name}"] = folder
        return found

    def task_ids(self) -> list[str]:
        return list(self._exercises)

    def languages(self) -> list[str]:
        return sorted({i.split("__")[0] for i in self._exercises})

    def task(self, task_id: str) -> Task:
        folder = self._exercises.get(task_id)
        if folder is None:
            near = difflib.get_close_matches(task_id, list(self._exercises), n=1)
            raise NotFoundError(
                f"unknown polyglot task {task_id!r}",
                f"did you mean {near[0]}?" if near else "ids look like python__beer-song",
            )
        return make_task(task_id, folder, self.test_timeout_s)

    def tasks(self, subset: str) -> list[Task]:
        """The subset's tasks, less those whose reference cannot resolve here
        (toolchains.UNSCORABLE: each is named on stderr with why, and kept in `refused`);
        a task named by its id is kept."""
        ids = subsets.resolve(subset, NAME, self.task_ids(), self.languages(), SUBSETS)
        named = set(subset.split(",")) if "__" in subset and not subset.startswith("@") else set()
        self.refused = {i: chains.UNSCORABLE[i] for i in ids
                        if i in chains.UNSCORABLE and i not in named}  # fmt: skip
        for task_id, why in self.refused.items():
            print(f"polyglot: {task_id} left out of subset {subset!r}: {why}", file=sys.stderr)
        return [self.task(i) for i in ids if i not in self.refused]


def hidden_files(exercise: Path, language: str) -> list[str]:
    """Tests, test data and test runners: everything of the exercise the agent never sees.
    By what a file is (its name and folder, chains.TEST_LIKE) as well as by the config's
    lists, which leave some out (red team round seven W1: go/bottle-song's `cases_test.go`,
    the whole expected table, sat in the workspace; also go/two-bucket's `bonus_test.go`)."""
    hidden = chains.configured_tests(exercise, language)
    for path in exercise.rglob("*"):
        rel = path.relative_to(exercise).as_posix()
        if path.is_file() and not rel.startswith(".") and chains.is_test_like(rel):
            hidden.append(rel)
    return sorted(set(hidden))


def make_task(task_id: str, exercise: Path, test_timeout_s: int) -> Task:
    language = task_id.split("__")[0]
    chain = chains.toolchain(language)
    files = chains.exercise_files(exercise)
    return Task(
        id=task_id,
        benchmark=NAME,
        language=language,
        problem_statement=problem_statement(exercise, files.solution),
        image=chain.image,
        judge_image=chain.image,
        test_command=judge_command(language, chain.test_command),
        test_timeout_s=test_timeout_s,
        source=str(exercise),
        hidden_files=tuple(hidden_files(exercise, language)),
        editable_files=tuple(files.solution),
    )


def judge_command(language: str, command: str) -> str:
    """The judge's command: the toolchain's, writing a per-test report (polyglot_reports)."""
    return polyglot_reports.COMMANDS.get(language, command)


def problem_statement(exercise: Path, solution_files: list[str]) -> str:
    docs = exercise / ".docs"
    parts = [
        (docs / name).read_text().strip()
        for name in ("introduction.md", "instructions.md", "instructions.append.md")
        if (docs / name).is_file()
    ]
    parts.append(
        "Use the above instructions to modify the supplied files: "
        + ", ".join(solution_files)
        + ". Don't change the names of existing functions or classes, as they may be "
        "referenced from other code like unit tests. Only use standard libraries. "
        "The tests are hidden; they will be run after you finish."
    )
    return "\n\n".join(parts)


# -- workspaces (host side: our own trusted files) ----------------------------------------
def prepare_workspace(task: Task, dest: Path) -> str:
    """The agent's workspace as a git repo with one commit; returns that commit's sha."""
    exercise = Path(task.source)
    chains.copy_exercise(exercise, dest)
    for name in task.hidden_files:
        _remove(dest / name)
    _remove_empty_dirs(dest)
    return git_init(dest)


def reference_workspace(task: Task, dest: Path) -> Path:
    """The agent's workspace with the reference solution installed over the stubs."""
    prepare_workspace(task, dest)
    chains.install_reference(Path(task.source), dest)
    return dest


def reference_patch(task: Task) -> str:
    """The reference solution as a patch against the agent's workspace (for `oracle`)."""
    with tempfile.TemporaryDirectory(prefix="dgm-ref-") as tmp:
        return git_diff(reference_workspace(task, Path(tmp) / "work"))


def reference_files(task: Task) -> dict[str, str]:
    """The reference solution's editable files (the dry run's scripted answers)."""
    return dict(_reference_files(json.dumps(task.to_dict(), sort_keys=True)))


@lru_cache(maxsize=256)
def _reference_files(task_json: str) -> tuple[tuple[str, str], ...]:
    task = Task.from_dict(json.loads(task_json))
    with tempfile.TemporaryDirectory(prefix="dgm-dry-") as tmp:
        work = reference_workspace(task, Path(tmp) / "work")
        return tuple((f, (work / f).read_text()) for f in task.editable_files)


# -- helpers -------------------------------------------------------------------------------
def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _remove_empty_dirs(root: Path) -> None:
    for path in sorted(root.rglob("*"), reverse=True):
        if path.is_dir() and not path.is_symlink() and not any(path.iterdir()):
            path.rmdir()
