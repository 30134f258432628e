"""The SWE-bench judge: a fresh container of the instance image, the official eval script.

1. The model patch loses its hunks on files the judge owns (swe_guard), then is applied
   at /testbed the way the official harness does (git apply, --3way, --reject, patch).
2. The official eval script runs in steps (swebench/steps.py): the official test patch
   and the judge's rewritten test files (copies of real tests, or fallback canaries) are
   put in place and deleted from the stage before any code of the patch runs; then the
   script's setup lines; then a script holding only the test command, with (pytest) a
   JUnit report at a path drawn afresh.
3. After each step that ran code of the patch, every process left in the container is
   killed; what the setup step changed is listed by an exec of its own (setup_audit.py);
   the report is copied out and parsed on the host as hostile input.
4. Per-test status = the instance's official `log_parser` on the log AND, for pytest,
   the JUnit report: a test passes only when both say so. A must-fail canary that passes,
   or canaries missing while tests report passing, is tampering: never resolved.
"""

from __future__ import annotations

import random
import re
import secrets
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dgm.benchmarks.judging import readable_by_sandbox
from dgm.benchmarks.swebench import copies as swe_copies
from dgm.benchmarks.swebench import copy_names as swe_names
from dgm.benchmarks.swebench import copy_plan as swe_copy_plan
from dgm.benchmarks.swebench import guard as swe_guard
from dgm.benchmarks.swebench import junit as swe_junit
from dgm.benchmarks.swebench import setup_audit, steps
from dgm.benchmarks.swebench import stream as swe_stream
from dgm.benchmarks.task import Task, Verdict
from dgm.errors import DgmError
from dgm.sandbox import Mount, ResourceLimits, SandboxSpec, open_sandbox

REPO_DIR = steps.REPO_DIR
APPLY_FAILED = steps.APPLY_FAILED
TEST_PATCH_FAILED = steps.TEST_PATCH_FAILED
PREP_DIR = steps.PREP_DIR
_PYTEST = re.compile(r"(^|[\s/])(pytest|py\.test)(\s|$)|-m pytest")
PASSING = ("PASSED", "XFAIL")
MAX_REPORT_BYTES = swe_junit.MAX_REPORT_BYTES


_PLUGIN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


