"""Changed values for must-fail copies, drawn so that the real value cannot be told from
its copies by the way they were made.

For one test the judge makes k must-fail copies that all change the same literal, and
draws the k+1 values {real, copies} as one set in which the real value's place is
uniform: where the real value is one of the test's own inputs (a selection), other
inputs of the same shape (among_inputs); numbers are other numbers of the same notation
the file itself uses, drawn by how often it uses them (so a prior on plausible numbers
favours neither; where the source is readable, so that counts tell nothing either,
_readable_numbers), or where the file has too few, an evenly spaced run (step d,
1 <= d <= 9 units of the literal's last digit) with the real one at a uniformly drawn
rank, (d, rank) drawn again while the run would cross zero or a type's width; a string
has the same word (or the same character, kept to the file's token grammar) swapped for
k others of the same kind; a collection has one element changed that way. A draw is
thrown away only by a rule that looks at the whole set (a repeated value, a hex literal
that would change width), never at which member is real: given the set, every member is
equally likely to be the real one to an attacker who knows this code, but for a run
near zero (fewer (d, rank) fit a smaller real value: at most 1.25 times chance for k=4,
real 0). What remains is prior knowledge of plausible answers (README). The context the
disguise sets and the drawing primitives live in value_draws.
"""

from __future__ import annotations

import collections
import contextvars
import re
import secrets
from decimal import Decimal
from typing import Any

from dgm.benchmarks.polyglot.made_strings import made
from dgm.benchmarks.polyglot.value_draws import (
    FILE_NUMBERS,
    FILE_STRINGS,
    LENIENT,
    NONE,
    NUMBERS,
    READABLE,
    affordable,
    among_inputs,
    boundaries,
    counted,
    notation,
    number_value,
    once_per_value,
    shape,
    shuffled,
    side,
    strict,
)


def from_file(token: str, k: int) -> list[str] | None:
    """k other literals of the same notation drawn from the file's own numbers (where
    the source is readable: _readable_numbers), else drawn from its expected numbers
    (all its numbers if too few) by how often the file uses each, the real one
    included: so P(set | real) is the same for every member, and a prior on plausible
    numbers favours none. [] when a draw repeats a value or the set straddles a boundary
    (see int_run): never drawn again, which would favour the real value; None when the
    file has too few different numbers of the notation."""
    kind = notation(token)
    if kind is not None and strict():
        return _readable_numbers(token, kind, k)
    if kind is not None and READABLE.get():  # (the lenient pass)
        matched = _count_matched(token, kind, k)
        if matched != []:
            return matched
    return by_use(token, kind, k)


def by_use(token: str, kind: tuple | None, k: int) -> list[str] | None:
    """from_file's draw where counts may tell (see from_file)."""
    for numbers in (NUMBERS.get(), FILE_NUMBERS.get()):
        pool = [t for t in numbers if notation(t) == kind]
        if kind is not None and len(set(pool) - {token}) >= affordable(pool, k) + 1:
            break
    else:
        return None
    k = affordable(pool, k)
    picks = [pool[secrets.randbelow(len(pool))] for _ in range(k)]
    values = [number_value(t) for t in [token, *picks]]
    if len(set(values)) < k + 1 or any(min(values) < b <= max(values) for b in boundaries()):
        return []
    return picks


def _readable_numbers(token: str, kind: tuple, k: int) -> list[str] | None:
    """Numbers where the source is readable, so that how often each member of {real,
    copies} occurs in the disguised file tells nothing (red team round four G2: a number
    the file expected once was the real one). By the real value's uses:
    - it recurs among the expected numbers: copies drawn (counted) among the other
      uses of expected numbers, which then recur too;
    - it is expected once but occurs elsewhere (an input): copies drawn, by use, among
      the numbers the file uses but never expects, each then expected once too;
    - it occurs once in the whole file: None (the caller makes a run of numbers the
      file does not hold, fresh_numbers).
    Only values on the real one's side of every boundary are drawn (a set that would
    straddle one is never made, so never thrown away). [] when there are too few."""
    where = side(number_value(token))
    expected = [t for t in NUMBERS.get() if notation(t) == kind and side(number_value(t)) == where]
    every = [t for t in FILE_NUMBERS.get() if notation(t) == kind]
    if expected.count(token) >= 2:
        return counted(expected, token, k) or NONE
    if every.count(token) < 2:
        return None
    inputs = [t for t in every if t not in expected and side(number_value(t)) == where]
    k = affordable(inputs, k)
    if len(set(inputs)) < k:
        return NONE
    picks = [inputs[secrets.randbelow(len(inputs))] for _ in range(k)]
    return picks if len({token, *picks}) == k + 1 else NONE


