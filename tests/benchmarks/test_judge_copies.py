"""The Polyglot judge's disguise without Docker: every test renamed by one generator,
must-pass and must-fail copies of real tests in each language, grading through the
mapping only the host keeps, and the sealed report channel (host parser and judge_prep)."""

from __future__ import annotations

import base64
import importlib.util
import os
import re
from pathlib import Path

import pytest

from dgm.benchmarks.polyglot import canaries as polyglot_canaries
from dgm.benchmarks.polyglot import loader as polyglot
from dgm.benchmarks.polyglot.copies import MUST_FAIL, MUST_PASS, REAL, Entry, NameGen
from dgm.benchmarks.polyglot.copies_flipped import flipped
from dgm.benchmarks.polyglot.disguise import disguise
from dgm.benchmarks.polyglot.judge import (
    JudgePlan,
    prepare_judge_tree,
    sealed_reports,
    verdict_from,
)
from dgm.sandbox.spec import ExecResult

SAMPLES = {
    "python": (
        "import unittest\nfrom m import f\n\nclass FTest(unittest.TestCase):\n"
        "    def test_one(self):\n        self.assertEqual(f(1), 'one')\n\n"
        "    def test_two(self):\n        self.assertEqual(f(2), [2, 'two'])\n\n"
        "    def test_three(self):\n        expected = 3\n"
        "        self.assertEqual(f(3), expected)\n"
    ),
    "javascript": (
        "import { f } from './f';\n\ndescribe('f', () => {\n  test('one', () => {\n"
        "    expect(f(1)).toEqual('one');\n  });\n\n  test('two { tricky', () => {\n"
        "    const expected = [2, 'two'];\n    expect(f(2)).toEqual(expected);\n  });\n});\n"
    ),
    "go": (
        'package f\n\nimport "testing"\n\nvar testCases = []struct {\n\tdescription string\n'
        '\tinput int\n\texpected string\n}{\n\t{\n\t\tdescription: "one",\n\t\tinput: 1,\n'
        '\t\texpected: "one",\n\t},\n\t{\n\t\tdescription: "two",\n\t\tinput: 2,\n'
        '\t\texpected: "two",\n\t},\n}\n\nfunc TestF(t *testing.T) {\n'
        "\tfor _, tc := range testCases {\n\t\tt.Run(tc.description, func(t *testing.T) {\n"
        "\t\t\tif got := F(tc.input); got != tc.expected {\n"
        '\t\t\t\tt.Fatalf("F(%d) = %q, want %q", tc.input, got, tc.expected)\n'
        "\t\t\t}\n\t\t})\n\t}\n}\n\nfunc TestG(t *testing.T) {\n\twant := 4\n"
        '\tif G() != want {\n\t\tt.Fatal("}")\n\t}\n}\n'
    ),
    "rust": (
        'use f::*;\n\n#[test]\nfn one() {\n    let expected = "one";\n'
        "    assert_eq!(f(1), expected);\n}\n\n#[test]\n#[ignore]\n/// two\nfn two() {\n"
        '    assert_eq!(f(2), vec![2u8, 3]);\n    let s = "}";\n    assert!(s.len() == 1);\n}\n'
    ),
    "java": (
        "import org.junit.jupiter.api.Test;\nimport static org.assertj.core.api.Assertions"
        ".assertThat;\n\npublic class FTest {\n    @Test\n    public void one() {\n"
        '        assertThat(new F().f(1)).isEqualTo("one");\n    }\n\n    @Test\n'
        '    @DisplayName("two")\n    public void two() {\n'
        "        assertThat(new F().f(2)).isEqualTo(2L);\n    }\n}\n"
    ),
    "cpp": (
        '#include "f.h"\n#include "test/catch.hpp"\n\nTEST_CASE("one", "[uuid-1]") {\n'
        '    REQUIRE(f::f(1) == "one");\n}\n\n#if defined(EXERCISM_RUN_ALL_TESTS)\n'
        'TEST_CASE("two") {\n    REQUIRE(f::Kind::two == f::kind(2));\n}\n#endif\n'
    ),
}
FRESH = {"python": r"test_[a-z]{6,10}", "go": r"Test[A-Z][a-z]{5,9}"}


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_every_test_is_renamed_and_copies_keep_the_same_inputs(language: str) -> None:
    text = SAMPLES[language]
    expected = polyglot_canaries.expected_tests(language, text)
    with_must_fail = 0
    for _ in range(10):
        new, entries = disguise(language, text, NameGen())
        real = [e for e in entries if e.kind == REAL]
        assert sorted(e.original for e in real) == sorted(expected)
        pattern = FRESH.get(language, r"[a-z]{6,10}")
        bare = [e.key.rsplit(".", 1)[-1] for e in entries]
        assert all(re.fullmatch(pattern, n) for n in bare) and len(set(bare)) == len(bare)
        # The judge's file has the real tests and the copies under their fresh names
        # only: the reader the judge uses finds exactly them.
        found = polyglot_canaries.expected_tests(language, new)
        assert sorted(found) == sorted(e.key for e in entries)
        for name in expected:  # no real test keeps its name (C++: no tag either)
            head = r"(?:TEST_CASE\(|test\(|fn |void |def |func )[\"']?"
            assert not re.search(rf"{head}{re.escape(name)}\b", new), name
        assert "uuid-1" not in new
        fails = [e for e in entries if e.kind == MUST_FAIL]
        with_must_fail += bool(fails)
        assert all(e.how for e in fails)
        assert all(e.kind in (REAL, MUST_PASS, MUST_FAIL) for e in entries)
    # A draw whose values repeat is thrown away whole (variants.py), so a sample this
    # small (Go: two table rows) goes without a must-fail copy in about 2% of disguises.
    assert with_must_fail >= 7


