"""The Polyglot judge: a fresh container per verdict; the verdict comes from per-test results.

On the host, before any agent code runs: the pristine exercise with its hidden tests
un-skipped, the tests each test file defines (`expected`), and canaries drawn afresh and
written into those files (polyglot_canaries). Staged read-only at /stage of a container
that exists for this one verdict: that exercise, the agent's workspace, the patch, and
`judge_prep.py`, which builds the exercise from the allowlist, runs the tests and prints
their report (polyglot_reports). Resolved only when every expected test is reported
PASSED, no other test failed, and the canaries behaved; the exit status of a process that
ran agent code decides nothing (an exit 0 despite failing tests is evidence of tampering).
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from dgm.benchmarks.judging import readable_by_sandbox
from dgm.benchmarks.polyglot import canaries as polyglot_canaries
from dgm.benchmarks.polyglot import loader as polyglot
from dgm.benchmarks.polyglot import reports as polyglot_reports
from dgm.benchmarks.polyglot import toolchains as chains
from dgm.benchmarks.polyglot.canaries import Canary
from dgm.benchmarks.polyglot.reports import PASSED, lookup
from dgm.benchmarks.task import Task, Verdict
from dgm.sandbox import Mount, ResourceLimits, SandboxSpec, run_command
from dgm.sandbox.spec import ExecResult

PREP_SCRIPT = Path(__file__).with_name("judge_prep.py")
PATCH_FAILED = 91
_EXITED = re.compile(r"^>>>>> dgm judge: tests exited (-?\d+) after ([0-9.]+) s$", re.MULTILINE)
_REPORT = re.compile(r"^>>>>> dgm judge report (\S+) ([A-Za-z0-9+/=]*)$", re.MULTILINE)
_FAILING = ("FAILED", "ERROR")

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
    bodies: list[str] = field(default_factory=list)
    """Canary source lines, kept out of the returned log."""


def prepare_judge_tree(task: Task, dest: Path) -> JudgePlan:
    """The pristine exercise as the judge runs it: tests un-skipped, canaries added."""
    chains.copy_exercise(Path(task.source), dest)
    test_files = chains.exercise_files(Path(task.source)).test
    chains.unskip_tests(task.language, dest, list(task.hidden_files))
    plan = JudgePlan(task.language)
    for name in test_files:
        path = dest / name
        if not path.is_file():
            continue
        text = path.read_text()
        found = polyglot_canaries.expected_tests(task.language, text)
        if not found:
            continue
        plan.expected += found
        new_text, canaries = polyglot_canaries.add_canaries(task.language, text)
        plan.canaries += canaries
        plan.bodies += [ln.strip() for ln in set(new_text.splitlines()) - set(text.splitlines())
                        if len(ln.strip()) > 3]  # fmt: skip
        path.write_text(new_text)
    return plan


def judge_polyglot(
    task: Task,
    patch: str,
    limits: ResourceLimits,
    backend: str = "docker",
    labels: dict[str, str] | None = None,
) -> tuple[Verdict, str]:
    """Run the hidden tests on `patch`; returns the verdict and the test output."""
    with tempfile.TemporaryDirectory(prefix="dgm-judge-") as tmp:
        stage = Path(tmp) / "stage"
        stage.mkdir()
        polyglot.prepare_workspace(task, stage / "work")
        plan = prepare_judge_tree(task, stage / "judge")
        (stage / "patch.diff").write_text(patch)
        shutil.copyfile(PREP_SCRIPT, stage / "judge_prep.py")
        (stage / "java-test.sh").write_text(polyglot_reports.JAVA_SCRIPT)
        staged = {
            "language": task.language,
            "command": task.test_command,
            "folder": Path(task.source).name,
            "solution": list(task.editable_files),
            "new_files": list(NEW_FILES.get(task.language, ())),
        }
        (stage / "plan.json").write_text(json.dumps(staged))
        readable_by_sandbox(stage)
        spec = SandboxSpec(
            image=task.judge_image,
            mounts=(Mount(stage, "/stage", read_only=True),),
            limits=limits,
            labels=labels or {},
        )
        prep = ["python3", "/stage/judge_prep.py"]
        result = run_command(spec, prep, task.test_timeout_s, backend)
    verdict = verdict_from(result, task, plan)
    return verdict, readable_log(result.output, plan, verdict)


def verdict_from(result: ExecResult, task: Task, plan: JudgePlan) -> Verdict:
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
    log, after = result.output[: last.start()], result.output[last.end() :]
    reports = {name: base64.b64decode(data) for name, data in _REPORT.findall(after)}
    if result.truncated and task.language in ("go", "rust"):
        return Verdict(False, error="the test output was truncated: no complete report", **base)  # type: ignore[arg-type]
    tests, details = polyglot_reports.per_test(task.language, reports, log)
    if tests is None:
        return Verdict(False, error="no per-test report from the tests (they did not run,"
                       " did not build, or the report is malformed)", **base)  # type: ignore[arg-type]  # fmt: skip
    return grade(tests, plan, test_exit, details, base)


def abnormal_end(result: ExecResult, task: Task, test_exit: int | None) -> str | None:
    if result.timed_out:
        return f"the test command was killed at the {task.test_timeout_s} s limit"
    if result.oom_killed:
        return "the tests ran out of memory"
    if result.exit_code == PATCH_FAILED and "the patch does not apply" in result.output:
        return "the patch does not apply to the workspace"
    if result.exit_code != 0 or test_exit is None:
        return f"the judge did not finish normally (container exit {result.exit_code})"
    if test_exit < 0 or test_exit > 128:
        signal = -test_exit if test_exit < 0 else test_exit - 128
        return f"the test process was killed by signal {signal}"
    return None


def grade(tests: dict[str, str], plan: JudgePlan, test_exit: int | None, details: dict,
          base: dict) -> Verdict:  # fmt: skip
    lang = plan.language
    details = dict(details)
    sources = details.pop("sources", None) or {"report": tests}
    names = {c.report_key for c in plan.canaries}
    real = {k: s for k, s in tests.items() if k not in names}
    seen = {c.name: lookup(tests, c.report_key, lang) for c in plan.canaries}
    real_pass = any(lookup(real, e, lang) == PASSED for e in plan.expected)
    evidence = []
    for c in plan.canaries:
        status = seen[c.name]
        claims = [s for s, got in sources.items() if lookup(got, c.report_key, lang) == PASSED]
        if c.must_fail and claims:
            evidence.append(f"the must-fail canary {c.name!r} ({c.form}) was reported PASSED"
                            f" by the {' and the '.join(claims)}")  # fmt: skip
        elif status is None and real_pass:
            evidence.append(f"the canary {c.name!r} is missing from the report")
        elif not c.must_fail and status != PASSED and real_pass:
            evidence.append(f"the must-pass canary {c.name!r} was reported {status}")
    failed_canary = any(c.must_fail and seen[c.name] in _FAILING for c in plan.canaries)
    if test_exit == 0 and failed_canary:
        evidence.append("the test process exited 0 although tests failed (its exit was forced)")
    missing = [e for e in plan.expected if lookup(real, e, lang) is None]
    not_passed = [e for e in plan.expected if lookup(real, e, lang) not in (PASSED, None)]
    failing = [k for k, s in real.items() if s in _FAILING]
    details |= {
        "expected_tests": len(set(plan.expected)),
        # Their names, so that no prompt shows them (dgm/jobs/diagnose.py): as secret as
        # the hidden tests.
        "canaries": sorted({c.name for c in plan.canaries}),
        "canary_counts": {"must_fail": sum(c.must_fail for c in plan.canaries),
                          "must_pass": sum(not c.must_fail for c in plan.canaries)},
    }  # fmt: skip
    error = None
    if missing:
        error = f"{len(missing)} expected tests missing from the report: " + ", ".join(missing[:5])
    if missing:
        details["missing_tests"] = missing[:20]
    if evidence:
        details["tamper_evidence"] = "; ".join(evidence)
    resolved = not evidence and error is None and not not_passed and not failing
    return Verdict(resolved, tests=real, error=error, details=details, tampered=bool(evidence),
                   **base)  # fmt: skip


def readable_log(output: str, plan: JudgePlan, verdict: Verdict) -> str:
    """The test output without the encoded reports and the canaries' lines, plus the
    per-test results the verdict was made from."""
    names = [c.name for c in plan.canaries]
    kept = []
    for line in _REPORT.sub("", output).splitlines():
        if names and any(n in line for n in names) or any(b in line for b in plan.bodies):
            continue
        kept.append(line)
    summary = [f"{status} {name}" for name, status in sorted(verdict.tests.items())]
    tail = ["", ">>>>> dgm judge: per-test results", *summary]
    if verdict.error:
        tail.append(f">>>>> dgm judge: {verdict.error}")
    return "\n".join(kept + tail) + "\n"
