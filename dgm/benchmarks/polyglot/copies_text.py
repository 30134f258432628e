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
tests run, reports.BUILD and RUN). Where a test may be changed is copies_expected's job.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

from dgm.benchmarks.polyglot import copies_scan as scan
from dgm.benchmarks.polyglot import layout, value_draws, variants
from dgm.benchmarks.polyglot.canaries import without_feature_gated
from dgm.benchmarks.polyglot.copies import (
    MUST_FAIL,
    MUST_PASS,
    REAL,
    Entry,
    NameGen,
    copyable,
    pick_copies,
)
from dgm.benchmarks.polyglot.copies_builders import BUILDERS, BUILT, builder_names, same_number
from dgm.benchmarks.polyglot.copies_expected import expected_regions, toggle, tolerance
from dgm.benchmarks.polyglot.copies_flipped import FALLBACK, flipped
from dgm.benchmarks.polyglot.copies_go import Mutant, mutate_go
from dgm.benchmarks.polyglot.copies_go_loops import mutate_indexed, mutate_plain
from dgm.benchmarks.polyglot.copies_helpers import HELPERS, helpers
from dgm.benchmarks.polyglot.copies_scan import change_literal, closing
from dgm.benchmarks.polyglot.copies_tables import STRUCTS, inline_tables, structs


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


def disguise_text(
    language: str,
    text: str,
    names: NameGen,
    context: str = "",
    elsewhere: dict[str, list[str]] | None = None,
) -> tuple[str, list[Entry]]:
    """`context`: the exercise's other test files (Go: where a test's table may be);
    `elsewhere` gets the changed copies of tables declared there (layout.go_tables puts
    them beside the real one; without it such a table gets no copies)."""
    spans = find_tests(language, text)
    if not spans:
        return text, []
    tests = {sp.original for sp in spans}
    HELPERS.set(tuple(helpers(language, text, tests).items()))
    if language != "go":  # (Go's expected values are table fields: the file's numbers)
        _set_pools(language, text)
    defs = definitions(language, text, spans)
    able = [i for i, sp in enumerate(spans) if copyable(text[sp.start : sp.end], defs)]
    context = context if elsewhere is not None else ""
    mutable = _mutable(language, text, spans, able, names, context)
    built = []
    if not mutable and language != "go":  # expected values built by calls (copies_builders)
        built = [BUILT.set(True), BUILDERS.set(builder_names(language, defs)),
                 STRUCTS.set(structs(text) if language == "cpp" else {})]  # fmt: skip
        text = inline_tables(text) if language == "cpp" else text
        spans = find_tests(language, text)
        defs = definitions(language, text, spans)
        able = [i for i, sp in enumerate(spans) if copyable(text[sp.start : sp.end], defs)]
        _set_pools(language, text)
        mutable = _mutable(language, text, spans, able, names, context)
    fallback = FALLBACK.set(not mutable and language in ("go", "rust"))  # (copies_flipped)
    try:
        if FALLBACK.get():
            mutable = _mutable(language, text, spans, able, names, context)
        return _laid_out(language, text, names, spans, able, mutable, context, elsewhere)
    finally:
        FALLBACK.reset(fallback)
        for var, token in zip((BUILT, BUILDERS, STRUCTS), built, strict=False):
            var.reset(token)


def _set_pools(language: str, text: str) -> None:
    numbers, strings, enumerators = expected_literals(language, text)
    value_draws.NUMBERS.set(numbers)
    variants.STRINGS.set(strings)
    variants.NAMES.set(enumerators)