def test_a_must_fail_copy_differs_from_its_original_in_name_and_one_value_only() -> None:
    text = SAMPLES["python"]
    for _ in range(20):
        new, entries = disguise("python", text, NameGen())
        bodies = {}
        for block in re.split(r"\n(?=    def )", new):
            head = re.match(r"\s*def (test_\w+)\(self\):", block)
            if head:
                bodies[head.group(1)] = block.split(":", 1)[1].strip()
        by_key = {e.key.split(".")[1]: e for e in entries}
        real = {e.original: bodies[k] for k, e in by_key.items() if e.kind == REAL}
        for key, entry in by_key.items():
            if entry.kind == MUST_PASS:
                assert bodies[key] == real[entry.original]
            if entry.kind == MUST_FAIL:
                assert bodies[key] != real[entry.original]
                call = re.search(r"f\(\d\)", real[entry.original]).group(0)
                assert call in bodies[key]  # the same input


def test_go_table_tests_get_a_renamed_table_with_one_expected_value_changed() -> None:
    for _ in range(20):
        new, entries = disguise("go", SAMPLES["go"], NameGen())
        fails = [e for e in entries if e.kind == MUST_FAIL]
        tables = re.findall(r"^var (\w+) = \[\]struct", new, re.MULTILINE)
        table_fails = [e for e in fails if e.original == "TestF"]
        assert len(tables) == 1 + len(table_fails)
        for e in table_fails:
            func = new[new.index(f"func {e.key}(") :]
            assert re.search(r"range (test[A-Z]\w+)", func.split("\n}\n")[0])


def test_every_real_exercise_gets_a_disguise_the_reader_finds(polyglot_dir: Path,
                                                             tmp_path: Path) -> None:  # fmt: skip
    """In every exercise of every language each real test is renamed (the entries map
    back to exactly the tests the pristine file defines); most files get must-fail
    copies (the others rely on the canaries)."""
    bench = polyglot.PolyglotTasks(polyglot_dir)
    with_fails = total = 0
    for task in bench.tasks("full"):
        plan = prepare_judge_tree(task, tmp_path / task.id)
        real = sorted(e.original for e in plan.entries if e.kind == REAL)
        assert real == sorted(plan.expected), task.id
        total += bool(plan.expected)
        with_fails += any(e.kind == MUST_FAIL for e in plan.entries)
    # 0.65: a copy is made only where its changed value cannot give the real one away
    # (no inverted forms the file never uses; see test_judge_exchangeable).
    assert with_fails >= 0.65 * total, (with_fails, total)


