"""The Polyglot judge: fresh containers per verdict; the verdict comes from per-test results.

On the host, before any agent code runs: the pristine exercise with its hidden tests
un-skipped, the tests each test file defines (`expected`), then every test renamed and
copies of real tests added (polyglot_copies) plus canaries (polyglot_canaries), all named
by one generator; only the host knows which name is which. Staged read-only at /stage of
a container that exists for this one verdict: that exercise, the agent's workspace, the
patch, and `judge_prep.py`, which builds the exercise from the allowlist, runs the tests
and prints their report (polyglot_reports). Compiled languages take two containers: the
first builds the test binaries (Go: the non-test package must build on its own), the
second runs them with no test source or test data in it. Resolved only when every
expected test is reported PASSED, no other test failed, and every copy and canary
behaved; the exit status of a process that ran agent code decides nothing.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from dgm.benchmarks.judging import readable_by_sandbox
from dgm.benchmarks.polyglot import canaries as polyglot_canaries
from dgm.benchmarks.polyglot import disguise as polyglot_copies
from dgm.benchmarks.polyglot import layout
from dgm.benchmarks.polyglot import loader as polyglot
from dgm.benchmarks.polyglot import reports as polyglot_reports
from dgm.benchmarks.polyglot import toolchains as chains
from dgm.benchmarks.polyglot.canaries import Canary
from dgm.benchmarks.polyglot.copies import MUST_FAIL, REAL, Entry, NameGen
from dgm.benchmarks.polyglot.grading import grade
from dgm.benchmarks.polyglot.nospawn import UNAVAILABLE
from dgm.benchmarks.task import Task, Verdict
from dgm.sandbox import Mount, ResourceLimits, SandboxSpec, run_command
from dgm.sandbox.spec import ExecResult

PREP_SCRIPT = Path(__file__).with_name("judge_prep.py")
HELPERS = ("nospawn.py", "build_scan.py", "rust_prep.py")
"""Staged beside judge_prep.py: the no-spawn launcher of the tests, the build's scan."""
_EVIDENCE = re.compile(r"^>>>>> dgm judge: build evidence: (.*)$", re.MULTILINE)
PATCH_FAILED = 91
_NO_LANDLOCK = re.compile(rf"^{re.escape(UNAVAILABLE)} \((.*)\)$", re.MULTILINE)
"""nospawn.py's line where the kernel has no Landlock: the test process could write its
own memory through /proc/self/mem (recorded in the verdict's details)."""
_EXITED = re.compile(r"^>>>>> dgm judge: tests exited (-?\d+) after ([0-9.]+) s$", re.MULTILINE)
_BUILT = re.compile(r"^>>>>> dgm judge: build exited (-?\d+) after ([0-9.]+) s$", re.MULTILINE)
_REPORT = re.compile(r"^>>>>> dgm judge report ([A-Za-z0-9._-]+) ([A-Za-z0-9+/=]*)$")
_MALFORMED = re.compile(r"^>>>>> dgm judge: malformed report: (.*)$")
_END = re.compile(r"^>>>>> dgm judge: end of reports \((\d+)\)$")
_JUDGE_HEADROOM = 96 * 1024
"""Output the judge prints besides the reports (its log excerpt is 64 KiB at most)."""

# New files (beyond .meta/config.json's solution files) each language may bring, as
# full-path regexes. Python, C++ and JavaScript: none. Go: same-package non-test files
# next to the solution; Rust: modules under src/ (not bin/, main.rs, build scripts);
# Java: classes of the stubs' package next to them (the references' helper classes).
NEW_FILES: dict[str, tuple[str, ...]] = {
    "python": (),
    "cpp": (),
    "javascript": (),
    "go": (r"[A-Za-z0-9][A-Za-z0-9_]*(?<!_test)\.go",),
    "rust": (r"src/(?!bin/)(?!main\.rs$)(?:[a-z0-9_]+/)*[a-z0-9_]+\.rs",),
    "java": (r"src/main/java/[A-Za-z_][A-Za-z0-9_]*\.java",),
}


@dataclass
class JudgePlan:
    """What the host decided before the agent's code runs; never staged as such."""

    language: str
    expected: list[str] = field(default_factory=list)
    canaries: list[Canary] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    """Every test of the judge's copy: its fresh name, the real test it is or copies."""
    bodies: list[str] = field(default_factory=list)
    """Canary source lines, kept out of the returned log."""
    build_evidence: list[str] = field(default_factory=list)
    """What the build container's scan of the solution found (build_scan.py)."""


