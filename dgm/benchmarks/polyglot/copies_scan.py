"""The scanner the disguise of brace-language test files uses (see copies_text): tokens
that skip strings, characters and comments, bracket matching, and changing one literal."""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterator

from dgm.benchmarks.polyglot import variants

_STRING = {
    "go": r'"(?:\\.|[^"\\\n])*"|`[^`]*`',
    "rust": r'b?r(?P<hash>#*)"(?:.|\n)*?"(?P=hash)|b?"(?:\\.|[^"\\])*"',
    "cpp": r'R"(?P<delim>[^(\s]*)\((?:.|\n)*?\)(?P=delim)"|"(?:\\.|[^"\\\n])*"',
    "java": r'"""(?:.|\n)*?"""|"(?:\\.|[^"\\\n])*"',
    "javascript": r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|`(?:\\.|[^`\\])*`',
}
_CHAR = r"'(?:\\.[^']{0,8}|[^'\\\n])'"
_TOKEN = {
    lang: re.compile(
        rf"(?P<com>//[^\n]*|/\*(?:.|\n)*?\*/)|(?P<str>{pattern})"
        + (rf"|(?P<chr>{_CHAR})" if lang != "javascript" else "")
        + r"|(?P<num>(?<![\w.])\d[\w]*(?:\.\d\w*)?)|(?P<open>[({\[])|(?P<close>[)}\]])"
    )
    for lang, pattern in _STRING.items()
}


def tokens(language: str, text: str, start: int = 0, end: int | None = None) -> Iterator[re.Match]:
    return _TOKEN[language].finditer(text, start, len(text) if end is None else end)


def closing(language: str, text: str, open_at: int) -> int:
    """The index just past the bracket matching the one at `open_at` (-1 when none)."""
    depth = 0
    for tok in tokens(language, text, open_at):
        if tok.lastgroup == "open":
            depth += 1
        elif tok.lastgroup == "close":
            depth -= 1
            if depth == 0:
                return tok.end()
    return -1


def masked(language: str, text: str) -> str:
    """`text` with comments and string contents blanked (same length), so that heads
    are only found in code."""
    out = list(text)
    for tok in tokens(language, text):
        if tok.lastgroup in ("com", "str"):
            lo = tok.start() + (0 if tok.lastgroup == "com" else 1)
            hi = tok.end() - (0 if tok.lastgroup == "com" else 1)
            for i in range(lo, hi):
                if out[i] != "\n":
                    out[i] = " "
    return "".join(out)


BOUND = re.compile(r"\b(?:const|let|var|auto|final)?\s*(?:[\w:<>,\s]+\s)?"
                   r"(?<![.\w])(expected\w*|want\w*|exp)\s*(?::[^=\n]*)?:?=(?![=>])\s*",
                   re.IGNORECASE)  # fmt: skip
"""A name like `expected` bound to a value (`let expected = ...`, `want := ...`); never
a comparison (`expected == f(x)`: its right side holds the inputs)."""


_BOOL = re.compile(r"(?<![\w.])(?P<bool>true|false)(?![\w(])")
_FLIP = {"true": "false", "false": "true"}


def change_literal(language: str, chunk: str, lo: int, hi: int, k: int = 1,
                   gap: float = 0.0) -> list[tuple[str, str]]:  # fmt: skip
    """Up to k copies of `chunk`, each with the same string/number/char literal in
    [lo, hi) changed, the values drawn as one set (polyglot_variants); [] when none.
    `gap`: a tolerance the value is compared within; then only a number is changed, and
    a set two of whose members are within twice of it is thrown away (a set-level rule:
    which member is real does not enter it)."""
    found: list[re.Match] = [t for t in tokens(language, chunk, lo, hi)
                             if t.lastgroup in ("str", "num", "chr")]  # fmt: skip
    found += list(_BOOL.finditer(masked(language, chunk), lo, hi))
    found += enumerators(language, chunk, lo, hi)
    for tok in sorted(found, key=lambda _t: secrets.randbelow(1 << 30)):
        literal = tok.group(0)
        after = chunk[tok.end() :].lstrip(" \t")
        if after.startswith(":") and not after.startswith("::"):
            continue  # a map key: another key may collide with it
        if chunk[: tok.start()].endswith("[") and re.match(r"\][\w\[]", chunk[tok.end() :]):
            continue  # an array type's length, not a value
        if gap and tok.lastgroup != "num":
            continue
        if tok.lastgroup == "name":
            new = variants.enumerator(literal, k)
        elif tok.lastgroup == "bool":  # the other one: {true, false} tells nothing
            new = [_FLIP[literal]]
        elif tok.lastgroup == "num":
            new = variants.number_literal(literal, k)
            if gap and not _apart([literal, *new], 2 * gap):
                new = []
        elif tok.lastgroup == "chr":
            body = literal[1:-1]
            ok = len(body) == 1 and body.isalnum()
            new = [f"'{b}'" for b in variants.string_body(body, k)] if ok else []
        else:
            quote = re.match(r'^(b?r?#*)?("""|"|\'|`)', literal)
            if not quote or literal.startswith(("r", "br", "R")):
                continue
            q = quote.group(2)
            inner = literal[len(quote.group(0)) : len(literal) - len(q)]
            new = [quote.group(0) + b + q for b in variants.string_body(inner, k, quote.group(0))]
        new = [n for n in new if n != literal]
        if new:
            return [(chunk[: tok.start()] + n + chunk[tok.end() :], f"expected {literal} -> {n}")
                    for n in new]  # fmt: skip
    return []


