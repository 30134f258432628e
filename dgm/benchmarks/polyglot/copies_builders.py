"""Expected values built by calls (red team round five, "Fixes" 3): where a test file's
expected values are only ever written as the arguments of a call that builds a value
(`datetime(2043, 1, 1, 1, 46, 40)`, `decimal("0.3")`, `new PythagoreanTriplet(3, 4, 5)`,
`time_from_string("2043-01-01 01:46:40")`, tuples of a Rust array `[("word", 1)]`, the
value of `expected.put(key, value)`), a must-fail copy changes a literal inside that
call. copies_expected asks for these regions only while BUILT is set: copies_text sets it
for a file where no test has a literal outside calls (the 23 files of round five that
had literal canaries only), so the files that already had copies draw as before.

A builder is a function the test file itself defines (outside its tests), a class
constructor (`new X(...)`), or a library parser listed in _LIBRARY; never a call of the
solution's API with inputs. A changed argument may be normalised back by the builder
(a decimal `"1.0"` is `"1"`, a clock's 60 minutes are the next hour): a set in which
two members denote the same number is thrown away (same_number, a rule on the whole
set), and each file this applies to is checked with its reference in Docker
(perf/judge_oracle.py; README).
"""

from __future__ import annotations

import contextvars
import re
from decimal import Decimal, InvalidOperation

from dgm.benchmarks.polyglot import copies_scan as scan
from dgm.benchmarks.polyglot.copies_helpers import HELPERS
from dgm.benchmarks.polyglot.copies_tables import table_regions

BUILT: contextvars.ContextVar[bool] = contextvars.ContextVar("built", default=False)
BUILDERS: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar(
    "builders", default=frozenset()
)
"""The names of the test file's own functions that build values (set by copies_text)."""
_LIBRARY = {"cpp": {"time_from_string", "from_iso_string"}}
_COLLECTION = re.compile(r"(?<![\w.])(?:Map\.of|Map\.entry|List\.of|Set\.of|Arrays\.asList)\s*$")
"""Java's collection factories: their arguments are the value (keys included)."""
_DECL = re.compile(r"(?<![\w.])[\w:<>]+\s+(expected\w*)\s*\(", re.IGNORECASE)
"""C++'s direct initialisation of an expected value (`const ptime expected(...)`)."""
_FILLED = re.compile(r"(?<![\w.])(expected\w*)\s*\.\s*(put|insert|add)\s*\(", re.IGNORECASE)
"""A map or list named like `expected` filled by statements (`expected.insert(1, "one")`)."""
_EXPECTED_ARG = re.compile(
    r"\bassert_eq!\s*\(|\bREQUIRE\s*\(|\bCHECK\s*\(|\bassertEquals\s*\(|\.isEqualTo\s*\("
    r"|\.hasSize\s*\("
)


def builder_names(language: str, definitions: dict[str, str]) -> frozenset[str]:
    """The file's own functions (name -> source, tests left out) that build values: they
    take no expected value (copies_helpers) and call no test assertion."""
    own = {n for n, src in definitions.items()
           if not re.search(r"(?i)(?<![.\w])(?:assert\w*|require|check|expect\w*)\s*!?\s*\(", src)
           and not re.search(r"(?i)\b(?:expected|want)\w*\s*:", src.split("{", 1)[0])}  # fmt: skip
    return frozenset(own | _LIBRARY.get(language, set()))


def _transparent(language: str, code: str, at: int) -> bool:
    """Is the `(` at `at` part of a value: a value wrapper (`Some(`), a builder call, a
    constructor (`new X(`), a tuple (a `(` after `[`, `,`, `(` or `=`)?"""
    if scan.value_call(code, at, language):
        return True
    before = code[:at].rstrip()
    if _COLLECTION.search(before) or (language == "java" and re.search(r"\.\s*put$", before)):
        return True  # (a `.put(...)` chain on a built value: `new JSONObject().put(k, v)`)
    name = re.search(r"(?:\bnew\s+)?([A-Za-z_][\w:.]*)\s*(?:<[^<>()]*>)?$", before)
    if name and (name.group(0).startswith("new") or name.group(1) in BUILDERS.get()):
        return True
    return language == "rust" and (not before or before[-1] in "[,(=")


