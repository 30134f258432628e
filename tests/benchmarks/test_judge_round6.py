"""Red team round six (docs/red-team/2026-12-02-round6): a solution that reads the
disguised tests while they run told the real expected string from its must-fail copies
by whether it reads right (T1: a changed letter made `Norweoian`, no word) and by how
often the file holds it (T2: a value six tests expect beside copies seen once each).
Offline: the copies the disguise makes for such values."""

from __future__ import annotations

import ast
import collections
import re

import pytest

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


_SHARED, _NUMBER = "2234567890", "4096"
"""A string five tests expect and a number four tests expect, beside values expected once."""


def _cases() -> list[tuple[str, str]]:
    """(input, expected literal body) per test: the shared values, then singletons."""
    cases = [(f"in{i}", f'"{_SHARED}"') for i in range(5)]
    cases += [(f"n{i}", _NUMBER) for i in range(4)]
    cases += [(f"s{i}", f'"{5550001111 + 7 * i}"') for i in range(4)]
    return cases + [(f"m{i}", str(9000 + 13 * i)) for i in range(3)]


_TEMPLATES = {
    "python": ("import unittest\nfrom m import f\n\n\nclass T(unittest.TestCase):\n",
               "    def test_t{i}(self):\n        self.assertEqual(f('{arg}'), {want})\n\n", ""),
    "javascript": ("import {{ f }} from './m';\n\ndescribe('m', () => {{\n",
                   "  test('t{i}', () => {{\n    expect(f('{arg}')).toEqual({want});\n  }});\n\n",
                   "}});\n"),
    "java": ("import org.junit.jupiter.api.Test;\n\nimport static org.assertj.core.api."
             "Assertions.assertThat;\n\npublic class MTest {{\n\n",
             "    @Test\n    public void t{i}() {{\n        assertThat(new M().f(\"{arg}\"))"
             ".isEqualTo({want});\n    }}\n\n", "}}\n"),
    "cpp": ('#include "m.h"\n#include "test/catch.hpp"\n\n',
            'TEST_CASE("t{i}") {{\n    REQUIRE({want} == m::f("{arg}"));\n}}\n\n', ""),
    "rust": ("use m::*;\n\n", '#[test]\nfn t{i}() {{\n    assert_eq!(f("{arg}"), {want});\n}}\n\n',
             ""),
    "go": ('package m\n\nimport "testing"\n\nvar cases = []struct {{\n\tin   string\n'
           "\twant string\n}}{{\n", '\t{{"{arg}", {want}}},\n',
           "}}\n\nfunc TestF(t *testing.T) {{\n\tfor _, tc := range cases {{\n"
           "\t\tif got := F(tc.in); got != tc.want {{\n"
           '\t\t\tt.Fatalf("F(%q) = %q, want %q", tc.in, got, tc.want)\n\t\t}}\n\t}}\n}}\n'),
}  # fmt: skip
"""(head, one test, tail) of a test file per language (Go: one table test, string rows)."""


def _shared_file(language: str) -> str:
    head, one, tail = _TEMPLATES[language]
    cases = [c for c in _cases() if language != "go" or c[1].startswith('"')]
    body = "".join(one.format(i=i, arg=arg, want=want) for i, (arg, want) in enumerate(cases))
    return head.format() + body + tail.format()


def _uses(text: str, literal: str) -> int:
    """How often the disguised file holds a literal (a number as a whole token)."""
    if literal[0] in "\"'":
        body = literal[1:-1]
        return len(re.findall(rf"[\"']{re.escape(body)}[\"']", text))
    return len(re.findall(rf"(?<![\w.]){re.escape(literal)}(?![\w.])", text))


@pytest.mark.parametrize("language", ["python", "javascript", "java", "cpp", "rust", "go"])
def test_a_shared_value_is_held_no_more_often_than_each_of_its_copies(language: str) -> None:
    """Round six T2: over many disguises, the real value a group of must-fail copies
    changes is never held more often in the disguised file than each copy's value (the
    reader "the value the file holds most" picks at chance or worse), and the shared
    values do get copies (in Go, the test's table: every entry of the value changed)."""
    text = _shared_file(language)
    shared_changed = 0
    for _ in range(12):
        out, entries = disguise(language, text, NameGen())
        groups: dict[tuple[str, str], set[str]] = collections.defaultdict(set)
        for e in entries:
            if e.kind == MUST_FAIL:
                real, _, copy = e.how.removeprefix("expected ").partition(" -> ")
                groups[(e.original, real)].add(copy)
        assert groups, "no must-fail copy"
        for (_, real), copies in groups.items():
            for copy in copies:
                assert _uses(out, real) <= _uses(out, copy), (real, copy, _uses(out, real))
        shared_changed += any(_SHARED in r or r == _NUMBER for _, r in groups)
    assert shared_changed >= 3, shared_changed
