"""Red team round six (docs/red-team/2026-12-02-round6): a solution that reads the
disguised tests while they run told the real expected string from its must-fail copies
by whether it reads right (T1: a changed letter made `Norweoian`, no word) and by how
often the file holds it (T2: a value six tests expect beside copies seen once each).
Offline: the copies the disguise makes for such values."""

from __future__ import annotations

import ast
import collections
import re

from dgm.benchmarks.polyglot import wordlist
from dgm.benchmarks.polyglot.copies import MUST_FAIL, NameGen
from dgm.benchmarks.polyglot.disguise import disguise


def _changed(how: str) -> tuple[str, str]:
    real, _, copy = how.removeprefix("expected ").partition(" -> ")
    return ast.literal_eval(real), ast.literal_eval(copy)


def _python(tests: dict[str, tuple[str, str]]) -> str:
    body = "".join(f"    def test_{name}(self):\n        self.assertEqual(f({arg}), {want!r})\n\n"
                   for name, (arg, want) in tests.items())  # fmt: skip
    return f"import unittest\nfrom m import f\n\n\nclass T(unittest.TestCase):\n{body}"


def test_a_word_is_copied_as_another_word_not_as_a_misspelling() -> None:
    text = _python({"water": ("'water'", "Norwegian"), "zebra": ("'zebra'", "Japanese"),
                    "count": ("3", "three")})  # fmt: skip
    assert wordlist.is_word("Norwegian") and not wordlist.is_word("Norweoian")
    copies = collections.Counter()
    for _ in range(20):
        _, entries = disguise("python", text, NameGen())
        for e in entries:
            if e.kind == MUST_FAIL and e.how.startswith("expected '"):
                real, copy = _changed(e.how)
                copies[real] += 1
                words = re.findall(r"[A-Za-z]+", copy)
                assert all(wordlist.is_word(w) for w in words), (real, copy)
                assert copy.istitle() == real.istitle() and len(copy) == len(real), copy
    assert copies["Norwegian"] and copies["Japanese"], copies


def test_a_value_several_tests_expect_gets_the_same_copies_in_each() -> None:
    shared = {f"case{i}": (f"'({i}23) 456-7890'", "2234567890") for i in range(6)}
    text = _python({**shared, "other": ("'1'", "1234567890"), "third": ("'2'", "9876543210")})
    seen_sets = 0
    for _ in range(10):
        _, entries = disguise("python", text, NameGen())
        by_test: dict[str, set[str]] = collections.defaultdict(set)
        for e in entries:
            if e.kind == MUST_FAIL and "2234567890" in e.how.split(" -> ")[0]:
                by_test[e.original].add(_changed(e.how)[1])
        sets = {frozenset(s) for s in by_test.values()}
        assert len(sets) <= 1, by_test  # one draw of copies for the value, in every test
        seen_sets += len(by_test) > 1
    assert seen_sets, "no draw copied two tests of the shared value"


def test_a_word_the_file_also_uses_outside_the_string_is_never_the_one_swapped() -> None:
    # `form` is also a test's name (so a copy's word would be the one held once) and a
    # part of `format`, which must not count as a second `form` of the string.
    text = _python({"form": ("'x'", "form format"), "sky": ("'y'", "Blue sky")})
    swapped = collections.Counter()
    for _ in range(30):
        _, entries = disguise("python", text, NameGen())
        for e in entries:
            if e.kind == MUST_FAIL and e.how.startswith("expected 'form format'"):
                copy = _changed(e.how)[1]
                swapped["form" not in re.findall(r"[A-Za-z]+", copy)] += 1
    assert swapped[False], swapped  # copies were made (of its other words)
    assert not swapped[True], swapped