def judge_swebench(
    task: Task, patch: str, limits: ResourceLimits, backend: str = "docker",
    labels: dict[str, str] | None = None, extra_copies: bool = False,
) -> tuple[Verdict, str]:  # fmt: skip
    meta = task.meta
    command = swe_guard.test_command(str(meta["eval_script"]))
    kept, dropped = swe_guard.filter_patch(patch, swe_guard.runner_files(command),
                                           str(meta.get("repo", "")))  # fmt: skip
    files = swe_guard.test_files(command)
    pytest = bool(_PYTEST.search(command))
    report_dir = f"/tmp/dgm-{secrets.token_hex(8)}"
    nonce = swe_stream.new_nonce() if pytest else None
    with tempfile.TemporaryDirectory(prefix="dgm-judge-") as tmp:
        stage = Path(tmp) / "stage"
        stage.mkdir()
        (stage / "patch.diff").write_text(kept)
        (stage / swe_stream.DIR).mkdir()
        for name, source in swe_stream.staged(nonce).items() if nonce else ():
            (stage / swe_stream.DIR / name).write_text(source)
        (stage / "prepare.sh").write_text(
            steps.prepare_script(kept, str(meta["base_commit"]), files)
        )
        readable_by_sandbox(stage)
        official = not task.judge_image.startswith("dgm/")
        spec = SandboxSpec(
            image=task.judge_image,
            mounts=(Mount(stage, "/stage", read_only=True),),
            limits=limits,
            labels=labels or {},
            user="0:0" if official else "1000:1000",
            env=_judge_env(task),
            writable_root=True,  # the eval script reinstalls the package into the venv
        )
        plan: swe_copy_plan.CopyPlan | None = None
        canaries: swe_guard.Canaries | None = None
        runs: list[Any] = []  # each step's ExecResult, in order
        patched = setup_audit.patched_files(kept)
        audit: setup_audit.Audit | None = None
        plugins: list[str] = []
        with open_sandbox(spec, backend) as box:
            result = report = None
            complete = False  # the tests step's output was not cut
            prep = box.exec(["/bin/bash", "/stage/prepare.sh"], timeout=task.test_timeout_s)
            runs.append(prep)
            if APPLY_FAILED in prep.output or prep.timed_out or prep.exit_code != 0:
                result = prep
            else:
                base, plugins = _prepared(box, Path(tmp), files)
                plan = _plan(task, files, base, 2 if extra_copies else 1)
                canaries = None if plan or not files else _canaries(task, files, base)
                place = _place(box, stage, task, plan, canaries)
                runs.append(place)
                result = place if place.exit_code != 0 or place.timed_out else None
            if result is None:
                (stage / "setup.sh").write_text(steps.setup_script(str(meta["eval_script"])))
                (stage / "tests.sh").write_text(
                    steps.tests_script(str(meta["eval_script"]), report_dir, pytest, plugins, nonce)
                )
                (stage / "setup-run.sh").write_text(setup_audit.setup_script("setup.sh", patched))
                (stage / "tests-run.sh").write_text(steps.wrapped("tests.sh"))
                readable_by_sandbox(stage)
                (stage / swe_stream.DIR / "mark").touch()  # dates the setup (stream_checks)
                setup = box.exec(["/bin/bash", "/stage/setup-run.sh"], timeout=task.test_timeout_s)
                runs.append(setup)
                if not setup.timed_out:  # a setup cut at its limit is not resolved anyway
                    audit = _audit(box, stage, task, setup.output, patched, command)
                result = box.exec(["/bin/bash", "/stage/tests-run.sh"], timeout=task.test_timeout_s)
                runs.append(result)
                complete = not result.truncated
                result = setup if setup.timed_out else result
                report = _copy_report(box, report_dir, Path(tmp)) if pytest else None
        log = "".join(r.output for r in runs)
        log += "\n>>>>> Tests Timed Out\n" if result.timed_out else ""
        log_path = Path(tmp) / "test_output.txt"
        log_path.write_text(log)
        junit = swe_junit.parse_junit(report) if report is not None else None
        checked = (nonce, complete, swe_junit.digest(report) if report else "") if nonce else None
        verdict = grade(task, log_path, junit, canaries, plan, checked, audit)
    details = dict(verdict.details)
    if dropped:
        details["dropped_hunks"] = dropped
    error = verdict.error
    if result.timed_out:
        error = f"the eval script was killed at the {task.test_timeout_s} s limit"
    elif APPLY_FAILED in log:
        error = "the model patch does not apply"
    seconds = sum(r.duration_s for r in runs)
    if TEST_PATCH_FAILED in log:
        error = "the official test patch does not apply"
    return (
        Verdict(
            resolved=verdict.resolved and not result.timed_out,
            tests=verdict.tests,
            exit_code=result.exit_code,
            timed_out=result.timed_out,
            error=error,
            seconds=seconds,
            test_seconds=seconds,
            details=details,
            tampered=verdict.tampered,
        ),
        log,
    )


def _audit(box: Any, stage: Path, task: Task, setup_output: str, patched: list[str],
           command: str) -> setup_audit.Audit:  # fmt: skip
    """The setup step's audit, in an exec of its own: nothing of the patch runs in it."""
    started = setup_audit.start(setup_output)
    listing = ""
    if started:
        (stage / "audit.sh").write_text(setup_audit.audit_script(started, patched))
        readable_by_sandbox(stage)
        listing = box.exec(["/bin/bash", "/stage/audit.sh"], timeout=task.test_timeout_s).output
    repo = str(task.meta.get("repo", ""))
    return setup_audit.audit(setup_output, listing, swe_guard.runner_files(command), repo)


def _prepared(box: Any, tmp: Path, files: list[str]) -> tuple[dict[str, str | None], list[str]]:
    """The base commit's test files and the image's pytest plugins, as the prepare step
    left them (before any code of the patch ran)."""
    dest = tmp / "prep"
    dest.mkdir()
    try:
        box.copy_out(PREP_DIR, dest, max_bytes=MAX_REPORT_BYTES)
    except DgmError:
        return {}, []
    root = dest / Path(PREP_DIR).name
    base: dict[str, str | None] = {}
    for i, path in enumerate(files):
        found = root / "files" / f"{i}.py"
        base[path] = found.read_text(errors="replace") if found.is_file() else None
    listed = root / "plugins.txt"
    names = listed.read_text().split() if listed.is_file() else []
    return base, sorted({n for n in names if _PLUGIN_NAME.match(n)})


def _plan(
    task: Task, files: list[str], base: dict[str, str | None], scale: int = 1
) -> swe_copy_plan.CopyPlan | None:
    sources = swe_copy_plan.with_test_patch(base, str(task.meta.get("test_patch", "")))
    if not sources or not set(sources) <= set(files):
        return None
    f2p, p2p = (list(task.meta.get(k) or []) for k in ("FAIL_TO_PASS", "PASS_TO_PASS"))
    rng = random.Random(secrets.randbits(64))
    return swe_copies.plan_copies(sources, f2p, p2p, rng, n_fail=3 * scale, n_pass=2 * scale)