def _apart(literals: list[str], gap: float) -> bool:
    """Are the numbers of `literals` pairwise more than `gap` apart?"""
    try:
        values = sorted(float(re.sub(r"[A-Za-z]+$", "", t)) for t in literals)
    except ValueError:
        return False
    return all(b - a > gap for a, b in zip(values, values[1:], strict=False))


_QUALIFIED = re.compile(r"(?<![\w.:])(?P<name>(?:[A-Za-z_]\w*(?:::|\.))+[A-Za-z_]\w*)(?![\w:])")
_ENUM_PREFIX = {
    "cpp": re.compile(r"^(?!std::)\w+(?:::\w+)+$"),
    "rust": re.compile(r"(?:^|::)[A-Z]\w*::\w+$"),
    "java": re.compile(r"^[A-Z]\w*\.[A-Z][A-Z0-9_]*$"),
    "javascript": re.compile(r"^[A-Z]\w*\.[A-Z][A-Z0-9_]*$"),
}
"""Qualified names that are values of one enum-like family (`perfect_numbers::
classification::perfect`, `Classification::Perfect`, `Color.RED`): a family's members
are exchangeable in a copy only when they are the same kind of thing (see enumerators)."""


def enumerators(language: str, chunk: str, lo: int = 0, hi: int | None = None) -> list[re.Match]:
    """The qualified names in [lo, hi) of `chunk` that name a value of a family (never a
    call, a type with arguments, a constructor or a path that goes on)."""
    rule = _ENUM_PREFIX.get(language)
    if rule is None:
        return []
    code = masked(language, chunk)
    found = []
    for m in _QUALIFIED.finditer(code, lo, len(code) if hi is None else hi):
        after = code[m.end() :].lstrip(" \t")
        if rule.search(m.group(0)) and not after.startswith(("(", "<", "{", "!")):
            found.append(m)
    return found


def family(name: str) -> str:
    return re.sub(r"(?:::|\.)\w+$", "", name)


def never_called(language: str, text: str, name: str) -> bool:
    """Is `name` used in `text` only as a plain value (a tuple variant or a function of
    the same family would not compile in another's place)?"""
    pattern = rf"(?<![\w.:]){re.escape(name)}\s*[(<{{!]"
    return not re.search(pattern, masked(language, text))


def string_parts(literal: str) -> tuple[str, str] | None:
    """(opening quote with prefix, body) of a string literal we may change (not raw)."""
    quote = re.match(r'^(b?r?#*)?("""|"|\'|`)', literal)
    if not quote or literal.startswith(("r", "br", "R")):
        return None
    q = quote.group(2)
    return quote.group(0), literal[len(quote.group(0)) : len(literal) - len(q)]


def initializer_end(language: str, chunk: str, start: int) -> int:
    """Where the expression starting at `start` ends: the first `;` or line end outside
    brackets (a multi-line `[...]` is whole; the next statement's literals, inputs among
    them, are never taken for the expected value)."""
    depth = 0
    at = start
    for tok in tokens(language, chunk, start):
        gap = chunk[at : tok.start()]
        if depth == 0 and ("\n" in gap or ";" in gap):
            return at + min(i for i in (gap.find("\n"), gap.find(";")) if i >= 0)
        if tok.lastgroup == "open":
            depth += 1
        elif tok.lastgroup == "close":
            depth -= 1
            if depth < 0:
                return tok.start()
        at = tok.end()
    gap = chunk[at:]
    stops = [i for i in (gap.find("\n"), gap.find(";")) if i >= 0]
    return at + min(stops) if stops else len(chunk)


