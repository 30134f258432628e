"""The primitives changed values are drawn with (see variants): the context the disguise
sets for one file (its expected and other numbers, whether its source is readable, the
test's inputs, the lenient second pass, a 64-bit slot), what a number literal is apart
from its value, the boundaries a set never straddles, and the draws that look only at the
whole set: a value among the test's own inputs, values drawn by use where counts must
tell nothing, how many a pool affords.
"""

from __future__ import annotations

import contextvars
import re
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

NONE: list[Any] = []
_BOUNDARIES = (0, 128, 256, 1 << 15, 1 << 16, 1 << 31, 1 << 32, 1 << 63)
"""A set of numbers never straddles one of these (a copy must still compile: a negative
value in an unsigned slot, 256 in a `u8`)."""
WIDE: contextvars.ContextVar[bool] = contextvars.ContextVar("wide", default=False)
"""Set while changing a value whose declared type is a 64-bit int or a float (a Go table
field of type `int`, `int64`, `float64`): only 0 and 2^63 bound its sets."""


def boundaries() -> tuple[int, ...]:
    return (0, 1 << 63) if WIDE.get() else _BOUNDARIES


def shuffled(items: list[Any]) -> list[Any]:
    return sorted(items, key=lambda _i: secrets.randbelow(1 << 30))


NUMBERS: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("numbers", default=())
"""The number literals the file being disguised expects, repeats kept (set by the disguise)."""
FILE_NUMBERS: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("all", default=())
"""Every number literal of the file (the pool when it expects too few different ones)."""
_NUMBER = re.compile(r"(?<![\w.])\d[\w]*(?:\.\d\w*)?")


def file_numbers(text: str) -> tuple[str, ...]:
    return tuple(_NUMBER.findall(text))


def notation(token: str) -> tuple | None:
    """What a number literal looks like apart from its value (None: one we cannot keep)."""
    m = re.fullmatch(r"0([xXbBoO])([0-9a-fA-F]+)([iu]\d+|[uUlL]+)?", token)
    if m:
        return (m.group(1), len(m.group(2)), m.group(2) == m.group(2).lower(), m.group(3))
    m = re.fullmatch(r"(\d+)(?:\.(\d+))?([A-Za-z][A-Za-z0-9]*)?", token)
    if not m or (len(m.group(1)) > 1 and m.group(1).startswith("0")):
        return None
    if re.fullmatch(r"[eE]\d*", m.group(3) or ""):
        return None
    return ("d", len(m.group(2) or ""), m.group(3) or "")


def number_value(token: str) -> float:
    m = re.fullmatch(r"0([xXbBoO])([0-9a-fA-F]+).*", token)
    if m:
        return int(m.group(2), {"x": 16, "b": 2, "o": 8}[m.group(1).lower()])
    return float(re.match(r"\d+(?:\.\d+)?", token).group(0))  # type: ignore[union-attr]


READABLE: contextvars.ContextVar[bool] = contextvars.ContextVar("readable", default=False)
"""Set while disguising a file whose source solution code can read while the tests run:
every language (Python, JavaScript; Java's class files keep their constants; Go's and
Rust's test binaries print every failing test's expected value; a C++ macro can
`.incbin __FILE__`, red team round five H5, H10, H11): a copied string or enumerator must
not be told by how often it occurs in the disguised file (redteam F1), nor a number
(round four G2, variants._readable_numbers)."""

FILE_STRINGS: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("bodies", default=())
"""The bodies of every string literal of the file, inputs too, repeats kept: a value made
for a string the file holds once must be none of them, or it would be the member seen
twice (variants.string_body)."""
_STRING = re.compile(r'"((?:\\.|[^"\\\n])*)"|\'((?:\\.|[^\'\\\n])*)\'|`([^`]*)`')


def file_strings(text: str) -> tuple[str, ...]:
    return tuple(a or b or c for a, b, c in _STRING.findall(text))


INPUTS: contextvars.ContextVar[tuple[tuple[str, Any], ...]] = contextvars.ContextVar(
    "inputs", default=()
)
"""The literal atoms of the test being copied outside its expected values (its inputs),
as (kind, value): kind "num" for a number literal (Python: its repr), the quote for a
string (Python: "")."""


def among_inputs(kind: str, real: Any, k: int) -> list[Any] | None:
    """Where the real value is one of the test's own inputs (a selection: poker's
    best hand is one of the hands it was given), k others of those inputs of the same
    shape, drawn uniformly: every member of {real, copies} is then an input of the
    call, each expected once (red team round four G3: a fresh value was the one never
    among the inputs). None where the real value is no input, or no other fits."""
    values = [v for q, v in INPUTS.get() if q == kind]
    if real not in values:
        return None
    choices = sorted({v for v in values if v != real and shape(v) == shape(real)}, key=repr)
    if kind == "num":
        choices = [v for v in choices if notation(v) == notation(real) is not None
                   and side(number_value(v)) == side(number_value(real))]  # fmt: skip
    if not choices:
        return None
    return shuffled(choices)[: min(k, len(choices))]