def _canaries(task: Task, files: list[str], base: dict[str, str | None]) -> swe_guard.Canaries:
    """Canaries named like the first readable file's tests, comparing its literals."""
    sources = swe_copy_plan.with_test_patch(base, str(task.meta.get("test_patch", ""))) or {}
    if not sources:
        return swe_guard.Canaries.draw(files)
    names = swe_names.Names(sources, random.Random(secrets.randbits(64)))
    first = next(iter(sources))
    pair = (names.draw(first), names.draw(first))
    return swe_guard.Canaries.draw(files, pair, swe_names.plain_literals(sources[first]))


def _place(box: Any, stage: Path, task: Task, plan: swe_copy_plan.CopyPlan | None,
           canaries: swe_guard.Canaries | None) -> Any:  # fmt: skip
    """The place step, then its staged files (the official test patch, the rewritten
    test files, the canaries) deleted on the host: the bind mount shows the deletion, so
    nothing the patch's code runs beside can read them."""
    secret = stage / steps.SECRET_DIR
    (secret / "tests").mkdir(parents=True)
    (secret / "test.patch").write_text(str(task.meta.get("test_patch", "")))
    for i, text in enumerate((plan.files if plan else {}).values()):
        (secret / "tests" / f"{i}.py").write_text(text)
    (secret / "canary.py").write_text(canaries.source() if canaries else "")
    script = steps.place_script(
        str(task.meta["eval_script"]), str(task.meta["base_commit"]),
        list(plan.files) if plan else [], list(canaries.files) if canaries else [],
    )  # fmt: skip
    (secret / "place.sh").write_text(script)
    readable_by_sandbox(stage)
    try:
        return box.exec(["/bin/bash", f"/stage/{steps.SECRET_DIR}/place.sh"],
                        timeout=task.test_timeout_s)  # fmt: skip
    finally:
        shutil.rmtree(secret)


def _judge_env(task: Task) -> dict[str, str]:
    """The shallow /testbed has no tags, so setuptools_scm would version the eval script's
    reinstall 0.1.dev1 (pytest then fails its own `minversion`): give it the instance's."""
    version = str(task.meta.get("version") or "")
    # The base commit is the shallow root, so the scripts' `git show` would print the whole
    # tree (110,000 lines for sqlfluff) and push the test output out of the kept log.
    env = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "log.showRoot",
           "GIT_CONFIG_VALUE_0": "false"}  # fmt: skip
    return env | ({"SETUPTOOLS_SCM_PRETEND_VERSION": version} if version else {})


def _copy_report(box: Any, report_dir: str, tmp: Path) -> bytes | None:
    dest = tmp / "report"
    dest.mkdir()
    try:
        box.copy_out(report_dir, dest, max_bytes=MAX_REPORT_BYTES)
    except DgmError:
        return None
    found = dest / Path(report_dir).name / "report.xml"
    if not found.is_file() or found.is_symlink():
        return None
    return found.read_bytes()