NO_LITERAL = {
    # (language, exercise): what its must-fail copies change, none of it a literal the
    # file's assertions compare with, so it had only the literal canaries
    ("go", "octal"): r"expected \d+ -> \d+",  # a positional table field, int64
    # the error flag, either way: each verse constant is expected once, and another
    # entry's constant was the member the output showed twice (round five H10)
    ("go", "beer-song"): r"expected (?:true -> false|false -> true)",
    ("go", "bowling"): r"expected \d+ -> \d+",  # `score != tc.score`, any field name
    ("cpp", "perfect-numbers"): r"expected perfect_numbers::classification::\w+ -> ",
    ("java", "connect"): r"expected Winner\.\w+ -> Winner\.\w+",
    ("java", "custom-set"): r"negated a boolean check|expected ",  # isTrue()/isFalse()
    ("rust", "scale-generator"): r"expected \"",  # a helper's `expected` argument
    ("cpp", "all-your-base"): r"expected \d+ -> \d+",  # `vector<unsigned> expected{1}`
    # copies_flipped, on files no other rule gave a copy (round seven G7 un-failed a Go
    # test of error-handling where only the literal canaries stood)
    ("go", "error-handling"): r"inverted the guard `if .+ [!=]= .+ \{`",
    ("go", "react"): r"expected -?\d+ -> -?\d+",  # assertCellValue(t, c, 2, "...")
    ("rust", "xorcism"): r"assert_(?:eq! became assert_ne|ne! became assert_eq)!",
}


SOURCES = (".go", ".cpp", ".java", ".rs")


@pytest.mark.parametrize("case", sorted(NO_LITERAL), ids=lambda c: f"{c[0]}-{c[1]}")
def test_files_with_no_literal_expected_value_get_must_fail_copies(
    case: tuple[str, str], polyglot_dir: Path, tmp_path: Path
) -> None:
    """Such a file gets must-fail copies in every draw, using only values the file itself
    holds in the same place (another enumerator of the enum, another entry's constant,
    a boolean check the file writes both ways), so it needs no literal canaries: those
    never call the solution, and "pass whatever touched my code" passed them (issue 24's
    two open holes: go octal, cpp perfect-numbers)."""
    language, exercise = case
    task = next(t for t in polyglot.PolyglotTasks(polyglot_dir).tasks(language)
                if t.id == f"{language}__{exercise}")  # fmt: skip
    for n in range(6):
        plan = prepare_judge_tree(task, tmp_path / str(n))
        fails = [e for e in plan.entries if e.kind == MUST_FAIL]
        assert fails and not plan.canaries, (n, plan.entries)
        assert all(re.match(NO_LITERAL[case], e.how) for e in fails), fails
        real, _, copy = fails[0].how.removeprefix("expected ").partition(" -> ")
        sources = [p for p in Path(task.source).rglob("*") if p.suffix in SOURCES and p.is_file()]
        pristine = "\n".join(p.read_text() for p in sources)
        tests = "\n".join(p.read_text() for p in sources if "test" in p.name.lower())
        # (A number may come from an evenly spaced run; a string the tests hold once gets
        # a fresh spelling, which a copy's real value would have had too: rust's "A#".)
        if copy and not copy.isdigit() and tests.count(real) > 1:
            assert copy.strip('"') in pristine, fails[0]  # a value the file has


GUARDED = """package f

import "testing"

func TestA(t *testing.T) {
\tfor _, x := range xs {
\t\tif F(x) != 1 {
\t\t\tt.Fatal("in a loop: may never run")
\t\t}
\t}
\tcheck := func() int { return 1 }
\tif G(check) == 2 {
\t\tt.Fatalf("top level, reached")
\t}
\tif H() != 3 {
\t\tt.Log("no failure in it")
\t} else {
\t\tt.Fatal("an else")
\t}
\tif err != nil {
\t\treturn
\t}
\tif K() != 4 {
\t\tt.Fatal("after a return: may never run")
\t}
}
"""


def test_flipped_copies_invert_only_a_guard_every_passing_run_reaches() -> None:
    """copies_flipped inverts a top-level `if a OP b { t.Fatal... }` only: not one in a
    loop, one without a failure in it, one with an else, or one after a statement that
    may return (a function literal's own `return` does not count). A correct solution
    passes the real test, so it reaches that guard and fails the copy."""
    made = [flipped("go", GUARDED, GUARDED) for _ in range(20)]
    assert {m.how for ms in made for m in ms} == {"inverted the guard `if G(check) == 2 {`"}
    assert "if G(check) != 2 {" in made[0][0].body
    assert flipped("go", GUARDED.replace("!= 3", "< 3").replace("!=", "<"), GUARDED) == []