def _laid_out(language: str, text: str, names: NameGen, spans: list[Span], able: list[int],
              mutable: list[int], context: str,
              elsewhere: dict[str, list[str]] | None) -> tuple[str, list[Entry]]:  # fmt: skip
    passing, failing = pick_copies(able, mutable)
    entries: list[Entry] = []
    blocks: list[list[str]] = []
    tables: dict[str, list[str]] = {}
    for i, span in enumerate(spans):
        fresh = names.name(language)
        entries.append(Entry(fresh, span.original, REAL))
        mine = [_rename(language, text, span, fresh)]
        if i in passing:
            copy_name = names.name(language)
            entries.append(Entry(copy_name, span.original, MUST_PASS))
            mine.append(_rename(language, text, span, copy_name))
        for mutant in _mutants(language, text, span, names, failing.count(i), context):
            copy_name = names.name(language)
            entries.append(Entry(copy_name, span.original, MUST_FAIL, mutant.how))
            moved = text[: span.start] + mutant.body + text[span.end :]
            copied = Span(span.start, span.start + len(mutant.body), span.name_at, span.original,
                          span.container)  # fmt: skip
            mine.append(_rename(language, moved, copied, copy_name))
            if mutant.table:
                tables.setdefault(mutant.table, []).append(mutant.decl)
        blocks.append(mine)
    out = layout.lay_out(text, [(sp.start, sp.end) for sp in spans], blocks)
    for table, decls in tables.items():
        if layout.decl_span(out, table):
            out = layout.go_tables(out, table, decls, "test" + names.token().capitalize())
        elif elsewhere is not None:
            elsewhere.setdefault(table, []).extend(decls)
    return out, entries


_DEFINITION = re.compile(
    r"(?<![\w.])(\w+)\s*\([^(){};]*\)\s*[^;{}()=]*\{|(?<![\w.])(\w+)\s*=\s*(?:async\s*)?"
    r"(?:function\s*)?\([^(){};]*\)\s*(?:=>\s*)?\{"
)  # fmt: skip
_KEYWORDS = {"if", "for", "while", "switch", "catch", "match", "return", "function", "sizeof"}


def definitions(language: str, text: str, spans: list[Span]) -> dict[str, str]:
    """name -> source of the file's functions outside its tests (the helpers a test
    calls count as the test for copies.copyable); overloads joined."""
    code = scan.masked(language, text)
    found: dict[str, str] = {}
    for m in _DEFINITION.finditer(code):
        name = m.group(1) or m.group(2)
        if name in _KEYWORDS or any(sp.start <= m.start() < sp.end for sp in spans):
            continue
        end = closing(language, text, m.end() - 1)
        if end > 0:
            found[name] = found.get(name, "") + text[m.start() : end]
    return found


def _mutants(language: str, text: str, span: Span, names: NameGen, count: int,
             context: str) -> list[Mutant]:  # fmt: skip
    """`count` must-fail copies, or none: one draw, never retried (a draw of values is
    thrown away more often near zero, and retrying would favour the real value there)."""
    return mutate_test(language, text, span, names, count, context) if count else []


# -- must-fail copies ----------------------------------------------------------------------
def mutate_test(language: str, text: str, span: Span, names: NameGen, k: int = 1,
                context: str = "") -> list[Mutant]:  # fmt: skip
    """Up to k must-fail copies of the test, all with the same expected value changed
    (the values drawn as one set, polyglot_variants); [] when it has none to change. The
    asserted condition is never inverted: that would be a form the file may never use
    (except, in a file no other rule gives a copy, as copies_flipped does)."""
    chunk = text[span.start : span.end]
    if language == "go":
        made = (mutate_go(text, chunk, names, k, context)
                or mutate_plain(text, chunk, names, k, context)
                or mutate_indexed(text, chunk, names, k, context))  # fmt: skip
    else:
        regions = expected_regions(language, chunk)
        title = (span.name_at[0] - span.start, span.name_at[1] - span.start)
        token = value_draws.INPUTS.set(_inputs(language, chunk, [*regions, title]))
        try:
            made = _changed(language, text, chunk, regions, k)
        finally:
            value_draws.INPUTS.reset(token)
    return made or (flipped(language, text, chunk, k) if FALLBACK.get() else [])


def _inputs(language: str, chunk: str, regions: list[tuple[int, int]]) -> tuple:
    """The test's string and number literals outside its expected values and title."""
    out = []
    for t in scan.tokens(language, chunk):
        if any(lo <= t.start() < hi for lo, hi in regions):
            continue
        parts = scan.string_parts(t.group(0)) if t.lastgroup == "str" else None
        if parts:
            out.append(parts)
        elif t.lastgroup == "num":
            out.append(("num", t.group(0)))
    return tuple(out)


def _changed(language: str, text: str, chunk: str, regions: list[tuple[int, int]],
             k: int) -> list[Mutant]:  # fmt: skip
    changed = _literal_changed(language, text, chunk, regions, k)
    if changed:
        return changed
    swapped = _swapped_names(language, chunk, regions, k)
    if swapped:
        return swapped
    lenient = value_draws.LENIENT.set(True)
    try:
        changed = _literal_changed(language, text, chunk, regions, k)
    finally:
        value_draws.LENIENT.reset(lenient)
    if changed:
        return changed
    toggled = toggle(language, text, chunk)
    return [Mutant(toggled, "negated a boolean check")] if toggled else []


