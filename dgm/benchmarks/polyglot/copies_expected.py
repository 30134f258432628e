"""Where a must-fail copy of a brace-language test may change it (see copies_text): the
expected side of each assertion (`toEqual(...)`'s argument, the side of a compared pair
that calls nothing, the literal parts of a value a bare expected name is bound to, a
variable named like `expected`), the tolerance a value compared within one may not move
inside, and, where a test has no such literal, a boolean check the file also writes
negated.
"""

from __future__ import annotations

import re
import secrets

from dgm.benchmarks.polyglot import copies_scan as scan
from dgm.benchmarks.polyglot.copies_builders import BUILT, built_regions
from dgm.benchmarks.polyglot.copies_helpers import helper_regions
from dgm.benchmarks.polyglot.copies_scan import BOUND, closing

_EXPECTED_ARG = {
    "javascript": re.compile(r"\.(?:toEqual|toBe|toStrictEqual)\s*\("),
    "java": re.compile(
        r"\.(?:isEqualTo|containsExactly|containsExactlyInAnyOrder|containsOnly"
        r"|hasMessage|isCloseTo)\s*\(|\bassertEquals\s*\("
    ),
    "rust": re.compile(r"\bassert_eq!\s*\("),
    "cpp": re.compile(r"\b(?:REQUIRE|CHECK)\s*\(|\bWithinAbs\s*\("),
    "go": re.compile(r"(?!)"),
}


def expected_regions(language: str, chunk: str) -> list[tuple[int, int]]:
    """The spans of one test's text (`chunk`) that hold its expected values: assertions'
    expected sides, what those name, `expected`-like variables, helpers' expected sides."""
    regions = []
    for m in _EXPECTED_ARG[language].finditer(scan.masked(language, chunk)):
        end = closing(language, chunk, m.end() - 1)
        if end >= 0:
            regions.append(_expected_side(language, chunk, m, end))
            regions += _bound_to(language, chunk, *regions[-1])
    for m in BOUND.finditer(scan.masked(language, chunk)):
        if scan.used_as_input(language, chunk, m.group(1), m.end()):
            continue
        end = scan.initializer_end(language, chunk, m.end())
        regions += scan.outside_calls(language, chunk, m.end(), end)
    for m in _BRACE_BOUND.finditer(scan.masked(language, chunk)) if language == "cpp" else ():
        if scan.used_as_input(language, chunk, m.group(1), m.end()):
            continue
        end = closing(language, chunk, m.end() - 1)
        regions += scan.outside_calls(language, chunk, m.end(), end - 1) if end > 0 else []
    regions += built_regions(language, chunk) if BUILT.get() else []
    return regions + helper_regions(language, chunk)


_BRACE_BOUND = re.compile(r"(?<![.\w])(expected\w*)\s*\{", re.IGNORECASE)
"""C++'s brace initialisation of an expected value (`vector<int> expected{1, 0, 1};`)."""


