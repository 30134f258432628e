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

import contextvars
import re
import secrets
from decimal import Decimal
from typing import Any

from dgm.benchmarks.polyglot.copies import TOKENS, WORDS
from dgm.benchmarks.polyglot.value_draws import (
    FILE_NUMBERS,
    LENIENT,
    NONE,
    NUMBERS,
    READABLE,
    affordable,
    among_inputs,
    boundaries,
    counted,
    fresh,
    notation,
    number_value,
    shuffled,
    side,
    strict,
)

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _from_file(token: str, k: int) -> list[str] | None:
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


def fresh_numbers(values: list[str]) -> list[str]:
    """A run's literals, or [] when one of them is in the file too (where the source is
    readable: it would be the member seen twice, the real one seen once)."""
    if strict() and any(v in FILE_NUMBERS.get() for v in values):
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
    case; decimals keep their count of digits; suffix kept), or [] when it has none."""
    selected = among_inputs("num", token, k)
    if selected:
        return selected
    drawn = _from_file(token, k)
    if drawn is not None:
        return drawn
    return fresh_numbers(_number_run(token, k))


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


def _word_class(word: str) -> tuple[str, int]:
    shape = "U" if word.isupper() else "T" if word.istitle() else "l" if word.islower() else ""
    return shape, len(word)


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
    """k other string bodies: other strings the file expects (written with the same
    quote), drawn as numbers are; where it expects too few, one word swapped for k other
    words of the file of the same kind (case, length), else one letter or digit for k
    others of its class."""
    if LENIENT.get():
        return NONE
    selected = among_inputs(quote, body, k)
    if selected:
        return selected
    pool = [b for q, b in STRINGS.get() if q == quote]
    picked = drawn(pool, body, k)
    if picked is not None:
        return picked
    return fresh(_word_swapped(body, k), pool) or fresh(_char_changed(body, k), pool)


def _word_swapped(body: str, k: int) -> list[str]:
    """k strings made from `body` with one word swapped for others of the file ([] if
    none fits)."""
    spots = list(re.finditer(r"(?<![\\A-Za-z])[A-Za-z]{2,}(?![A-Za-z])", body))
    for m in shuffled(spots):
        word = m.group(0)
        kind = _word_class(word)
        others = [w for w in WORDS.get() if w != word and _word_class(w) == kind and kind[0]]
        if len(others) >= k:
            picks = shuffled(others)[:k]
            return [body[: m.start()] + w + body[m.end() :] for w in picks]
    return NONE


def _char_changed(body: str, k: int) -> list[str]:
    """k strings made from `body` with one letter or digit changed for others of its
    class (where the file holds a word-swapped one, e.g. its only two words). Where the
    file's strings hold other tokens of the same length with a character of that class
    at that place (cards: `6S`, `7H`), the new characters are theirs, so a changed
    token is one of the file's grammar (round four G3: `6S` -> `6M` was no card)."""
    plain = [m.start() for m in re.finditer(r"[A-Za-z0-9]", body)
             if m.start() == 0 or body[m.start() - 1] != "\\"]  # fmt: skip
    if not plain:
        return NONE
    grammar = {i: _token_chars(body, i) for i in plain}
    kept = [i for i in plain if grammar[i]]
    i = secrets.choice(kept or plain)
    char = body[i]
    pool = _LETTERS.upper() if char.isupper() else "0123456789" if char.isdigit() else _LETTERS
    pool = grammar[i] or [c for c in pool if c != char]
    picks = shuffled(pool)[:k]
    return [body[:i] + c + body[i + 1 :] for c in picks]


def _class(char: str) -> str:
    return "U" if char.isupper() else "d" if char.isdigit() else "l"


def _token_chars(body: str, i: int) -> list[str]:
    """The other characters of the class of body[i] that the file's tokens of the same
    length hold at that place."""
    lo, hi = i, i + 1
    while lo > 0 and body[lo - 1].isalnum():
        lo -= 1
    while hi < len(body) and body[hi].isalnum():
        hi += 1
    at, size, char = i - lo, hi - lo, body[i]
    found = {t[at] for t in TOKENS.get() if len(t) == size and _class(t[at]) == _class(char)}
    return sorted(found - {char})


def python_value(value: Any, k: int) -> list[Any]:
    """k other Python values of the same shape (fewer for a bool: one), or []."""
    if isinstance(value, bool):
        return NONE if LENIENT.get() else [not value]
    if isinstance(value, (int, float)) and value >= 0:
        selected = among_inputs("num", repr(value), k)
        if selected:
            return [type(value)(t) for t in selected]
    if isinstance(value, int):
        drawn = _from_file(str(value), k) if value >= 0 else None
        if drawn is not None:
            return [int(t) for t in drawn]
        run = int_run(value, k)
        return run if fresh_numbers([str(abs(v)) for v in run]) else NONE
    if isinstance(value, float):
        text = repr(value)
        if not re.fullmatch(r"-?\d+\.\d+", text):
            return NONE
        drawn = _from_file(text, k) if value >= 0 else None
        if drawn is not None:
            return [float(t) for t in drawn]
        places = len(text.split(".")[1])
        scaled = int(text.replace(".", "").replace("-", "")) * (-1 if value < 0 else 1)
        run = int_run(scaled, k)
        made = [float(Decimal(v).scaleb(-places)) for v in run]
        return made if fresh_numbers([repr(abs(v)) for v in made]) else NONE
    if isinstance(value, str):
        return string_body(value, k)  # (Python's pool holds values: quote "")
    if isinstance(value, bytes):
        if not value:
            return NONE
        i = secrets.randbelow(len(value))
        return [value[:i] + bytes([v]) + value[i + 1 :] for v in int_run(value[i], k)]
    if isinstance(value, (list, tuple)):
        for i in shuffled(list(range(len(value)))):
            found = python_value(value[i], k)
            if found:
                return [type(value)([*value[:i], v, *value[i + 1 :]]) for v in found]
        return NONE
    if isinstance(value, (set, frozenset)):
        for item in shuffled(list(value)):
            found = [v for v in python_value(item, k) if v not in value]
            if found:
                return [type(value)((value - {item}) | {v}) for v in found]
        return NONE
    if isinstance(value, dict):
        for key in shuffled(list(value)):
            found = python_value(value[key], k)
            if found:
                return [{**value, key: v} for v in found]
    return NONE