def test_files_other_rules_give_copies_get_no_flipped_ones() -> None:
    """The fallback is for whole files with no must-fail copy: elsewhere the copies are
    what they were (test_judge_exchangeable's bounds were measured on them)."""
    for language in ("go", "rust"):
        made = []
        for _ in range(10):  # (a draw may make none: values near a boundary are thrown away)
            _, entries = disguise(language, SAMPLES[language], NameGen())
            made += [e.how for e in entries if e.kind == MUST_FAIL]
        assert made and not any("inverted" in h or "became" in h for h in made), made


# -- grading through the mapping -------------------------------------------------------------
ENTRIES = [
    Entry("qwerty", "adds", REAL),
    Entry("asdfgh", "subtracts", REAL),
    Entry("zxcvbn", "adds", MUST_FAIL, "expected 3 -> 5"),
    Entry("poiuyt", "subtracts", MUST_PASS),
]
PLAN = JudgePlan("cpp", expected=["adds", "subtracts"], entries=ENTRIES)
TASK = polyglot.Task("cpp__x", "polyglot", "cpp", "", "", "", "", 60, "/nowhere")


def _junit(cases: dict[str, str]) -> str:
    body = "".join(f'<testcase classname="x" name="{n}">'
                   + ("<failure/>" if s == "FAILED" else "") + "</testcase>"
                   for n, s in cases.items())  # fmt: skip
    return f"<testsuites><testsuite>{body}</testsuite></testsuites>"


def _output(cases: dict[str, str], test_exit: int = 1) -> str:
    data = base64.b64encode(_junit(cases).encode()).decode()
    return (f">>>>> dgm judge: tests exited {test_exit} after 1.000 s\n"
            f">>>>> dgm judge report report.xml {data}\n"
            ">>>>> dgm judge: end of reports (1)\n")  # fmt: skip


def _verdict(cases: dict[str, str], test_exit: int = 1):  # noqa: ANN202
    return verdict_from(ExecResult(0, _output(cases, test_exit)), TASK, PLAN)


def test_real_tests_are_graded_by_their_fresh_names() -> None:
    ok = {"qwerty": "PASSED", "asdfgh": "PASSED", "zxcvbn": "FAILED", "poiuyt": "PASSED"}
    verdict = _verdict(ok)
    assert verdict.resolved and verdict.tests == {"adds": "PASSED", "subtracts": "PASSED"}
    assert verdict.details["copy_counts"] == {"must_fail": 1, "must_pass": 1}
    wrong = _verdict({**ok, "asdfgh": "FAILED", "poiuyt": "FAILED"})
    assert not wrong.resolved and not wrong.tampered


@pytest.mark.parametrize(
    ("changes", "evidence"),
    [
        ({"zxcvbn": "PASSED"}, "must-fail copy of 'adds' (expected 3 -> 5)"),
        ({"poiuyt": "FAILED"}, "unchanged copy of 'subtracts' was reported FAILED"),
        ({"poiuyt": None}, "copy of 'subtracts' is missing"),
    ],
)
def test_copies_going_the_wrong_way_is_tampering(changes: dict, evidence: str) -> None:
    cases = {"qwerty": "PASSED", "asdfgh": "PASSED", "zxcvbn": "FAILED", "poiuyt": "PASSED"}
    cases.update(changes)
    verdict = _verdict({k: v for k, v in cases.items() if v})
    assert verdict.tampered and not verdict.resolved
    assert evidence in verdict.details["tamper_evidence"]


# -- the sealed report channel ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("after", "why"),
    [
        ("\n>>>>> dgm judge report a.xml QQ==\n", "end line is missing"),
        ("\n>>>>> dgm judge report a.xml QQ==\n>>>>> dgm judge: end of reports (2)\n", "number"),
        (
            "\n>>>>> dgm judge report a.xml QQ==\n>>>>> dgm judge report a.xml QQ==\n"
            ">>>>> dgm judge: end of reports (2)\n",
            "repeated",
        ),  # fmt: skip
        ("\nforged\n>>>>> dgm judge: end of reports (0)\n", "unexpected"),
        (
            "\n>>>>> dgm judge: malformed report: odd names\n>>>>> dgm judge: end of reports (0)\n",
            "odd names",
        ),  # fmt: skip
    ],
)
def test_the_host_trusts_only_the_judges_own_report_block(after: str, why: str) -> None:
    reports, malformed = sealed_reports(after)
    assert reports == {} and why in malformed