def _bound_to(language: str, chunk: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """Where the expected side is a bare name (`toEqual(lyrics)`): the literal parts of
    the value the test binds it to (`const lyrics = [...]`), unless it is an input too."""
    name = chunk[lo:hi].strip()
    if not re.fullmatch(r"[A-Za-z_]\w*", name) or BOUND.fullmatch(name + " = "):
        return []
    code = scan.masked(language, chunk)
    found = re.search(rf"(?<![.\w]){name}\s*(?::[^=\n]*)?=(?![=>])\s*", code[:lo])
    if not found or scan.used_as_input(language, chunk, name, found.end()):
        return []
    end = scan.initializer_end(language, chunk, found.end())
    return scan.outside_calls(language, chunk, found.end(), end)


def _expected_side(language: str, chunk: str, m: re.Match, end: int) -> tuple[int, int]:
    """The expected side of an assertion: the argument of `toEqual(...)`/`isEqualTo(...)`;
    of two compared sides, the one that calls nothing (the other calls the solution, and
    a changed input would not make a failing copy); nothing when that is unclear."""
    lo, hi = m.end(), end - 1
    masked = scan.masked(language, chunk)
    if "isCloseTo" in m.group(0) or "WithinAbs" in m.group(0):
        return lo, scan.top_level_comma(masked, lo, hi)
    if language == "rust" or m.group(0).startswith("assertEquals"):
        comma = scan.top_level_comma(masked, lo, hi)
        left, right = (lo, comma), (comma + 1, hi)
    elif language == "cpp":
        eq = masked.find("==", lo, hi)
        if eq < 0:
            return hi, hi
        left, right = (lo, eq), (eq + 2, hi)
    else:
        return lo, hi
    calls = [scan.calls_something(language, masked, a, b) for a, b in (left, right)]
    if calls == [True, False]:
        return right
    if calls == [False, True]:
        return left
    lone = [bool(_LONE_LITERAL.fullmatch(chunk[a:b].strip())) for a, b in (left, right)]
    if calls == [False, False] and lone in ([True, False], [False, True]):
        return left if lone[0] else right  # `solution.field == "Norwegian"`
    return hi, hi


_LONE_LITERAL = re.compile(r'"(?:\\.|[^"\\\n])*"|\d[\w.]*')


_CLOSE = re.compile(r"(?:\.isCloseTo|\bWithinAbs)\s*\(\s*$")


def tolerance(language: str, text: str, chunk: str, lo: int) -> float | None:
    """For the value of a comparison within a tolerance (`isCloseTo(8.00, offset(TOL))`,
    `WithinAbs(31.69, accuracy)`): the tolerance, a literal or a name the file binds to
    one (None when it is neither: no copy, a changed value within it would pass);
    0.0 for any other expected value."""
    if not _CLOSE.search(scan.masked(language, chunk[:lo])):
        return 0.0
    code = scan.masked(language, chunk)
    end = closing(language, chunk, lo - 1)
    comma = scan.top_level_comma(code, lo, end - 1)
    arg = chunk[comma + 1 : end - 1].strip()
    inner = re.fullmatch(r"(?:[\w.]*offset|[\w.]*within)\s*\((.*)\)", arg, re.DOTALL)
    arg = inner.group(1).strip() if inner else arg
    if re.fullmatch(r"[A-Za-z_]\w*", arg):
        bound = re.search(rf"\b{arg}\s*=\s*([0-9][0-9.eE+-]*)\s*;", text)
        arg = bound.group(1) if bound else ""
    try:
        return float(arg)
    except ValueError:
        return None


_TOGGLES = {
    "rust": [(r"\bassert!\s*\(\s*(?!!)", r"\bassert!\s*\(\s*!", "assert!(!", "assert!(")],
    "cpp": [(r"\bREQUIRE\s*\(", r"\bREQUIRE_FALSE\s*\(", "REQUIRE_FALSE(", "REQUIRE("),
            (r"\bCHECK\s*\(", r"\bCHECK_FALSE\s*\(", "CHECK_FALSE(", "CHECK(")],
    "java": [(r"\.isTrue\(\)", r"\.isFalse\(\)", ".isFalse()", ".isTrue()"),
             (r"\bassertTrue\s*\(", r"\bassertFalse\s*\(", "assertFalse(", "assertTrue(")],
}  # fmt: skip
"""(positive form, negative form, their texts): a boolean check becomes its opposite only
where the file itself uses both forms (a form it never uses would tell the copy), and
only a check whose argument compares nothing."""
_COMPARES = re.compile(r"&&|\|\||==|!=|<|>|\?")


def toggle(language: str, text: str, chunk: str) -> str | None:
    """The test with one boolean check turned into its opposite, or None."""
    code, whole = scan.masked(language, chunk), scan.masked(language, text)
    sites = []
    for positive, negative, neg_text, pos_text in _TOGGLES.get(language, []):
        if re.search(positive, whole) and re.search(negative, whole):
            sites += [(m, neg_text) for m in re.finditer(positive, code)]
            sites += [(m, pos_text) for m in re.finditer(negative, code)]
    for m, replacement in sorted(sites, key=lambda _s: secrets.randbelow(1 << 30)):
        open_at = code.find("(", m.start())
        if "(" in m.group(0) and open_at < m.end() and not m.group(0).endswith("()"):
            end = closing(language, chunk, open_at)
            arg = code[open_at + 1 : scan.top_level_comma(code, open_at + 1, end - 1)]
            if end < 0 or _COMPARES.search(arg) or not arg.strip("! \n"):
                continue
        return chunk[: m.start()] + replacement + chunk[m.end() :]
    return None