_COMPARE = re.compile(r"(?i)^(?:\w*equal\w*|assert\w*|expect|to\w+|is\w+|require|check|"
                      r"fatalf?|errorf?|sprintf|printf|println|format|fail\w*)$")  # fmt: skip


def used_as_input(language: str, chunk: str, name: str, after: int = 0) -> bool:
    """Is `name` passed, after its binding at `after`, to a call that is no comparison or
    message (the solution, most likely)? Then it is an input too, and changing its value
    changes the input."""
    code = masked(language, chunk)
    compared = []  # spans of the comparisons' and messages' arguments
    for call in re.finditer(r"(\w+)\s*!?\s*\(", code[after:]):
        call_end = after + call.end()
        end = closing(language, code, call_end - 1)
        args = code[call_end:end] if end > 0 else ""
        if re.search(rf"\b{re.escape(name)}\b", args) and not _COMPARE.match(call.group(1)):
            return True
        if end > 0:
            compared.append((call_end, end))
    # Elsewhere it may only be compared for equality (Go's `if got != want`): a loop's
    # bound (`let trials = 100; for _ in 0..trials`, then `assert_eq!(keys.len(), trials)`:
    # a copy with 0 trials passed) or any other use makes it an input too.
    for use in re.finditer(rf"(?<!\w){re.escape(name)}\b", code[after:]):
        at = after + use.start()
        field = code[at - 1 : at] == "." and code[at - 2 : at] != ".."  # `x.name`, not `0..name`
        if field or any(lo <= at < hi for lo, hi in compared):
            continue
        before = code[:at].rstrip()
        later = code[at + len(name) :].lstrip()
        if not (before.endswith(_EQUALITY) or later.startswith(_EQUALITY)):
            return True
    return False


_EQUALITY = ("==", "!=")


_VALUE_CALL = re.compile(
    r"(?:(?<![\w:.])(?:Some|Ok|Err|String::from|Box::new|Arrays\.asList|List\.of|Set\.of"
    r"|Collections\.singletonList|Collections\.unmodifiableList|Optional\.of)"
    r"|\.(?:to_string|to_owned|into))\s*$"
)
"""Calls that only wrap a value (`Some(5)`, `Ok("x".to_string())`, `Arrays.asList("1")`):
their arguments are the value, not an input to the solution."""


_RUST_VARIANT = re.compile(r"(?<![\w:.])(?:\w+::)*[A-Z]\w*\s*$")
"""Rust's tuple variants and structs (`Error::InvalidRowCount(3)`): capitalised, so never
a function (snake case)."""


def value_call(code: str, open_at: int, language: str = "") -> bool:
    """Is the `(` at `open_at` the call of a value wrapper (_VALUE_CALL, a Rust tuple
    variant)?"""
    before = code[max(0, open_at - 60) : open_at]
    return bool(_VALUE_CALL.search(before)) or (
        language == "rust" and bool(_RUST_VARIANT.search(before))
    )


def calls_something(language: str, code: str, lo: int, hi: int) -> bool:
    """Does [lo, hi) of masked `code` call anything but a value wrapper?"""
    return any(not value_call(code, i, language) for i in range(lo, hi) if code[i] == "(")


def outside_calls(
    language: str, chunk: str, lo: int, hi: int,
    transparent: Callable[[str, int], bool] | None = None,
) -> list[tuple[int, int]]:  # fmt: skip
    """The parts of [lo, hi) not inside a call's parentheses or an index `x[...]` (a value
    wrapper's are inside the value; `transparent(code, i)`: whether the call opening at i
    holds the value, default value_call): an initializer's literals there are the value,
    the others are arguments."""
    transparent = transparent or (lambda code, i: value_call(code, i, language))
    code = masked(language, chunk)
    parts, depth, start = [], 0, lo
    for i in range(lo, hi):
        char = code[i]
        before = code[:i].rstrip()[-1:] if char in "([" else ""
        opens_call = char == "(" or (char == "[" and (before.isalnum() or before in "_)]"))
        if depth == 0 and char == "(" and transparent(code, i):
            continue
        if depth == 0 and opens_call:
            parts.append((start, i))
            depth = 1
        elif depth and char in "([{":
            depth += 1
        elif depth and char in ")]}":
            depth -= 1
            if depth == 0:
                start = i + 1
    if depth == 0:
        parts.append((start, hi))
    return parts


def top_level_comma(chunk: str, lo: int, hi: int) -> int:
    depth = 0
    for i in range(lo, hi):
        char = chunk[i]
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth == 0:
            return i
    return hi