def _literal_changed(language: str, text: str, chunk: str, regions: list[tuple[int, int]],
                     k: int) -> list[Mutant]:  # fmt: skip
    for lo, hi in _shuffled_regions(regions):
        gap = tolerance(language, text, chunk, lo)
        if gap is None:
            continue
        changed = change_literal(language, chunk, lo, hi, k, gap)
        if (
            changed
            and BUILT.get()
            and same_number(
                [h.split(" -> ")[-1] for _, h in changed] + [changed[0][1].split(" -> ")[0][9:]]
            )
        ):
            return []  # a builder could make two of them equal (copies_builders)
        if changed:
            return [Mutant(body, how) for body, how in changed]
    return []


_STRING_BOUND = re.compile(r"(?<![.\w])([A-Za-z_]\w*)\s*=\s*(?=[\"'])")


def _swapped_names(language: str, chunk: str, regions: list[tuple[int, int]],
                   k: int) -> list[Mutant]:  # fmt: skip
    """Where the expected side names inputs (Java poker: `.containsExactly(highestJ)`, each
    hand a local string passed to the solution): up to k copies with one of those names
    swapped for another input of the test bound to a different string, so every member of
    {real, copies} is one of the call's inputs (round four G3)."""
    code = scan.masked(language, chunk)
    bound = {}
    for m in _STRING_BOUND.finditer(code):
        literal = next(scan.tokens(language, chunk, m.end()), None)
        if literal and literal.lastgroup == "str" and literal.start() == m.end():
            bound.setdefault(m.group(1), (literal.group(0), m.end()))
    inputs = {n for n, (_, at) in bound.items() if scan.used_as_input(language, chunk, n, at)}
    for lo, hi in _shuffled_regions(regions):
        names = list(re.finditer(r"[A-Za-z_]\w*", code[lo:hi]))
        if (
            not names
            or re.sub(r"[\w\s,]", "", code[lo:hi])
            or any(n.group(0) not in inputs for n in names)
        ):
            continue
        taken = {bound[n.group(0)][0] for n in names}
        site = secrets.choice(names)
        others = sorted(n for n in inputs if bound[n][0] not in taken)
        picks = sorted(others, key=lambda _n: secrets.randbelow(1 << 30))[:k]
        at, end = lo + site.start(), lo + site.end()
        return [Mutant(chunk[:at] + p + chunk[end:], f"expected {site.group(0)} -> {p}")
                for p in picks]  # fmt: skip
    return []


def _shuffled_regions(regions: list[tuple[int, int]]) -> list[tuple[int, int]]:
    return sorted(regions, key=lambda _r: secrets.randbelow(1 << 30))


Literals = tuple[tuple[str, ...], tuple[tuple[str, str], ...], tuple[str, ...]]


def expected_literals(language: str, text: str) -> Literals:
    """The number literals, (quote, body) of the string literals and the enumerators
    (copies_scan.enumerators) on the expected side of the file's assertions (repeats
    kept): what a changed value is drawn from (polyglot_variants), so that copies' values
    come from the distribution real expected values come from, not the inputs'."""
    numbers, strings, names = [], [], []
    for span in find_tests(language, text):
        chunk = text[span.start : span.end]
        for lo, hi in expected_regions(language, chunk):
            for t in scan.tokens(language, chunk, lo, hi):
                parts = scan.string_parts(t.group(0)) if t.lastgroup == "str" else None
                numbers += [t.group(0)] if t.lastgroup == "num" else []
                strings += [parts] if parts else []
            names += [m.group(0) for m in scan.enumerators(language, chunk, lo, hi)]
    names = [n for n in names if scan.never_called(language, text, n)]
    return tuple(numbers), tuple(strings), tuple(names)


def _mutable(language: str, text: str, spans: list[Span], able: list[int], names: NameGen,
             context: str) -> list[int]:  # fmt: skip
    """The tests a must-fail copy can change (a trial draw each, see value_draws.trial)."""
    with value_draws.trial():
        return [i for i in able if mutate_test(language, text, spans[i], names, 1, context)]