def grade(
    task: Task, log_path: Path, junit: dict[str, str] | None,
    canaries: swe_guard.Canaries | None, plan: swe_copy_plan.CopyPlan | None = None,
    streamed: tuple[str, bool, str] | None = None, audit: setup_audit.Audit | None = None,
) -> Verdict:  # fmt: skip
    """The official grading on the combined per-test statuses, with the canary checks,
    (`streamed`: the run's nonce, whether its output is whole, the report's digest) the
    result stream's and
    (`audit`) the setup step's."""
    from swebench.harness.constants import ResolvedStatus
    from swebench.harness.grading import (
        EvalType,
        get_eval_tests_report,
        get_logs_eval,
        get_resolution_status,
    )

    spec = make_spec(task)
    after_summary: list[str] = []
    if _PYTEST.search(swe_guard.test_command(spec.eval_script)):
        graded = log_path.with_name("test_output_graded.txt")
        text, after_summary = swe_stream.pytest_log(log_path.read_text(errors="replace"))
        graded.write_text(text)
        log_path = graded
    status_map, found = get_logs_eval(spec, str(log_path))
    if not found:
        return Verdict(False, error="no test results in the log (see test_output.txt)")
    raw = {"log": dict(status_map)} | ({"report": junit} if junit is not None else {})
    if plan is not None:
        status_map = plan.to_official(status_map)
        junit = plan.to_official(junit) if junit is not None else None
    tests = dict(status_map)
    details: dict[str, Any] = {}
    if junit is not None or _PYTEST.search(swe_guard.test_command(spec.eval_script)):
        if junit is None:
            return Verdict(False, tests=tests, error="the judge's JUnit report is missing")
        disagree = {t: (s, junit.get(t)) for t, s in tests.items()
                    if s in PASSING and junit.get(t) not in PASSING}  # fmt: skip
        for test in disagree:
            tests[test] = "FAILED"
        if disagree:
            details["log_vs_report"] = {t: f"log {a}, report {b}" for t, (a, b) in
                                        list(disagree.items())[:20]}  # fmt: skip
    gold = {"FAIL_TO_PASS": spec.FAIL_TO_PASS, "PASS_TO_PASS": spec.PASS_TO_PASS}
    report = get_eval_tests_report(tests, gold, eval_type=EvalType(spec.eval_type))
    resolved = get_resolution_status(report) == ResolvedStatus.FULL.value
    evidence = _tamper_evidence(canaries, status_map, junit, tests, gold)
    if after_summary:
        evidence = evidence or f"log: a status line after pytest's last line: {after_summary[0]}"
    if audit is not None:  # first: planted start-up code explains whatever follows
        details["setup_audit"] = audit.note()
        evidence = f"setup: {audit.evidence}" if audit.evidence else evidence
    details |= {"resolution": get_resolution_status(report), "report": report}
    if canaries is not None:
        details["canaries"] = [canaries.must_pass, canaries.must_fail]
    mismatch = None
    if plan is not None:
        details["copies"] = {"must_fail": plan.must_fail, "must_pass": plan.must_pass,
                             "renamed": plan.official}  # fmt: skip
        # as secret as canaries: no prompt ever shows a line that names one (diagnose)
        details["canaries"] = [*plan.must_fail, *plan.must_pass, *plan.official]
        expected = set(gold["FAIL_TO_PASS"]) | set(gold["PASS_TO_PASS"])
        claims_pass = any(tests.get(t) in PASSING for t in expected)
        for name, statuses in raw.items():
            found_evidence, found_mismatch = plan.evidence(statuses, claims_pass)
            evidence = evidence or (f"{name}: {found_evidence}" if found_evidence else None)
            mismatch = mismatch or found_mismatch
    if streamed is not None:
        records = swe_stream.read(log_path.read_text(errors="replace"), streamed[0])
        details["stream"] = swe_stream.note(records)
        found = swe_stream.evidence(records, raw, _relevant(plan, canaries, gold), streamed[1],
                                    streamed[2])  # fmt: skip
        evidence = evidence or (f"stream: {found}" if found else None)
    if evidence:
        details["tamper_evidence"] = evidence
    if mismatch:
        details["copy_mismatch"] = mismatch
    real = {t: s for t, s in tests.items() if not (canaries and canaries.owns(t))}
    error = "a copy of a passing test did not pass (see details)" if mismatch else None
    return Verdict(resolved and not evidence and not mismatch, tests=real, details=details,
                   tampered=bool(evidence), error=error)  # fmt: skip


def _relevant(plan: swe_copy_plan.CopyPlan | None, canaries: swe_guard.Canaries | None,
              gold: dict[str, list[str]]) -> Callable[[str], bool]:  # fmt: skip
    """Report keys (as the judge's run names them) that decide the verdict."""
    expected = set(gold["FAIL_TO_PASS"]) | set(gold["PASS_TO_PASS"])

    def relevant(key: str) -> bool:
        if plan is not None:
            mapped = plan.to_official({key: "PASSED"})
            return not mapped or bool(set(mapped) & expected)  # none: a copy
        return key in expected or (canaries is not None and canaries.owns(key))

    return relevant


def _tamper_evidence(
    canaries: swe_guard.Canaries | None, log_map: dict[str, str], junit: dict[str, str] | None,
    tests: dict[str, str], gold: dict[str, list[str]],
) -> str | None:  # fmt: skip
    if canaries is None:
        return None
    sources = {"log": log_map} | ({"report": junit} if junit is not None else {})
    expected = set(gold["FAIL_TO_PASS"]) | set(gold["PASS_TO_PASS"])
    claims_pass = any(tests.get(t) in PASSING for t in expected)
    for name, statuses in sources.items():
        evidence = canaries.evidence(statuses)
        if evidence and ("must-fail" in evidence or "must-pass" in evidence or claims_pass):
            return f"{name}: {evidence}"
    return None


def make_spec(task: Task) -> Any:
    from swebench.harness.utils import make_test_spec

    meta = task.meta
    return make_test_spec({**meta, "image": task.image, "version": meta.get("version", "")})