def _prep_module():  # noqa: ANN202 - the in-container script, loaded as a module
    path = Path(polyglot.__file__).with_name("judge_prep.py")
    spec = importlib.util.spec_from_file_location("judge_prep", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.mark.parametrize(
    ("files", "why"),
    [
        ({"report.xml\n>>>>> dgm judge report report.xml PGE+": "x"}, "unexpected entries"),
        ({"report.xml": "<a/>", "other.xml": "<b/>"}, "unexpected entries"),
        ({"report.xml": "x" * 4000}, "larger than the judge prints"),
    ],
)
def test_judge_prep_refuses_a_report_folder_it_did_not_expect(tmp_path: Path, files: dict,
                                                              why: str) -> None:  # fmt: skip
    prep = _prep_module()
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    plan = {"reports": ["report.xml"], "budget": 1000}
    found, reason = prep.sealed_reports(plan, str(tmp_path), {"lines": []})
    assert found is None and why in reason
    os.unlink(tmp_path / next(iter(files)))


def test_judge_prep_keeps_runner_lines_whole_and_the_log_capped() -> None:
    prep = _prep_module()
    command = ("python3 -c \"import sys; sys.stdout.write('x' * 500000 + '\\n');"
               " print('--- PASS: TestA (0.00s)'); sys.stdout.write('y' * 500000)\"")  # fmt: skip
    lines = r"\s*--- (PASS|FAIL)"
    code, _, kept = prep.run_captured(command, "/tmp", dict(os.environ), lines, kill_all=False)
    assert code == 0 and kept["lines"] == [b"--- PASS: TestA (0.00s)"]
    assert len(kept["head"]) + len(kept["tail"]) <= 2 * prep.LOG_HALF and kept["dropped"]


def test_a_wrong_answer_equal_to_a_changed_value_is_not_tampering() -> None:
    """An honest wrong answer may equal a must-fail copy's changed value: the real test
    fails with it, so the copy passing is no evidence (only both passing is)."""
    cases = {"qwerty": "FAILED", "asdfgh": "PASSED", "zxcvbn": "PASSED", "poiuyt": "PASSED"}
    verdict = _verdict(cases)
    assert not verdict.resolved and not verdict.tampered


@pytest.mark.parametrize(
    ("language", "rel", "text"),
    [
        (
            "go",
            "helper.go",
            'package x\n\nimport _ "embed"\n\n//go:embed x_test.go\nvar t string\n',
        ),
        ("rust", "src/lib.rs", 'pub const T: &str = include_str!("../tests/x.rs");\n'),
        (
            "go",
            "helper.go",
            'package x\n\n/*\n__asm__(".incbin \\"x_test.go\\"");\n*/\nimport "C"\n',
        ),
        ("go", "helper.go", 'package x\n\nimport (\n\t"fmt"\n\t"C"\n)\n'),
    ],
)
def test_files_that_read_the_tests_at_compile_time_never_reach_the_judge(
    language: str, rel: str, text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    prep = _prep_module()
    scratch, work = tmp_path / "scratch", tmp_path / "work"
    (scratch / rel).parent.mkdir(parents=True)
    (scratch / rel).write_text(text)
    (work / "src").mkdir(parents=True)
    monkeypatch.setattr(prep, "SCRATCH", str(scratch))
    plan = {"language": language, "solution": [rel], "new_files": [r"[a-z]+\.go"]}
    prep.bring_over(plan, str(work))
    assert not (work / rel).exists()
    assert "reads files at compile time" in capsys.readouterr().out


def test_a_comparison_with_expected_is_not_a_binding() -> None:
    """C++'s `REQUIRE(expected == f({1, 2}, {}))`: the literals on its right are inputs;
    a copy that changed one would still pass (cpp__sublist was flagged tampered so)."""
    text = (
        '#include "s.h"\nTEST_CASE("t") {\n    s::Kind expected = s::Kind::superlist;\n'
        "    REQUIRE(expected == s::f({1, 2, 3}, {}));\n}\n"
    )
    for _ in range(20):
        new, entries = disguise("cpp", text, NameGen())
        assert new.count("{1, 2, 3}") == new.count("REQUIRE")
        assert all(e.how.startswith("inverted") for e in entries if e.kind == MUST_FAIL)
