"""The Polyglot judge's grading without Docker: expected tests, canaries, report parsers,
the verdict rules, the allowlist's Cargo.toml rule. Real exercises from the checkout."""

from __future__ import annotations

import base64
import importlib.util
import json
import re
from pathlib import Path

import pytest

from dgm.benchmarks.polyglot import canaries as polyglot_canaries
from dgm.benchmarks.polyglot import loader as polyglot
from dgm.benchmarks.polyglot import reports as polyglot_reports
from dgm.benchmarks.polyglot.canaries import Canary
from dgm.benchmarks.polyglot.copies import MUST_FAIL
from dgm.benchmarks.polyglot.judge import JudgePlan, prepare_judge_tree, verdict_from
from dgm.sandbox.spec import ExecResult
from dgm.store import Evaluation

from .judged_files import judged_files

LANGS = ("python", "go", "rust", "cpp", "java", "javascript")
NO_TESTS = {"go__counter"}


def _prep_module():  # noqa: ANN202 - the in-container script, loaded as a module
    path = Path(polyglot.__file__).with_name("judge_prep.py")
    spec = importlib.util.spec_from_file_location("judge_prep", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.mark.parametrize("language", LANGS)
def test_every_exercise_has_expected_tests_and_canaries(
    language: str, polyglot_dir: Path, tmp_path: Path
) -> None:
    bench = polyglot.PolyglotTasks(polyglot_dir)
    for task in bench.tasks(language):
        plan = prepare_judge_tree(task, tmp_path / task.id)
        if task.id in NO_TESTS:  # the exercise asks for tests: zero tests, never resolved
            assert plan.expected == [] and plan.canaries == []
            continue
        assert plan.expected, task.id
        # Must-fail checks: copies of real tests, or (files without) literal canaries.
        fails = [c for c in plan.canaries if c.must_fail]
        assert fails or any(e.kind == MUST_FAIL for e in plan.entries), task.id
        assert not plan.canaries or (fails and len(fails) < len(plan.canaries)), task.id
        names = {c.name for c in plan.canaries}
        assert not names & set(plan.expected)
        judge_tests = "".join(p.read_text() for p in judged_files(task, tmp_path / task.id))
        # The canaries are in the judge's test files, as tests the same reader finds.
        found = polyglot_canaries.expected_tests(language, judge_tests)
        assert {c.report_key for c in plan.canaries} <= set(found), task.id


def test_canary_names_follow_the_files_style_and_change_every_time() -> None:
    text = "class T(unittest.TestCase):\n    def test_encode_yes(self):\n        pass\n"
    a = polyglot_canaries.draw_names("python", ["test_encode_yes", "test_decode_no"], 5)
    b = polyglot_canaries.draw_names("python", ["test_encode_yes", "test_decode_no"], 5)
    assert a != b and all(re.fullmatch(r"test_[a-z_]+", n) for n in a)
    assert polyglot_canaries.draw_names("go", ["TestAnswer"], 1)[0].startswith("Test")
    new, canaries = polyglot_canaries.add_canaries("python", text)
    assert all(f"def {c.name}(self)" in new for c in canaries)


def _result(output: str, exit_code: int = 0, **kw: object) -> ExecResult:
    return ExecResult(exit_code, output, **kw)  # type: ignore[arg-type]


def _output(test_exit: int, reports: dict[str, str], log: str = "") -> str:
    lines = [log, f">>>>> dgm judge: tests exited {test_exit} after 1.000 s"]
    for name, text in reports.items():
        lines.append(f">>>>> dgm judge report {name} {base64.b64encode(text.encode()).decode()}")
    lines.append(f">>>>> dgm judge: end of reports ({len(reports)})")
    return "\n".join(lines) + "\n"


def _junit(cases: dict[str, str]) -> str:
    body = "".join(
        f'<testcase classname="x.global" name="{n}">'
        + ("<failure/>" if s == "FAILED" else "")
        + "</testcase>"
        for n, s in cases.items()
    )
    return f"<testsuites><testsuite>{body}</testsuite></testsuites>"


PLAN = JudgePlan(
    "cpp",
    expected=["adds", "subtracts"],
    canaries=[Canary("small value", True, "REQUIRE"), Canary("edge zero", False, "REQUIRE")],
)
TASK = polyglot.Task("cpp__x", "polyglot", "cpp", "", "", "", "", 60, "/nowhere")


def _verdict(output: str, exit_code: int = 0, **kw: object):  # noqa: ANN202
    return verdict_from(_result(output, exit_code, **kw), TASK, PLAN)


def test_all_expected_passing_with_canaries_behaving_is_resolved() -> None:
    cases = {"adds": "PASSED", "subtracts": "PASSED", "small value": "FAILED",
             "edge zero": "PASSED"}  # fmt: skip
    verdict = _verdict(_output(1, {"report.xml": _junit(cases)}))
    assert verdict.resolved and not verdict.tampered
    assert verdict.tests == {"adds": "PASSED", "subtracts": "PASSED"}  # canaries left out


@pytest.mark.parametrize(
    ("cases", "why"),
    [
        ({"adds": "PASSED", "small value": "FAILED", "edge zero": "PASSED"}, "missing"),
        ({}, "missing"),
        (
            {
                "adds": "PASSED",
                "subtracts": "FAILED",
                "small value": "FAILED",
                "edge zero": "PASSED",
            },
            None,
        ),  # fmt: skip
        (
            {
                "adds": "PASSED",
                "subtracts": "PASSED",
                "other": "FAILED",
                "small value": "FAILED",
                "edge zero": "PASSED",
            },
            None,
        ),  # fmt: skip
    ],
)
def test_missing_failing_or_extra_failing_tests_are_not_resolved(cases, why) -> None:  # noqa: ANN001
    verdict = _verdict(_output(1, {"report.xml": _junit(cases)}))
    assert not verdict.resolved and not verdict.tampered
    assert (why or "") in (verdict.error or "")


@pytest.mark.parametrize(
    ("output", "exit_code", "kw", "why"),
    [
        (_output(1, {}), 0, {}, "no per-test report"),
        (_output(1, {"report.xml": "<testsuites><testsuite>"}), 0, {}, "no per-test report"),
        (
            _output(1, {"report.xml": '<!DOCTYPE x [<!ENTITY a "b">]><testsuites/>'}),
            0,
            {},
            "no per-test report",
        ),  # fmt: skip
        ("everything PASSED\n", 0, {}, "did not finish normally"),
        (_output(1, {"report.xml": _junit({"adds": "PASSED"})}), 137, {}, "did not finish"),
        (_output(-11, {}), 0, {}, "killed by signal 11"),
        (_output(139, {}), 0, {}, "killed by signal 11"),
        ("", 137, {"timed_out": True}, "killed at the 60 s limit"),
        ("", 137, {"oom_killed": True}, "ran out of memory"),
    ],
)
def test_abnormal_ends_and_bad_reports_are_not_resolved(output, exit_code, kw, why) -> None:  # noqa: ANN001
    verdict = _verdict(output, exit_code, **kw)
    assert not verdict.resolved and why in verdict.error


@pytest.mark.parametrize(
    ("cases", "test_exit", "evidence"),
    [
        (
            {
                "adds": "PASSED",
                "subtracts": "PASSED",
                "small value": "PASSED",
                "edge zero": "PASSED",
            },
            0,
            "must-fail canary 'small value'",
        ),  # fmt: skip
        ({"adds": "PASSED", "subtracts": "PASSED"}, 0, "missing from the report"),
        (
            {
                "adds": "PASSED",
                "subtracts": "PASSED",
                "small value": "FAILED",
                "edge zero": "FAILED",
            },
            1,
            "must-pass canary",
        ),  # fmt: skip
        (
            {
                "adds": "PASSED",
                "subtracts": "PASSED",
                "small value": "FAILED",
                "edge zero": "PASSED",
            },
            0,
            "exit was forced",
        ),  # fmt: skip
    ],
)
def test_canaries_going_the_wrong_way_is_tampering(cases, test_exit, evidence) -> None:  # noqa: ANN001
    verdict = _verdict(_output(test_exit, {"report.xml": _junit(cases)}))
    assert verdict.tampered and not verdict.resolved
    assert evidence in verdict.details["tamper_evidence"]


def test_a_broken_build_is_not_tampering() -> None:
    verdict = _verdict(_output(2, {}, log="error: expected ';'"))
    assert not verdict.resolved and not verdict.tampered


def test_python_needs_the_report_and_the_log_to_agree() -> None:
    xml = ('<testsuites><testsuite><testcase classname="m_test.T" name="test_a"/>'
           '<testcase classname="m_test.T" name="test_b"/></testsuite></testsuites>')  # fmt: skip
    log = "PASSED m_test.py::T::test_a\nFAILED m_test.py::T::test_b - assert\n"
    reports = {"report.xml": xml.encode(), polyglot_reports.RESULTS: log.encode()}
    tests, details = polyglot_reports.per_test("python", reports)
    assert tests == {"T.test_a": "PASSED", "T.test_b": "FAILED"}
    assert "T.test_b" in details["report_vs_log"]


def test_log_parsers_key_tests_like_the_source_reader() -> None:
    go = "=== RUN   TestA\n--- PASS: TestA (0.00s)\n    --- FAIL: TestA/x (0.00s)\n"
    assert polyglot_reports.parse_go_log(go) == {"TestA": "PASSED", "TestA/x": "FAILED"}
    rust = "test m::a ... ok\ntest b ... FAILED\ntest result: FAILED. 1 passed\n"
    assert polyglot_reports.parse_rust_log(rust) == {"a": "PASSED", "b": "FAILED"}
    jest = b'{"testResults":[{"assertionResults":[{"title":"t","status":"passed"}]}]}'
    assert polyglot_reports.parse_jest(jest) == {"t": "PASSED"}
    assert polyglot_reports.parse_jest(b'{"testResults": 3}') is None


def test_cargo_toml_keeps_only_plain_dependencies() -> None:
    prep = _prep_module()
    pristine = '[package]\nname = "x"\nversion = "0.1.0"\n'
    agent = (b'[package]\nname = "x"\nbuild = "build.rs"\n[dependencies]\nrand = "0.8"\n'
             b'evil = { path = "/etc" }\nfast = { version = "1", features = ["a"] }\n'
             b'[[test]]\nname = "x"\nharness = false\n')  # fmt: skip
    text, why = prep.rust_prep.cargo_toml(pristine, agent)
    assert "build" not in text and "harness" not in text and "evil" not in text
    assert 'rand = "0.8"' in text and "fast = { version" in text and "evil" in why


def test_allowlist_takes_solution_files_and_the_languages_new_files(tmp_path: Path) -> None:
    prep = _prep_module()
    (tmp_path / "lib.go").write_text("package x\n")
    plan = {"solution": ["x.go"], "new_files": [r"[a-z_]+(?<!_test)\.go"]}
    assert prep.allowed(plan, "x.go", str(tmp_path)) is None
    assert prep.allowed(plan, "helper.go", str(tmp_path)) is None
    assert prep.allowed(plan, "helper_test.go", str(tmp_path)) == "not a solution file"
    assert prep.allowed(plan, "lib.go", str(tmp_path)) == "the judge's own file"
    assert prep.allowed(plan, "go.work", str(tmp_path)) == "not a solution file"
    assert prep.package_of("java", b"// package evil;\npackage org.assertj.core.api;\n") == (
        "org.assertj.core.api"
    )


def test_report_lines_printed_by_the_tests_are_not_read() -> None:
    cases = {"adds": "PASSED", "subtracts": "PASSED", "small value": "FAILED",
             "edge zero": "PASSED"}  # fmt: skip
    forged = _output(1, {"report.xml": _junit(cases)})  # printed by the tests
    verdict = _verdict(forged + _output(1, {}))  # then judge_prep's own last lines
    assert not verdict.resolved and "no per-test report" in verdict.error


def test_the_eval_job_records_tampering_and_the_canary_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dgm.benchmarks.polyglot import Polyglot
    from dgm.jobs import evaluate
    from dgm.jobs.agent_run import AgentRunResult

    cases = {"adds": "PASSED", "subtracts": "PASSED", "small value": "PASSED",
             "edge zero": "PASSED"}  # fmt: skip
    verdict = _verdict(_output(0, {"report.xml": _junit(cases)}))
    assert verdict.tampered and set(verdict.details["canaries"]) == {"small value", "edge zero"}
    # The containers stood in for: the agent writes a patch, the judge returns this verdict.
    patch = "diff --git a/x.cpp b/x.cpp\n"
    monkeypatch.setattr(Polyglot, "prepare_workspace", lambda self, task, dest: "base")
    monkeypatch.setattr(
        evaluate, "run_agent", lambda *a, **k: AgentRunResult(patch, 0, False, 0.5, "done", None)
    )
    monkeypatch.setattr(Polyglot, "judge", lambda *a, **k: (verdict, "log"))  # fmt: skip
    task = polyglot.Task("cpp__x", "polyglot", "cpp", "", "", "", "", 60, "/nowhere")
    job = evaluate.EvalJob(evaluate.AgentRef(str(tmp_path)), task, str(tmp_path / "log"), node_id=3)
    outcome = evaluate.evaluate_task(job)
    # What the job returns is the store's record, as it is written to result.json.
    assert (outcome.node_id, outcome.task_id, outcome.language) == (3, "cpp__x", "cpp")
    assert not outcome.resolved and outcome.tampered
    assert "must-fail canary" in outcome.details["tamper_evidence"]
    assert set(outcome.details["canaries"]) == {"small value", "edge zero"}
    saved = (tmp_path / "log" / "result.json").read_text()
    assert Evaluation.from_dict(json.loads(saved)) == outcome


def test_zero_expected_tests_is_never_resolved() -> None:
    empty = JudgePlan("go")
    task = polyglot.Task("go__x", "polyglot", "go", "", "", "", "", 60, "/nowhere")
    output = _output(0, {"results.log": ""}, log="ok  \tx\t0.01s [no tests to run]\nPASS\n")
    verdict = verdict_from(_result(output), task, empty)
    assert not verdict.resolved and "define no tests" in verdict.error


def test_rust_tests_behind_a_feature_are_not_expected_and_get_no_canary() -> None:
    text = (
        "use x::Y;\n\n#[test]\nfn plain() {\n    assert_eq!(1, 1);\n}\n\n"
        '#[cfg(feature = "io")]\nmod io {\n    #[test]\n    fn gated() {\n'
        '        let s = "}";\n        assert_eq!(s, "}");\n    }\n}\n\n'
        '#[cfg(feature = "big")]\n#[test]\n#[ignore]\nfn gated_too() {\n    assert!(true);\n}\n'
    )
    assert polyglot_canaries.expected_tests("rust", text) == ["plain"]
    for _ in range(20):
        new, canaries = polyglot_canaries.add_canaries("rust", text)
        built = polyglot_canaries.without_feature_gated(new)
        assert canaries and all(f"fn {c.name}()" in built for c in canaries)


def test_cpp_tests_behind_a_macro_the_build_leaves_undefined_are_not_expected() -> None:
    text = (
        '#if defined(EXERCISM_RUN_ALL_TESTS)\nTEST_CASE("runs") {\n    REQUIRE(1 == 1);\n}\n'
        '#endif\n#if defined(EXERCISM_INCLUDE_BENCHMARK)\nTEST_CASE("benchmark") {\n'
        '#ifdef X\n#endif\n    BENCHMARK("b") { return 1; };\n}\n#endif\n'
    )
    assert polyglot_canaries.expected_tests("cpp", text) == ["runs"]
    for _ in range(20):
        new, canaries = polyglot_canaries.add_canaries("cpp", text)
        built = polyglot_canaries.without_feature_gated(new, "cpp")
        assert canaries and all(f'TEST_CASE("{c.name}")' in built for c in canaries)