def prepare_judge_tree(task: Task, dest: Path) -> JudgePlan:
    """The exercise as the judge runs it: tests un-skipped and disguised, canaries added."""
    chains.copy_exercise(Path(task.source), dest)
    test_files = chains.exercise_files(Path(task.source)).test
    unskipped = chains.configured_tests(Path(task.source), task.language)
    chains.unskip_tests(task.language, dest, unskipped)
    plan = JudgePlan(task.language)
    names = NameGen()
    elsewhere: dict[str, list[str]] = {}
    for name in test_files:
        path = dest / name
        if not path.is_file():
            continue
        text = path.read_text()
        found = polyglot_canaries.expected_tests(task.language, text)
        if not found:
            continue
        plan.expected += found
        context = "\n".join(p.read_text() for p in dest.glob("*_test.go") if p != path)
        text, entries = polyglot_copies.disguise(task.language, text, names, context, elsewhere)
        plan.entries += entries
        fresh = (lambda: names.name(task.language)) if entries else None
        new_text, canaries = text, []
        if not any(e.kind == MUST_FAIL for e in entries):
            # Literal canaries never call the solution (recognisable, so strippable):
            # only where no must-fail copy covers "every assertion passes".
            new_text, canaries = polyglot_canaries.add_canaries(task.language, text, fresh)
        plan.canaries += canaries
        plan.bodies += [ln.strip() for ln in set(new_text.splitlines()) - set(text.splitlines())
                        if len(ln.strip()) > 3]  # fmt: skip
        path.write_text(new_text)
    if task.language == "javascript":
        guard = Path(__file__).with_name("jest_guard.js")
        shutil.copyfile(guard, dest / polyglot_reports.JEST_GUARD)
    _unguessable_test_paths(task.language, dest, names)
    for table, decls in elsewhere.items():  # Go tables declared in another test file
        fresh = "test" + names.token().capitalize()
        for path in dest.glob("*_test.go"):
            path.write_text(layout.go_tables(path.read_text(), table, decls, fresh))
    return plan


def _unguessable_test_paths(language: str, dest: Path, names: NameGen) -> None:
    """C++ and Rust test sources under fresh names (the build files told): solution code
    is compiled while they are still there, and `.incbin`/`include_str!` need a path."""
    if language == "cpp":
        cmake = dest / "CMakeLists.txt"
        tests = sorted(dest.glob("*_test.cpp"))
        if len(tests) == 1 and cmake.is_file() and "${file}_test.cpp" in cmake.read_text():
            fresh = names.token() + "_test.cpp"
            tests[0].rename(dest / fresh)
            cmake.write_text(cmake.read_text().replace("${file}_test.cpp", fresh))
    elif language == "rust" and "[[test]]" not in (dest / "Cargo.toml").read_text():
        for path in sorted((dest / "tests").glob("*.rs")):
            path.rename(path.with_name(names.token() + ".rs"))