def value_parts(language: str, chunk: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """The parts of [lo, hi) that are the value: as copies_scan.outside_calls, but a
    builder call's, a constructor's and a tuple's parentheses hold the value too."""
    parts = scan.outside_calls(
        language, chunk, lo, hi, lambda code, i: _transparent(language, code, i)
    )
    return [(a, b) for a, b in parts if chunk[a:b].strip()]


_COMPARE = re.compile(r"(?i)^(?:\w*equal\w*|assert\w*|expect|to\w+|is\w+|has\w+|require"
                      r"|check|fatalf?|errorf?|sprintf|printf|println|format|fail\w*"
                      r"|contains\w*)$")  # fmt: skip


def _input(language: str, chunk: str, name: str, after: int) -> bool:
    """copies_scan.used_as_input, where the calls that only hold a value (a wrapper, a
    builder: the `Some(expected)` of `assert_eq!(answer, Some(expected))`) are looked
    through to the call around them."""
    code = scan.masked(language, chunk)
    for m in re.finditer(rf"(?<![\w.]){re.escape(name)}\b", code[after:]):
        depth, i = 0, after + m.start() - 1
        while i >= 0:
            if code[i] in ")]}":
                depth += 1
            elif code[i] in "([{" and depth:
                depth -= 1
            elif code[i] == "{":
                i = -1  # a block's brace: the statement holding the name is not a call
                break
            elif code[i] == "(" and not _transparent(language, code, i):
                break
            i -= 1
        callee = re.search(r"(\w+)\s*!?\s*$", code[:i]) if i >= 0 else None
        helpers = {n for n, _ in HELPERS.get()}
        if callee and not _COMPARE.match(callee.group(1)) and callee.group(1) not in helpers:
            return True
    return False


def _is_value(language: str, chunk: str, lo: int, hi: int) -> bool:
    """Is [lo, hi) one literal, or one builder call whose arguments are literals?"""
    code = scan.masked(language, chunk)
    side = code[lo:hi].strip()
    if re.fullmatch(r'"\s*"|\d[\w.]*', side):
        return True
    head = re.match(r"\s*(?:new\s+)?[A-Za-z_][\w:.]*\s*\(", code[lo:hi])
    if not head or not _transparent(language, code, lo + head.end() - 1):
        return False
    if scan.closing(language, code, lo + head.end() - 1) != lo + len(code[lo:hi].rstrip()):
        return False
    rest = re.sub(r"(?:\bnew\s+)?[A-Za-z_][\w:.]*\s*\(", "(", side)
    return not re.search(r"[A-Za-z_]", re.sub(r"\b(?:true|false)\b|\d[\w.]*", "", rest))


def _statement_end(language: str, chunk: str, start: int) -> int:
    """Where the initializer at `start` ends: Java's statement runs to its `;` (a
    builder chain spans lines: `new JSONObject()\n.put(...)`), others' as copies_scan."""
    if language != "java":
        return scan.initializer_end(language, chunk, start)
    code, depth = scan.masked(language, chunk), 0
    for i in range(start, len(code)):
        depth += code[i] in "([{"
        depth -= code[i] in ")]}"
        if depth < 0 or (depth == 0 and code[i] == ";"):
            return i
    return len(code)


def built_regions(language: str, chunk: str) -> list[tuple[int, int]]:
    """The spans of a test where its expected values are built by calls (see module)."""
    code = scan.masked(language, chunk)
    regions = []
    for m in scan.BOUND.finditer(code):
        end = _statement_end(language, chunk, m.end())
        puts = re.findall(r"\.\s*put\s*\(\s*(\"[^\"]*\"|\w+)\s*,", chunk[m.end() : end])
        if len(puts) != len(set(puts)):
            continue  # a key put twice in one chain: the first value is overwritten
        if not _input(language, chunk, m.group(1), m.end()):
            regions += value_parts(language, chunk, m.end(), end)
    for m in _DECL.finditer(code) if language == "cpp" else ():
        end = scan.closing(language, chunk, m.end() - 1)
        if end > 0 and not _input(language, chunk, m.group(1), end):
            regions += value_parts(language, chunk, m.end(), end - 1)
    filled = list(_FILLED.finditer(code))
    keys = [_key(chunk, code, m) for m in filled]
    for m, key in zip(filled, keys, strict=True):
        end = scan.closing(language, chunk, m.end() - 1)
        comma = scan.top_level_comma(code, m.end(), end - 1)
        lo = comma + 1 if comma < end - 1 else m.end()
        if keys.count(key) > 1 and comma < end - 1:
            continue  # a key put twice: one value overwrites the other (rust macros' 'h')
        if end > 0 and not _input(language, chunk, m.group(1), end):
            regions += value_parts(language, chunk, lo, end - 1)
    for m in _EXPECTED_ARG.finditer(code):
        end = scan.closing(language, chunk, m.end() - 1)
        if end < 0:
            continue
        lo, hi = m.end(), end - 1
        cut = scan.top_level_comma(code, lo, hi) if "REQUIRE" not in m.group(0) else -1
        if "CHECK" in m.group(0) or "REQUIRE" in m.group(0):
            eq = code.find("==", lo, hi)
            sides = [(lo, eq), (eq + 2, hi)] if eq >= 0 else []
        elif m.group(0).startswith("."):
            sides = [(lo, hi)]
        else:
            sides = [(lo, cut), (cut + 1, hi)] if cut < hi else []
        values = [s for s in sides if _is_value(language, chunk, *s)]
        if len(values) == 1 and (len(sides) == 2 or values == sides):
            regions += value_parts(language, chunk, *values[0])
    return regions + (table_regions(chunk) if language == "cpp" else [])


def _key(chunk: str, code: str, m: re.Match) -> tuple[str, str]:
    """(map, key) of an `expected.insert(key, value)` statement."""
    comma = scan.top_level_comma(code, m.end(), len(code))
    return m.group(1), chunk[m.end() : comma].strip()


def same_number(literals: list[str]) -> bool:
    """Do two of the literals (number or string literals of a number, `"1.0"`, `"+1"`)
    denote the same number? (A builder such as a decimal parser makes them equal.)"""
    seen = set()
    for literal in literals:
        body = literal.strip("\"'`").lstrip("+")
        try:
            value = Decimal(body)
        except InvalidOperation:
            continue
        if value in seen:
            return True
        seen.add(value)
    return False