def _count_matched(token: str, kind: tuple, k: int) -> list[str] | None:
    """The lenient pass's numbers (value_draws.LENIENT) where the source is readable: k
    values the file holds once fewer than the real one (so that, copies made, each member
    occurs as often as it), on its side of every boundary, uniformly among those values;
    None where the real value occurs once (the caller makes a run whose values no test
    expects, fresh_numbers); [] where too few fit (then drawn by use, values_draws.LENIENT:
    a copy that leaks by count still catches "pass what touched my code")."""
    every = [t for t in FILE_NUMBERS.get() if notation(t) == kind]
    uses = every.count(token)
    if uses < 2:
        return None
    where = side(number_value(token))
    fits = sorted({t for t in every if t != token and every.count(t) == uses - 1
                   and side(number_value(t)) == where})  # fmt: skip
    k = affordable(fits + [token], k) if fits else k
    return shuffled(fits)[:k] if len(fits) >= k else NONE


def fresh_numbers(values: list[str]) -> list[str]:
    """A run's literals, or [] when one of them is in the file too (where the source is
    readable: it would be the member seen twice, the real one seen once); in the lenient
    pass, [] when a test expects one of them (a value no test expects is preferred to one
    taken from another test: "every copy's value is some test's real value" would tell
    it, red team round five H11)."""
    if strict() and any(v in FILE_NUMBERS.get() for v in values):
        return NONE
    if READABLE.get() and any(v in NUMBERS.get() for v in values):
        return NONE
    return values


RUN_TRIES = 200


def int_run(value: int, k: int) -> list[int]:
    """k other ints: value at a uniform rank in an evenly spaced run of k+1 (step 1-9),
    (step, rank) drawn again while the run straddles a boundary ([] if none fits). A
    draw thrown away instead would leave a value near zero with no copy more often,
    and the redrawn file (disguise.DRAWS) or the test picked as mutable would then
    tell the real member: it was the one nearer zero (red team round four G2)."""
    for _ in range(RUN_TRIES):
        step, rank = 1 + secrets.randbelow(9), secrets.randbelow(k + 1)
        run = [value + (j - rank) * step for j in range(k + 1)]
        if not any(run[0] < b <= run[-1] for b in boundaries()):
            return [v for v in run if v != value]
    return NONE


def number_literal(token: str, k: int) -> list[str]:
    """k other number literals in the token's own notation (hex stays hex, same width and
    case; decimals keep their count of digits; suffix kept), or [] when it has none.
    (Drawn for each test alone: a number several tests expect is drawn from the file's
    numbers by use, value_draws.counted, so its copies recur as it does.)"""
    selected = among_inputs("num", token, k)
    if selected:
        return selected
    drawn = from_file(token, k)
    if drawn is not None:
        return drawn
    return _fresh_run(token, k)


def _fresh_run(token: str, k: int) -> list[str]:
    """A run around a number the file holds once (where the source is readable): [] when
    the file holds one of its values (it would be the member seen twice); in the lenient
    pass, the run when no test expects its values (a value no test expects before one
    taken from a test: red team round five H11's "every copy's value is some test's real
    value"), else numbers drawn by use. One run, never drawn again: a run redrawn while
    it met the file's numbers put the real value at its low end (smaller numbers are
    more often in a file): "the smallest is real" 0.58 on C++ against chance 0.48."""
    run = _number_run(token, k)
    if not READABLE.get() or not run or not set(FILE_NUMBERS.get()).intersection(run):
        return run
    if not LENIENT.get():
        return NONE
    if not set(NUMBERS.get()).intersection(run):
        return run
    return by_use(token, notation(token), k) or NONE


