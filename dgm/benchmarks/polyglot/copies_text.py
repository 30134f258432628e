"""Disguised test files for the brace languages (see polyglot_copies): Go, Rust, Java,
C++, JavaScript, on spans of text.

A test's span runs from its first annotation (or its line) to its closing bracket, found
by a scanner that skips strings, characters and comments. Every test is renamed (C++
also loses its tags, which are the same in a copy); each copy is inserted at a random
side of its original, in the same class, `describe` or module. A must-fail copy changes
one literal inside the expected side of an assertion (`toEqual(...)`, `assert_eq!`'s
second argument, `isEqualTo(...)`, the literal side of a `REQUIRE(a == b)`, or a literal
a variable named like `expected`/`want` is bound to); Go's table tests get a renamed copy
of their table with one expected field changed. Compiled languages whose tests have no
such literal invert the asserted condition instead (their sources are deleted before the
tests run, reports.BUILD and RUN).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

from dgm.benchmarks.polyglot import copies_scan as scan
from dgm.benchmarks.polyglot.canaries import without_feature_gated
from dgm.benchmarks.polyglot.copies import (
    MUST_FAIL,
    MUST_PASS,
    REAL,
    TRIES,
    Entry,
    NameGen,
    copyable,
    pick_copies,
)
from dgm.benchmarks.polyglot.copies_go import mutate_go
from dgm.benchmarks.polyglot.copies_scan import BOUND, change_literal, closing


@dataclass
class Span:
    start: int
    """Start of its first line (annotations included)."""
    end: int
    """Just past its last line."""
    name_at: tuple[int, int]
    """Where its name (or quoted title) is."""
    original: str
    container: int
    """Start of the innermost enclosing bracket (tests are only copied beside siblings)."""


_HEAD = {
    "go": re.compile(r"^func\s+(Test\w*)\s*\(\s*\w+\s+\*testing\.T\s*\)\s*\{", re.MULTILINE),
    "rust": re.compile(
        r"^[ \t]*#\[test\][^\n]*\n(?:[ \t]*(?:#\[[^\n]*\]|//[^\n]*)?\n)*"
        r"[ \t]*(?:pub\s+)?fn\s+(\w+)\s*\(\s*\)[^{;]*\{",
        re.MULTILINE,
    ),  # fmt: skip
    "java": re.compile(
        r"^[ \t]*@(?:Test|ParameterizedTest|RepeatedTest)\b(?:[^;{]|\n)*?\bvoid\s+"
        r"(\w+)\s*\([^)]*\)[^{;]*\{",
        re.MULTILINE,
    ),  # fmt: skip
    "cpp": re.compile(
        r'^[ \t]*TEST_CASE\s*\(\s*("(?:[^"\\]|\\.)*")(?:\s*,\s*"(?:[^"\\]|\\.)*")?'
        r"\s*\)\s*\{",
        re.MULTILINE,
    ),  # fmt: skip
    "javascript": re.compile(
        r"^[ \t]*(?:test|it)\s*\(\s*('(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"|"
        r"`(?:\\.|[^`\\$])*`)\s*,",
        re.MULTILINE,
    ),  # fmt: skip
}


def find_tests(language: str, text: str) -> list[Span]:
    masked = scan.masked(language, _same_length_visible(language, text))
    spans = []
    for m in _HEAD[language].finditer(masked):
        start = m.start()
        while start > 0:  # annotations on the lines above (Java: @Disabled, @DisplayName)
            prev = masked.rfind("\n", 0, start - 1) + 1
            if not masked[prev:start].strip().startswith("@") or language != "java":
                break
            start = prev
        opener = m.end() - 1 if language != "javascript" else masked.index("(", m.start())
        end = closing(language, text, opener)
        if end < 0:
            continue
        end = text.find("\n", end)
        end = len(text) if end < 0 else end + 1
        name = text[m.start(1) : m.end(1)]
        original = _unquote(name) if language in ("cpp", "javascript") else name
        spans.append(Span(start, end, m.span(1), original, _container(masked, start)))
    return [s for s in spans if not any(o is not s and o.start < s.start < o.end for o in spans)]


def _same_length_visible(language: str, text: str) -> str:
    """`text` with what the build leaves out (polyglot_canaries.without_feature_gated)
    blanked with spaces, offsets kept."""
    if language not in ("rust", "cpp"):
        return text
    kept = without_feature_gated(text, language).splitlines(keepends=True)
    lines = text.splitlines(keepends=True)
    kept += [""] * (len(lines) - len(kept))
    pairs = zip(lines, kept, strict=False)
    return "".join(line if k == line else re.sub(r"[^\n]", " ", line) for line, k in pairs)


def _container(masked: str, at: int) -> int:
    depth = 0
    for i in range(at - 1, -1, -1):
        char = masked[i]
        if char in ")}]":
            depth += 1
        elif char in "({[":
            if depth == 0:
                return i
            depth -= 1
    return -1


def _unquote(literal: str) -> str:
    return re.sub(r"\\(.)", r"\1", literal[1:-1])


def _rename(language: str, text: str, span: Span, fresh: str) -> str:
    """The span's text with its name replaced (C++: its tags dropped too)."""
    lo, hi = span.name_at[0] - span.start, span.name_at[1] - span.start
    chunk = text[span.start : span.end]
    if language == "cpp":
        head = re.match(r'(?:.|\n)*?TEST_CASE\s*\(\s*"(?:[^"\\]|\\.)*"(\s*,\s*"(?:[^"\\]|\\.)*")?',
                        chunk)  # fmt: skip
        if head and head.group(1):
            chunk = chunk[: head.start(1)] + chunk[head.end(1) :]
        return chunk[:lo] + f'"{fresh}"' + chunk[hi:]
    if language == "javascript":
        return chunk[:lo] + f"'{fresh}'" + chunk[hi:]
    return chunk[:lo] + fresh + chunk[hi:]


