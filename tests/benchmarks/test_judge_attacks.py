"""Hostile patches against the Polyglot judge, every attack class in every language it
applies to (judge_attacks.py): the verdict is never resolved, and where the canaries
are what catches it, it is `tampered` with the evidence recorded. The reference and the
stubs of the same exercise are judged too, so an attack that fails does not fail only
because the judge is broken."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from dgm.benchmarks.polyglot import loader as polyglot
from dgm.benchmarks.polyglot import toolchains as chains
from dgm.benchmarks.polyglot.judge import judge_polyglot
from dgm.benchmarks.task import Task
from dgm.sandbox import ResourceLimits
from dgm.workspace_git import git_diff

from .judge_attacks import ALL, EXERCISES, Attack
from .judge_attacks_round2 import ALL as ROUND2
from .judge_attacks_round3 import ALL as ROUND3
from .judge_attacks_round4 import ALL as ROUND4
from .judge_attacks_round5 import ALL as ROUND5
from .judge_attacks_round7 import ALL as ROUND7
from .judge_attacks_round8 import ALL as ROUND8
from .judge_attacks_round9 import ALL as ROUND9

pytestmark = pytest.mark.docker
LIMITS = ResourceLimits(memory="3g", pids=1024)


def _task(polyglot_dir: Path, language: str, exercise: str = "") -> Task:
    exercise = exercise or EXERCISES[language]
    task = polyglot.PolyglotTasks(polyglot_dir).task(f"{language}__{exercise}")
    # A C++ build of Catch's main takes minutes on a loaded 2-core machine: a timeout here
    # would pass an attack test for the wrong reason.
    return dataclasses.replace(task, test_timeout_s=1200)


def attack_patch(task: Task, attack: Attack, dest: Path) -> str:
    """The attack's files written over the reference (or the stubs), as the agent's patch."""
    if attack.stub:
        polyglot.prepare_workspace(task, dest)
    else:
        polyglot.reference_workspace(task, dest)
    solution = chains.exercise_files(Path(task.source)).solution[0]
    for rel, text in attack.files.items():
        rel = solution if rel == "@solution" else rel
        path = dest / rel
        current = path.read_text() if path.is_file() else ""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace("{solution}", current))
    return git_diff(dest)


def _image_for(language: str, request: pytest.FixtureRequest) -> None:
    if language != "python":
        request.getfixturevalue("polyglot_image")


@pytest.mark.parametrize("language", sorted(EXERCISES))
def test_reference_resolves_and_stubs_do_not(
    language: str, polyglot_dir: Path, runtime_image: str, request: pytest.FixtureRequest
) -> None:
    _image_for(language, request)
    task = _task(polyglot_dir, language)
    good, log = judge_polyglot(task, polyglot.reference_patch(task), LIMITS)
    assert good.resolved, (good.error, good.details, log[-3000:])
    must_fail = (
        good.details["canary_counts"]["must_fail"] + good.details["copy_counts"]["must_fail"]
    )
    assert not good.tampered and must_fail >= 1
    bad, _ = judge_polyglot(task, "", LIMITS)
    assert not bad.resolved and not bad.tampered


KNOWN_HOLES: set[tuple[str, str]] = set()
"""Open holes (issue 24, README "Limits that remain"), as (language, attack name): marked
strict xfail, so that when the judge starts catching one, its test fails until the mark
goes. (Go octal's and C++ perfect-numbers' attacks were here while a file with no
literal expected value got no must-fail copy.)"""


def _marked(attack: Attack) -> object:
    if (attack.language, attack.name) in KNOWN_HOLES:
        reason = "known hole: no must-fail copy in this file (issue 24)"
        return pytest.param(attack, marks=pytest.mark.xfail(strict=True, reason=reason))
    return attack


@pytest.mark.parametrize(
    "attack",
    [_marked(a) for a in ALL + ROUND2 + ROUND3 + ROUND4 + ROUND5 + ROUND7 + ROUND8 + ROUND9],
    ids=lambda a: f"{a.language}-{a.name}",
)
def test_attack_is_never_resolved(
    attack: Attack,
    polyglot_dir: Path,
    runtime_image: str,
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> None:
    _image_for(attack.language, request)
    task = _task(polyglot_dir, attack.language, attack.exercise)
    patch = attack_patch(task, attack, tmp_path / "work")
    verdict, log = judge_polyglot(task, patch, LIMITS)
    assert not verdict.resolved, (verdict, log[-3000:])
    if attack.tampered:
        assert verdict.tampered, (verdict, log[-3000:])
        assert verdict.details["tamper_evidence"]
    if "report_name" in attack.name:  # the sealed channel, not the tests, refused it
        assert "malformed report" in (verdict.error or ""), verdict
    if attack.language == "go" and "table_referenced" in attack.name:
        assert "did not build" in (verdict.error or ""), verdict


@pytest.mark.parametrize("exercise", ["forth", "xorcism"])
def test_rust_reference_resolves_with_several_test_files_and_feature_gated_tests(
    exercise: str, polyglot_dir: Path, polyglot_image: str
) -> None:
    """forth: a must-fail canary in its first test binary must not stop the second from
    running; xorcism: tests behind `#[cfg(feature = "io")]` are not built, so not expected."""
    task = polyglot.PolyglotTasks(polyglot_dir).task(f"rust__{exercise}")
    verdict, log = judge_polyglot(task, polyglot.reference_patch(task), LIMITS)
    assert verdict.resolved and not verdict.tampered, (verdict.error, log[-3000:])


@pytest.mark.parametrize("exercise", ["error-handling", "react"])
def test_go_reference_resolves_beside_flipped_copies(
    exercise: str, polyglot_dir: Path, polyglot_image: str
) -> None:
    """Files only copies_flipped gives must-fail copies (inverted top-level guards, a
    helper's wanted literal changed): the reference reaches and fails every one."""
    task = polyglot.PolyglotTasks(polyglot_dir).task(f"go__{exercise}")
    verdict, log = judge_polyglot(task, polyglot.reference_patch(task), LIMITS)
    assert verdict.resolved and not verdict.tampered, (verdict.error, log[-3000:])
    counts = verdict.details
    assert counts["copy_counts"]["must_fail"] >= 3, counts
    assert counts["canary_counts"] == {"must_fail": 0, "must_pass": 0}, counts


def test_go_package_may_use_helpers_its_tests_provide(
    polyglot_dir: Path, polyglot_image: str
) -> None:
    """bottle-song's reference calls `Title`, a helper its test file provides: the package
    does not build alone, yet only for that, so it resolves (the tables stay out of reach:
    go-reads_tests_table_referenced)."""
    task = polyglot.PolyglotTasks(polyglot_dir).task("go__bottle-song")
    verdict, log = judge_polyglot(task, polyglot.reference_patch(task), LIMITS)
    assert verdict.resolved and not verdict.tampered, (verdict.error, log[-3000:])
    assert "helper functions its tests provide: Title" in log
