"""Must-fail copies of tests whose expected values are built by calls (red team round
five, "Fixes" 3): the 23 Polyglot files that had literal canaries only, which a generic
attack (a header that redefines REQUIRE, an answer type whose `==` is always true, an
output filter) fooled with no guessing. Without Docker: the copies exist and change a
literal inside the expected side's call, constructor or table row."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest

from dgm.benchmarks.polyglot import loader as polyglot
from dgm.benchmarks.polyglot.copies import MUST_FAIL
from dgm.benchmarks.polyglot.copies_builders import BUILT, same_number
from dgm.benchmarks.polyglot.judge import prepare_judge_tree

# exercise -> how a changed value sits in the disguised file ({new}: the copy's value)
BUILT_FILES = {
    ("cpp", "gigasecond"): r"expected\(time_from_string\({new}\)\)",
    ("cpp", "clock"): r"\{{(?:-?\d+, )+{new},",
    ("rust", "decimal"): r"decimal\({new}\)",
    ("rust", "gigasecond"): r"expected = datetime\([^)]*\b{new}\b",
    ("rust", "alphametics"): r"\(\s*(?:'\w', {new}|{new}, \d+)\s*\)",
    ("rust", "word-count"): r"\((?:{new}, \d+|\"[^\"]*\", {new})\)",
    ("rust", "macros"): r"expected\.insert\([^;]*{new}",
    ("java", "pythagorean-triplet"): r"new PythagoreanTriplet\([^)]*\b{new}\b",
    ("java", "word-search"): r"new Pair\([^)]*\b{new}\b",
    ("java", "sgf-parsing"): r"new SgfNode\([^;]*{new}",
    ("java", "dominoes"): r"hasSize\({new}\)",
    ("go", "two-bucket"): r"(?:goalBucket|moves|otherBucket|expectedError):\s+{new},",
    ("go", "food-chain"): r"(?s)var test\w+ = \[\]string\{{.*var test\w+ = \[\]string\{{",
    ("go", "palindrome-products"): r"pm(?:in|ax):\s+Product\{{[^\n]*\b{new}\b",
}
SOURCE = {"cpp": "*_test.cpp", "rust": "tests/*.rs", "java": "src/test/java/*.java",
          "go": "*_test.go"}  # fmt: skip


def _task(polyglot_dir: Path, language: str, exercise: str) -> polyglot.Task:
    return polyglot.PolyglotTasks(polyglot_dir).task(f"{language}__{exercise}")


@pytest.mark.parametrize("case", sorted(BUILT_FILES), ids=lambda c: f"{c[0]}-{c[1]}")
def test_files_with_built_expected_values_get_must_fail_copies(
    case: tuple[str, str], polyglot_dir: Path, tmp_path: Path
) -> None:
    """In most draws the file gets a must-fail copy (before: none, so only literal
    canaries guarded it), and each copy's new value sits inside the expected side's call
    (`datetime(...)`, `new Pair(...)`, a table row), not in an input."""
    language, exercise = case
    task = _task(polyglot_dir, language, exercise)
    covered = 0
    for n in range(5):
        plan = prepare_judge_tree(task, tmp_path / str(n))
        fails = [e for e in plan.entries if e.kind == MUST_FAIL]
        covered += bool(fails)
        text = "\n".join(p.read_text() for p in (tmp_path / str(n)).glob(SOURCE[language]))
        for entry in fails:
            new = entry.how.partition(" -> ")[2]
            pattern = BUILT_FILES[case].format(new=re.escape(new))
            assert re.search(pattern, text), (entry.how, pattern)
    assert covered >= 4, covered
    assert not BUILT.get()  # the file-level switch does not leak into the next file


def test_a_decimal_copy_never_denotes_its_real_value(polyglot_dir: Path, tmp_path: Path) -> None:
    """A parser could make a changed literal equal to the real one (`"1.0"` is `"1"`),
    and then the reference would pass a must-fail copy and be called tampered: such sets
    are never made."""
    assert same_number(['"1.0"', '"1"']) and same_number(['"+2"', "2"])
    assert not same_number(['"1.0"', '"1.01"', '"0.1"'])
    task = _task(polyglot_dir, "rust", "decimal")
    for n in range(4):
        plan = prepare_judge_tree(task, tmp_path / str(n))
        for entry in (e for e in plan.entries if e.kind == MUST_FAIL):
            real, _, new = entry.how.removeprefix("expected ").partition(" -> ")
            assert Decimal(real.strip('"').lstrip("+")) != Decimal(new.strip('"').lstrip("+"))


def test_a_table_row_copy_keeps_the_inputs_of_every_row(polyglot_dir: Path, tmp_path: Path) -> None:
    """cpp/clock: the loop test's copy holds its own table in which only the compared
    column differs; the hours and minutes (the inputs, which the clock normalises:
    `{1, 60, "02:00"}`) are never changed, so a true clock fails every copy."""
    task = _task(polyglot_dir, "cpp", "clock")
    plan = prepare_judge_tree(task, tmp_path / "t")
    text = next((tmp_path / "t").glob("*_test.cpp")).read_text()
    original = (Path(task.source) / "clock_test.cpp").read_text()
    rows = {r for r in re.findall(r"\{(-?\d+, -?\d+), \"", original)}
    assert {r for r in re.findall(r"\{(-?\d+, -?\d+), \"", text)} == rows
    assert any(e.kind == MUST_FAIL for e in plan.entries)


def test_a_value_overwritten_by_a_later_insert_is_never_changed(
    polyglot_dir: Path, tmp_path: Path
) -> None:
    """rust/macros inserts 'h' twice (89, then 8): a copy changing the 89 expects the
    same map, so the reference passed it and was called tampered in Docker. Values of
    keys inserted twice are left alone."""
    task = _task(polyglot_dir, "rust", "macros")
    for n in range(6):
        plan = prepare_judge_tree(task, tmp_path / str(n))
        hows = [e.how for e in plan.entries if e.kind == MUST_FAIL]
        assert hows and not any(h.startswith("expected 89 ->") for h in hows), hows
