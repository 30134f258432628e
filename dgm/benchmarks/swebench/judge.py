"""The SWE-bench judge: a fresh container of the instance image, the official eval script.

1. The model patch loses its hunks on files the judge owns (swe_guard), then is applied
   at /testbed the way the official harness does (git apply, --3way, --reject, patch).
2. The official eval script runs unchanged, except that just before its test command
   the judge appends two canary tests, named afresh, to each test file the command runs,
   and (pytest) asks pytest for a JUnit report at a path drawn afresh.
3. When the script ends, every process left in the container is killed, the report is
   copied out and parsed on the host as hostile input (size-capped, expat).
4. Per-test status = the instance's official `log_parser` on the log AND, for pytest,
   the JUnit report: a test passes only when both say so. A must-fail canary that passes,
   or canaries missing while tests report passing, is tampering: never resolved.
"""

from __future__ import annotations

import random
import re
import secrets
import shlex
import tempfile
from pathlib import Path
from typing import Any

from dgm.benchmarks.judging import readable_by_sandbox, xml_report_root
from dgm.benchmarks.swebench import copies as swe_copies
from dgm.benchmarks.swebench import copy_plan as swe_copy_plan
from dgm.benchmarks.swebench import guard as swe_guard
from dgm.benchmarks.task import Task, Verdict
from dgm.errors import DgmError
from dgm.sandbox import Mount, ResourceLimits, SandboxSpec, open_sandbox

REPO_DIR = "/testbed"
APPLY_FAILED = ">>>>> Patch Apply Failed"
_APPLY = (
    "git apply --verbose {p} || git apply --verbose --3way {p} || git apply --verbose --reject {p}"
    " || patch --batch --forward --fuzz=5 -p1 -i {p}"
)
_PYTEST = re.compile(r"(^|[\s/])(pytest|py\.test)(\s|$)|-m pytest")
PASSING = ("PASSED", "XFAIL")
MAX_REPORT_BYTES = 32 * 1024 * 1024
_RANK = {"PASSED": 0, "XFAIL": 1, "SKIPPED": 2, "FAILED": 3, "ERROR": 4}


def judge_script(eval_script: str, canaries: swe_guard.Canaries | None, report_dir: str,
                 pytest: bool, copied: dict[str, str] | None = None,
                 plugins: list[str] | None = None) -> str:  # fmt: skip
    """The eval script with the judge's lines before its test command: the test files
    with their copies put in place (or the fallback canaries appended), and for pytest
    entry-point plugins off (those the image installed named with `-p`) and a report."""
    inject = [f"mkdir -p {report_dir}"]
    for i, path in enumerate(copied or {}):
        inject.append(f"/bin/cp /stage/tests/{i}.py {shlex.quote(REPO_DIR + '/' + path)}")
    if canaries:
        inject += [f"cat /stage/canary.py >> {f}" for f in canaries.files]
    if pytest:
        options = [f"--junitxml={report_dir}/report.xml", "-o", "junit_family=xunit1"]
        options += [f"-p {p}" for p in plugins or []]
        inject.append("export PYTEST_DISABLE_PLUGIN_AUTOLOAD=1")
        inject.append(f"export PYTEST_ADDOPTS={shlex.quote(' '.join(options))}")
    mark = swe_guard.START_MARK
    if mark not in eval_script:
        raise DgmError("the instance's eval_script has no start-of-test-output marker")
    return eval_script.replace(mark, "\n".join(inject) + "\n" + mark, 1)


PREP_DIR = "/tmp/dgm-prep"
_PLUGINS = (
    "import importlib.metadata as m\n"
    "for d in m.distributions():\n"
    "    for e in d.entry_points:\n"
    "        if e.group == 'pytest11': print(e.value.split(':')[0].strip())\n"
)


def prepare_script(patch: str, base_commit: str, files: list[str]) -> str:
    """Before any code of the patch can run: apply it, and hand the host the test files
    at the base commit and the pytest plugins the image installed."""
    apply = _APPLY.format(p="/stage/patch.diff")
    lines = [f"cd {REPO_DIR} || exit 90"]
    if patch:
        lines.append(f"{{ {apply}; }} || {{ echo '{APPLY_FAILED}'; exit 1; }}")
    lines += ["echo '>>>>> Applied Patch'", f"mkdir -p {PREP_DIR}/files"]
    for i, path in enumerate(files):
        lines.append(
            f"git -c safe.directory='*' show {base_commit}:{shlex.quote(path)}"
            f" > {PREP_DIR}/files/{i}.py 2>/dev/null || rm -f {PREP_DIR}/files/{i}.py"
        )
    lines.append(
        f"( source /opt/miniconda3/bin/activate && conda activate testbed && python -I"
        f" -c {shlex.quote(_PLUGINS)} ) > {PREP_DIR}/plugins.txt 2>/dev/null"
    )
    return "\n".join(lines + ["exit 0"]) + "\n"