def disguise_text(language: str, text: str, names: NameGen,
                  context: str = "") -> tuple[str, list[Entry]]:  # fmt: skip
    """`context`: the exercise's other test files (Go: where a test's table may be)."""
    spans = find_tests(language, text)
    if not spans:
        return text, []
    mutants: dict[int, tuple[str, str, str]] = {}
    for i, span in enumerate(spans):
        found = mutate_test(language, text, span, names, context)
        if found:
            mutants[i] = found
    able = [i for i, sp in enumerate(spans) if copyable(text[sp.start : sp.end])]
    passing, failing = pick_copies(able, [i for i in mutants if i in able])
    entries: list[Entry] = []
    pieces: list[tuple[int, int, str]] = []
    for i, span in enumerate(spans):
        fresh = names.name(language)
        entries.append(Entry(fresh, span.original, REAL))
        chunks = [_rename(language, text, span, fresh)]
        made: set[str] = set()
        for n, kind in enumerate([MUST_PASS] * (i in passing) + [MUST_FAIL] * failing.count(i)):
            copy_name = names.name(language)
            if kind == MUST_FAIL:
                found = mutants[i] if n == 0 else None
                for _ in range(TRIES if found is None else 0):
                    again = mutate_test(language, text, span, names, context)
                    if again and again[0] not in made and again[1] not in made:
                        found = again
                        break
                if found is None:
                    continue
                made |= {found[0], found[1]}
                body, how, prefix = found
                moved = text[: span.start] + body + text[span.end :]
                copied = Span(span.start, span.start + len(body), span.name_at, span.original,
                              span.container)  # fmt: skip
                chunk = prefix + _rename(language, moved, copied, copy_name)
            else:
                how, chunk = "", _rename(language, text, span, copy_name)
            entries.append(Entry(copy_name, span.original, kind, how))
            chunks.insert(secrets.randbelow(len(chunks) + 1), "\n" + chunk)
        pieces.append((span.start, span.end, "".join(chunks).lstrip("\n")))
    out, last = [], 0
    for start, end, chunk in sorted(pieces):
        out += [text[last:start], chunk]
        last = end
    return "".join(out) + text[last:], entries