def judge_polyglot(
    task: Task,
    patch: str,
    limits: ResourceLimits,
    backend: str = "docker",
    labels: dict[str, str] | None = None,
) -> tuple[Verdict, str]:
    """Run the hidden tests on `patch`; returns the verdict and the test output."""
    build = polyglot_reports.BUILD.get(task.language)
    with tempfile.TemporaryDirectory(prefix="dgm-judge-") as tmp:
        stage = Path(tmp) / "stage"
        stage.mkdir()
        polyglot.prepare_workspace(task, stage / "work")
        plan = prepare_judge_tree(task, stage / "judge")
        (stage / "patch.diff").write_text(patch)
        _stage_scripts(stage)
        (stage / "java-build.sh").write_text(polyglot_reports.JAVA_BUILD)
        (stage / "java-run.sh").write_text(polyglot_reports.JAVA_RUN)
        language = task.language
        staged = {
            "language": language,
            "phase": "build" if build else "all",
            "command": polyglot_reports.RUN.get(language, task.test_command),
            "build": build or "",
            "folder": Path(task.source).name,
            "solution": list(task.editable_files),
            "new_files": list(NEW_FILES.get(language, ())),
            "reports": allowed_reports(language),
            "result_lines": polyglot_reports.RESULT_LINES.get(language, ""),
            "budget": max(limits.max_output // 2 - _JUDGE_HEADROOM, 0),
            "spawn_allowed": tests_spawn(task),
            "forbid_unsafe": forbids_unsafe(task),
        }  # fmt: skip
        (stage / "plan.json").write_text(json.dumps(staged))
        readable_by_sandbox(stage)
        spec = SandboxSpec(image=task.judge_image, mounts=(Mount(stage, "/stage", read_only=True),),
                           limits=limits, labels=labels or {})  # fmt: skip
        if build:
            result, plan.build_evidence = _build_then_run(spec, Path(tmp), staged,
                                                          task.test_timeout_s, backend)  # fmt: skip
        else:
            prep = ["python3", "/stage/judge_prep.py"]
            result = run_command(spec, prep, task.test_timeout_s, backend)
    verdict = verdict_from(result, task, plan)
    return verdict, readable_log(result.output, plan, verdict)


def _stage_scripts(stage: Path) -> None:
    shutil.copyfile(PREP_SCRIPT, stage / "judge_prep.py")
    for name in HELPERS:
        shutil.copyfile(PREP_SCRIPT.with_name(name), stage / name)


def tests_spawn(task: Task) -> bool:
    """Whether the exercise's own (pristine) tests start processes (reports.SPAWNING_TESTS):
    only then may the test process spawn (nospawn.py)."""
    rule = polyglot_reports.SPAWNING_TESTS.get(task.language)
    paths = [Path(task.source) / name for name in task.hidden_files]
    return bool(rule) and any(p.is_file() and re.search(rule, p.read_text(errors="replace"))
                              for p in paths)  # fmt: skip


def forbids_unsafe(task: Task) -> bool:
    """Rust: whether the solution crate is built under `#![forbid(unsafe_code)]`
    (judge_prep), so that `unsafe` in it is evidence: everywhere but where the exercise's
    own reference uses `unsafe` (doubly-linked-list)."""
    if task.language != "rust":
        return False
    source = Path(task.source)
    examples = [source / name for name in chains.exercise_files(source).example]
    return not any(p.is_file() and re.search(r"\bunsafe\b", p.read_text(errors="replace"))
                   for p in examples)  # fmt: skip


def allowed_reports(language: str) -> list[str]:
    """The report files judge_prep may find in its report folder (nothing else)."""
    main = polyglot_reports.REPORT_FILES.get(language)
    return ([main] if main else []) + list(polyglot_reports.OPTIONAL_REPORTS.get(language, ()))


def _build_then_run(spec: SandboxSpec, tmp: Path, staged: dict, timeout_s: int,
                    backend: str) -> tuple[ExecResult, list[str]]:  # fmt: skip
    """The first container builds the test binaries into `built`; the second runs them
    with nothing of the exercise but those binaries (its stage holds no test file).
    Also returns the build's evidence lines (from the first container's output only: no
    agent code runs there, and a forged line can only accuse)."""
    built = tmp / "built"
    built.mkdir()
    built.chmod(0o777)
    out = Mount(built, "/out", read_only=False)
    spec_build = dataclasses.replace(spec, mounts=(*spec.mounts, out))
    first = run_command(spec_build, ["python3", "/stage/judge_prep.py"], timeout_s, backend)
    code = _BUILT.findall(first.output)
    failed = first.exit_code != 0 or first.timed_out or first.oom_killed
    evidence = _EVIDENCE.findall(first.output)
    if failed or not code or code[-1][0] != "0":
        return first, evidence
    run_stage = tmp / "run"
    run_stage.mkdir()
    _stage_scripts(run_stage)
    shutil.copyfile(tmp / "stage" / "java-run.sh", run_stage / "java-run.sh")
    (run_stage / "plan.json").write_text(json.dumps({**staged, "phase": "run"}))
    readable_by_sandbox(run_stage)
    mounts = (Mount(run_stage, "/stage", read_only=True), Mount(built, "/built", read_only=True))
    spec_run = dataclasses.replace(spec, mounts=mounts)
    left = max(int(timeout_s - first.duration_s), 1)
    second = run_command(spec_run, ["python3", "/stage/judge_prep.py"], left, backend)
    return dataclasses.replace(second, output=first.output + second.output,
                               duration_s=first.duration_s + second.duration_s,
                               timed_out=second.timed_out), evidence  # fmt: skip


def verdict_from(result: ExecResult, task: Task, plan: JudgePlan) -> Verdict:
    verdict = _verdict_from(result, task, plan)
    unguarded = _NO_LANDLOCK.search(result.output)
    if unguarded:  # (printed before any agent code ran; a forged one only adds this note)
        note = {"landlock_unavailable": unguarded.group(1)[:200]}
        verdict = dataclasses.replace(verdict, details={**(verdict.details or {}), **note})
    if plan.build_evidence and not verdict.tampered:  # whatever the run did after
        details = {**(verdict.details or {}), "tamper_evidence": "; ".join(plan.build_evidence)}
        return dataclasses.replace(verdict, resolved=False, tampered=True, details=details)
    return verdict


def _verdict_from(result: ExecResult, task: Task, plan: JudgePlan) -> Verdict:
    exited = _EXITED.findall(result.output)
    test_exit = int(exited[-1][0]) if exited else None
    took = float(exited[-1][1]) if exited else result.duration_s
    base = dict(exit_code=test_exit if test_exit is not None else result.exit_code,
                timed_out=result.timed_out, seconds=result.duration_s,
                test_seconds=took)  # fmt: skip
    error = abnormal_end(result, task, test_exit)
    if not error and not plan.expected:
        error = "the hidden test files define no tests: nothing can pass"
    if error:
        return Verdict(False, error=error, **base)  # type: ignore[arg-type]
    # judge_prep prints the reports after its last marker, once every process of the tests
    # is dead: report lines before it were printed by the tests themselves.
    last = list(_EXITED.finditer(result.output))[-1]
    reports, malformed = sealed_reports(result.output[last.end() :])
    if malformed:
        return Verdict(False, error=f"malformed report: {malformed}", **base)  # type: ignore[arg-type]
    tests, details = polyglot_reports.per_test(task.language, reports)
    if tests is None:
        return Verdict(False, error="no per-test report from the tests (they did not run,"
                       " did not build, or the report is malformed)", **base)  # type: ignore[arg-type]  # fmt: skip
    if plan.build_evidence:
        details = {**details, "build_evidence": plan.build_evidence}
    return grade(tests, plan, test_exit, details, base)


def sealed_reports(after: str) -> tuple[dict[str, bytes], str | None]:
    """The reports judge_prep printed after its marker, or why they cannot be trusted:
    every line there must be one of its own, each report named once, and its end line
    last with the right count (a cut output loses it)."""
    reports: dict[str, bytes] = {}
    lines = after.strip("\n").split("\n")
    end = _END.match(lines[-1]) if lines else None
    if not end:
        return {}, "the judge's end line is missing (output cut or forged)"
    for line in lines[:-1]:
        report, bad = _REPORT.match(line), _MALFORMED.match(line)
        if bad:
            return {}, bad.group(1)
        if not report or report.group(1) in reports:
            return {}, "an unexpected or repeated line among the reports: " + ascii(line[:80])
        reports[report.group(1)] = base64.b64decode(report.group(2))
    if int(end.group(1)) != len(reports):
        return {}, "the number of reports does not match the judge's end line"
    return reports, None


def abnormal_end(result: ExecResult, task: Task, test_exit: int | None) -> str | None:
    if result.timed_out:
        return f"the test command was killed at the {task.test_timeout_s} s limit"
    if result.oom_killed:
        return "the tests ran out of memory"
    if result.exit_code == PATCH_FAILED and "the patch does not apply" in result.output:
        return "the patch does not apply to the workspace"
    built = _BUILT.findall(result.output)
    if result.exit_code == 0 and built and built[-1][0] != "0" and test_exit is None:
        alone = "; the package must also build without its tests" * (task.language == "go")
        return f"the tests did not build (exit {built[-1][0]}{alone})"
    if result.exit_code != 0 or test_exit is None:
        return f"the judge did not finish normally (container exit {result.exit_code})"
    if test_exit < 0 or test_exit > 128:
        signal = -test_exit if test_exit < 0 else test_exit - 128
        return f"the test process was killed by signal {signal}"
    return None


def readable_log(output: str, plan: JudgePlan, verdict: Verdict) -> str:
    """The test output without the encoded reports and without the canaries' and the
    copies' output (a line naming one starts a hidden section, a line naming a real test
    ends it: a changed copy's failure would read as the solution's), real tests under
    their own names, plus the per-test results the verdict was made from."""
    hidden = [c.name for c in plan.canaries]
    hidden += [_bare(e.key) for e in plan.entries if e.kind != REAL]
    real = sorted(((_bare(e.key), _bare(e.original)) for e in plan.entries if e.kind == REAL),
                  key=lambda pair: -len(pair[0]))  # fmt: skip
    kept: list[str] = []
    in_hidden = False
    for line in output.splitlines():
        if _REPORT.match(line):
            continue
        if any(n in line for n in hidden):
            in_hidden = True
            continue
        if any(fresh in line for fresh, _ in real) or line.startswith(">>>>> dgm judge"):
            in_hidden = False
        if in_hidden or any(b in line for b in plan.bodies):
            continue
        for fresh, original in real:
            line = line.replace(fresh, original)
        kept.append(line)
    summary = [f"{status} {name}" for name, status in sorted(verdict.tests.items())]
    tail = ["", ">>>>> dgm judge: per-test results", *summary]
    if verdict.error:
        tail.append(f">>>>> dgm judge: {verdict.error}")
    return "\n".join(kept + tail) + "\n"


def _bare(key: str) -> str:
    return key.rsplit(".", 1)[-1] if "." in key and " " not in key else key