def _number_run(token: str, k: int) -> list[str]:
    """k literals of an evenly spaced run around `token`, in its notation ([] if none)."""
    m = re.fullmatch(r"0([xXbBoO])([0-9a-fA-F]+)([iu]\d+|[uUlL]+)?", token)
    if m:
        base = {"x": 16, "b": 2, "o": 8}[m.group(1).lower()]
        digits = m.group(2)
        try:
            run = int_run(int(digits, base), k)
        except ValueError:
            return NONE
        fmt = {16: "x", 2: "b", 8: "o"}[base]
        out = [format(v, fmt).zfill(len(digits)) for v in run]
        if any(len(o) != len(digits) for o in out):
            return NONE
        if digits != digits.lower():
            out = [o.upper() for o in out]
        return [f"0{m.group(1)}{o}{m.group(3) or ''}" for o in out]
    m = re.fullmatch(r"(\d+)(?:\.(\d+))?([A-Za-z][A-Za-z0-9]*)?", token)
    if not m or (len(m.group(1)) > 1 and m.group(1).startswith("0")):
        return NONE  # `1_000`, `1e9`, `007`: no notation we can keep
    suffix = m.group(3) or ""
    if re.fullmatch(r"[eE]\d*", suffix):
        return NONE
    places = len(m.group(2) or "")
    scaled = int(m.group(1) + (m.group(2) or ""))
    run = int_run(scaled, k)
    if not run:
        return NONE
    if places:
        text = [str(Decimal(v).scaleb(-places)) for v in run]
        text = [f"{Decimal(t):.{places}f}" for t in text]
    else:
        text = [str(v) for v in run]
    return [t + suffix for t in text]


STRINGS: contextvars.ContextVar[tuple[tuple[str, str], ...]] = contextvars.ContextVar(
    "strings", default=()
)
"""(quote, body) of the string literals the file expects, repeats kept (set by the
disguise; Python: quote "")."""


def drawn(pool: list[Any], real: Any, k: int) -> list[Any] | None:
    """k values drawn with replacement from `pool` (the real value's own uses included,
    so P(set | real) is the same for every member); [] when a value repeats (never drawn
    again: that would favour the real one); None when the pool has too few values."""
    if READABLE.get():
        return counted(pool, real, k)
    k = affordable(pool, k)
    if len(set(pool) - {real}) < k:
        return None
    picks = [pool[secrets.randbelow(len(pool))] for _ in range(k)]
    return picks if len({real, *picks}) == k + 1 else []


NAMES: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("names", default=())
"""The enumerators (qualified names of one family, copies_scan.enumerators) the file
expects, repeats kept (set by the disguise)."""


def enumerator(name: str, k: int) -> list[str]:
    """k other members of `name`'s family that the file expects, drawn as numbers are
    (by how often the file expects each, the real one's own uses included), written as
    the file writes them; [] when the family has too few."""
    if LENIENT.get():
        return NONE
    prefix = re.sub(r"(?:::|\.)\w+$", "", name)
    pool = [n for n in NAMES.get() if re.sub(r"(?:::|\.)\w+$", "", n) == prefix]
    if name not in pool:
        return NONE
    return drawn(pool, name, k) or NONE


def string_body(body: str, k: int, quote: str = "") -> list[str]:
    """k other string bodies (see _string_body), the same for each test expecting it."""
    return once_per_value(("str", quote, body), lambda: _string_body(body, k, quote), k)


def _string_body(body: str, k: int, quote: str = "") -> list[str]:
    """k other string bodies: other strings the file expects (written with the same
    quote), drawn as numbers are; where it expects too few, one word swapped for k other
    words of the file of the same kind (case, length), else one letter or digit for k
    others of its class."""
    pool = [b for q, b in STRINGS.get() if q == quote]
    held = READABLE.get() and FILE_STRINGS.get().count(body) > 1
    if LENIENT.get():  # only made afresh what the first pass matched (the real one is
        # then the member seen more often, but "pass what touched my code" is caught)
        return made(body, k, pool) if held else NONE
    selected = among_inputs(quote, body, k)
    if selected:
        return selected
    picked = drawn(pool, body, k)
    if picked is not None:
        return picked
    return _strings_matched(body, k, pool) if held else made(body, k, pool)


def _strings_matched(body: str, k: int, pool: list[str]) -> list[str]:
    """Where the real string is expected once but the file holds it elsewhere too (an
    input: transpose's rows, pov's node names; Go say's `description: "twenty-two"`): k
    other expected strings (`pool`) of its shape that the file holds once fewer, drawn
    uniformly, so that each member occurs as often (a string made afresh was the member
    seen once, the real one the member seen most; any string of the file, an import path
    `"testing"`, was no plausible answer); [] where too few are."""
    every = collections.Counter(FILE_STRINGS.get())
    uses, kind = every[body] - 1, shape(body)
    fits = sorted(b for b in set(pool) if b != body and every[b] == uses and shape(b) == kind)
    k = affordable(fits + [body], k) if fits else k
    return shuffled(fits)[:k] if len(fits) >= k else NONE