# -- must-fail copies ----------------------------------------------------------------------
_EXPECTED_ARG = {
    "javascript": re.compile(r"\.(?:toEqual|toBe|toStrictEqual)\s*\("),
    "java": re.compile(r"\.(?:isEqualTo|containsExactly|hasMessage)\s*\(|\bassertEquals\s*\("),
    "rust": re.compile(r"\bassert_eq!\s*\("),
    "cpp": re.compile(r"\b(?:REQUIRE|CHECK)\s*\("),
    "go": re.compile(r"(?!)"),
}
_INVERT = {
    "rust": [(r"\bassert_eq!", "assert_ne!"), (r"\bassert!\s*\(", "assert!(!")],
    "java": [
        (r"\.isEqualTo\(", ".isNotEqualTo("),
        (r"\.isTrue\(\)", ".isFalse()"),
        (r"\.isFalse\(\)", ".isTrue()"),
        (r"\bassertEquals\(", "assertNotEquals("),
    ],
    "cpp": [(r"\bREQUIRE\s*\(", "REQUIRE_FALSE("), (r"\bCHECK\s*\(", "CHECK_FALSE(")],
}


def mutate_test(language: str, text: str, span: Span, names: NameGen,
                context: str = "") -> tuple[str, str, str] | None:  # fmt: skip
    """(the test's text with one expected value changed, what changed, text to put
    before it (Go: a changed copy of its table)), or None."""
    chunk = text[span.start : span.end]
    if language == "go":
        return mutate_go(text + "\n" + context, chunk, names)
    regions = []
    for m in _EXPECTED_ARG[language].finditer(scan.masked(language, chunk)):
        end = closing(language, chunk, m.end() - 1)
        if end < 0:
            continue
        lo, hi = _expected_side(language, chunk, m, end)
        regions.append((lo, hi))
    for m in BOUND.finditer(scan.masked(language, chunk)):
        if scan.used_as_input(language, chunk, m.group(1), m.end()):
            continue
        end = scan.initializer_end(language, chunk, m.end())
        regions += scan.outside_calls(language, chunk, m.end(), end)
    for lo, hi in sorted(regions, key=lambda _r: secrets.randbelow(1 << 30)):
        changed = change_literal(language, chunk, lo, hi)
        if changed:
            return (*changed, "")
    for pattern, replacement in _INVERT.get(language, []):
        if re.search(pattern, scan.masked(language, chunk)):
            new = re.sub(pattern, replacement, chunk, count=1)
            if language == "rust" and replacement == "assert!(!":
                new = _close_negation(new)
            if new and new != chunk:
                return new, f"inverted {replacement}", ""
    return None


def _close_negation(chunk: str) -> str:
    at = chunk.index("assert!(!") + len("assert!(!")
    end = closing("rust", chunk, at - 2)
    inner_end = _top_level_comma(chunk, at, end - 1)
    return chunk[:at] + "(" + chunk[at:inner_end] + ")" + chunk[inner_end:]


def _top_level_comma(chunk: str, lo: int, hi: int) -> int:
    depth = 0
    for i in range(lo, hi):
        char = chunk[i]
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth == 0:
            return i
    return hi


def _expected_side(language: str, chunk: str, m: re.Match, end: int) -> tuple[int, int]:
    """The expected side of an assertion: the argument of `toEqual(...)`/`isEqualTo(...)`;
    of two compared sides, the one that calls nothing (the other calls the solution, and
    a changed input would not make a failing copy); nothing when that is unclear."""
    lo, hi = m.end(), end - 1
    masked = scan.masked(language, chunk)
    if language == "rust" or m.group(0).startswith("assertEquals"):
        comma = _top_level_comma(masked, lo, hi)
        left, right = (lo, comma), (comma + 1, hi)
    elif language == "cpp":
        eq = masked.find("==", lo, hi)
        if eq < 0:
            return hi, hi
        left, right = (lo, eq), (eq + 2, hi)
    else:
        return lo, hi
    calls = [("(" in masked[a:b]) for a, b in (left, right)]
    if calls == [True, False]:
        return right
    if calls == [False, True]:
        return left
    return hi, hi