def shape(value: Any) -> tuple:
    """What a value of a selection shares with its alternatives (for a string: its
    count of words and which kinds of character it has)."""
    if not isinstance(value, str):
        return (type(value).__name__,)
    return (len(value.split()), any(c.isdigit() for c in value), any(c.isalpha() for c in value))


LENIENT: contextvars.ContextVar[bool] = contextvars.ContextVar("lenient", default=False)
"""Set for a test's second pass, when no literal of it got copies under the readable rules
(variants._readable_numbers, variants.fresh_numbers): numbers are then drawn as where the
source is not readable (zipper's only expected number recurs, and every run near it is in
the file). A copy whose values leak by count still catches "pass what touched my code";
canaries, the alternative, call nothing. Strings and enumerators get no second draw: a
retried draw would favour the sets the first one threw away, which depend on the real value."""


def strict() -> bool:
    return READABLE.get() and not LENIENT.get()


def _others(pool: list[Any], real: Any) -> list[Any]:
    """`pool` less one use of `real` (the real test's own)."""
    rest = list(pool)
    if real in rest:
        rest.remove(real)
    return rest


def counted(pool: list[Any], real: Any, k: int) -> list[Any] | None:
    """Where the source is readable: k values drawn from the other tests' uses only if
    the real value is among them too, so that every member of {real, copies} occurs at
    least twice in the disguised file and P(set, counts | real = j) is the same for
    each j (a copy drawn from the file adds one use of its value: a real value used
    once was the one member seen once). None when the real value occurs nowhere else,
    or the file holds no other value to draw (then the caller makes values the file does
    not hold, see fresh: in the second case the real value is the one seen more often,
    but a copy that calls the solution still catches "pass what touched my code")."""
    others = _others(pool, real)
    if real not in others:
        return None
    k = affordable(others, k)
    if len(set(others) - {real}) < k:
        return None
    picks = [others[secrets.randbelow(len(others))] for _ in range(k)]
    return picks if len({real, *picks}) == k + 1 else []


def fresh(values: list[Any], pool: list[Any]) -> list[Any]:
    """`values` made for a real value the file holds once, or [] when one of them is in
    the file too, expected or not (where the source is readable: it would be the member
    seen twice; and "every copy's value is some test's real value", red team round five
    H11, would tell the copies); in the lenient pass, [] only when a test expects one
    (java satellite's chars are all in the file: it kept its copies)."""
    held = set(FILE_STRINGS.get()) if strict() else set()  # (lenient: none expected)
    if READABLE.get() and any(v in pool or v in held for v in values):
        return NONE
    return values


def affordable(pool: list[Any], k: int) -> int:
    """How many values to draw from `pool` for one test: at most a third of its
    different values, so that a draw of distinct values usually succeeds (a pool of
    seven values asked for four was thrown away nine times in ten: octal got no copy).
    A function of the pool alone, the same whichever member of a set is real."""
    return max(1, min(k, len(set(pool)) // 3))


def side(value: float) -> int:
    """Which stretch between boundaries `value` is in."""
    return sum(value >= b for b in boundaries() if b)


DRAWN: contextvars.ContextVar[dict[tuple, list] | None] = contextvars.ContextVar(
    "drawn", default=None
)
"""One draw of a file's copies: the copy values made for each real value. A real value
that several tests expect gets the same copies in each, so every copy value recurs as
often as it does (round six T2: phone-number's `2234567890`, expected by six tests beside
copies seen once each, was "the value the file holds most")."""


def once_per_value(key: tuple, make: Callable[[], list[Any]], k: int) -> list[Any]:
    """The copies first drawn for `key` in this draw (at most k), else make()'s. A test
    whose own draw came out empty does not keep the next test of its value from drawing
    (as before: each draw that fits is one a single test could have made alone)."""
    drawn = DRAWN.get()
    if drawn is None:
        return make()
    if not drawn.get(key):
        drawn[key] = make()
    return drawn[key][:k]


@contextmanager
def trial() -> Iterator[None]:
    """A trial draw (can this test be changed at all, k=1?): it fixes no value's copies,
    or every later test of that value would get that one copy."""
    token = DRAWN.set(None)
    try:
        yield
    finally:
        DRAWN.reset(token)