RUN_SCRIPT = "cd /testbed || exit 90\n/bin/bash /stage/eval.sh\nkill -9 -1 2>/dev/null\nexit 0\n"
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
    with tempfile.TemporaryDirectory(prefix="dgm-judge-") as tmp:
        stage = Path(tmp) / "stage"
        stage.mkdir()
        (stage / "patch.diff").write_text(kept)
        (stage / "prepare.sh").write_text(prepare_script(kept, str(meta["base_commit"]), files))
        (stage / "run.sh").write_text(RUN_SCRIPT)
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
        with open_sandbox(spec, backend) as box:
            prep = box.exec(["/bin/bash", "/stage/prepare.sh"], timeout=task.test_timeout_s)
            if APPLY_FAILED in prep.output or prep.timed_out or prep.exit_code != 0:
                result, junit = prep, None
            else:
                base, plugins = _prepared(box, Path(tmp), files)
                plan = _plan(task, files, base, 2 if extra_copies else 1)
                canaries = None if plan or not files else swe_guard.Canaries.draw(files)
                _stage_tests(stage, plan, canaries)
                script = judge_script(str(meta["eval_script"]), canaries, report_dir, pytest,
                                      plan.files if plan else None, plugins)  # fmt: skip
                (stage / "eval.sh").write_text(script)
                readable_by_sandbox(stage)
                result = box.exec(["/bin/bash", "/stage/run.sh"], timeout=task.test_timeout_s)
                junit = _copy_report(box, report_dir, Path(tmp)) if pytest else None
        log = prep.output + ("" if result is prep else result.output)
        log += "\n>>>>> Tests Timed Out\n" if result.timed_out else ""
        log_path = Path(tmp) / "test_output.txt"
        log_path.write_text(log)
        verdict = grade(task, log_path, junit if pytest else None, canaries, plan)
    details = dict(verdict.details)
    if dropped:
        details["dropped_hunks"] = dropped
    error = verdict.error
    if result.timed_out:
        error = f"the eval script was killed at the {task.test_timeout_s} s limit"
    elif APPLY_FAILED in log:
        error = "the model patch does not apply"
    seconds = prep.duration_s + (0 if result is prep else result.duration_s)
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
    if not sources or set(sources) != set(files):
        return None
    f2p, p2p = (list(task.meta.get(k) or []) for k in ("FAIL_TO_PASS", "PASS_TO_PASS"))
    rng = random.Random(secrets.randbits(64))
    return swe_copies.plan_copies(sources, f2p, p2p, rng, n_fail=3 * scale, n_pass=2 * scale)


def _stage_tests(stage: Path, plan: swe_copy_plan.CopyPlan | None,
                 canaries: swe_guard.Canaries | None) -> None:  # fmt: skip
    (stage / "tests").mkdir()
    for i, text in enumerate((plan.files if plan else {}).values()):
        (stage / "tests" / f"{i}.py").write_text(text)
    (stage / "canary.py").write_text(canaries.source() if canaries else "")


def _judge_env(task: Task) -> dict[str, str]:
    """The shallow /testbed has no tags, so setuptools_scm would version the eval script's
    reinstall 0.1.dev1 (pytest then fails its own `minversion`): give it the instance's."""
    version = str(task.meta.get("version") or "")
    # The base commit is the shallow root, so the scripts' `git show` would print the whole
    # tree (110,000 lines for sqlfluff) and push the test output out of the kept log.
    env = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "log.showRoot",
           "GIT_CONFIG_VALUE_0": "false"}  # fmt: skip
    return env | ({"SETUPTOOLS_SCM_PRETEND_VERSION": version} if version else {})


def _copy_report(box: Any, report_dir: str, tmp: Path) -> dict[str, str] | None:
    dest = tmp / "report"
    dest.mkdir()
    try:
        box.copy_out(report_dir, dest, max_bytes=MAX_REPORT_BYTES)
    except DgmError:
        return None
    found = dest / Path(report_dir).name / "report.xml"
    if not found.is_file() or found.is_symlink():
        return None
    return parse_junit(found.read_bytes())


def parse_junit(data: bytes) -> dict[str, str] | None:
    """JUnit XML (pytest xunit1) -> {node id: PASSED|FAILED|ERROR|SKIPPED|XFAIL}; None if bad."""
    root = xml_report_root(data, MAX_REPORT_BYTES)
    if root is None:
        return None
    tests: dict[str, str] = {}
    for case in root.iter("testcase"):
        node = node_id(case.get("file") or "", case.get("classname") or "", case.get("name") or "")
        tags = {child.tag for child in case}
        skipped = case.find("skipped")
        if "failure" in tags or "error" in tags:
            status = "ERROR" if "error" in tags and "failure" not in tags else "FAILED"
        elif skipped is not None:
            status = "XFAIL" if skipped.get("type") == "pytest.xfail" else "SKIPPED"
        else:
            status = "PASSED"
        # Keyed as the log parsers key a test: its id up to the first space (parametrised
        # ids with spaces are cut there in the official test lists too); the worst wins.
        key = node.split()[0] if node.strip() else node
        if _RANK[status] >= _RANK.get(tests.get(key, ""), -1):
            tests[key] = status
    return tests


def node_id(file: str, classname: str, name: str) -> str:
    """pytest's node id from xunit1 attributes: file, dotted module.Class, test name."""
    module = file.removesuffix(".py").replace("/", ".")
    rest = classname[len(module) + 1 :] if classname.startswith(module + ".") else ""
    if not file:
        parts = classname.split(".")
        return "::".join(parts + [name])
    return "::".join([file, *[p for p in rest.split(".") if p], name])


def grade(
    task: Task, log_path: Path, junit: dict[str, str] | None,
    canaries: swe_guard.Canaries | None, plan: swe_copy_plan.CopyPlan | None = None,
) -> Verdict:  # fmt: skip
    """The official grading on the combined per-test statuses, with the canary checks."""
    from swebench.harness.constants import ResolvedStatus
    from swebench.harness.grading import (
        EvalType,
        get_eval_tests_report,
        get_logs_eval,
        get_resolution_status,
    )

    spec = make_spec(task)
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
    if evidence:
        details["tamper_evidence"] = evidence
    if mismatch:
        details["copy_mismatch"] = mismatch
    real = {t: s for t, s in tests.items() if not (canaries and canaries.prefix in t)}
    error = "a copy of a passing test did not pass (see details)" if mismatch else None
    return Verdict(resolved and not evidence and not mismatch, tests=real, details=details,
                   tampered=bool(evidence), error=error)  # fmt: skip


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
