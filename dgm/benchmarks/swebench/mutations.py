"""Exchangeable changes of one literal: the original and its must-fail copies form a
family in which nothing structural tells the original apart.

- Numbers: an evenly spaced run of k+1 values (step 10**trailing zeros for ints, one unit
  of the last written decimal for floats) with the original at a uniformly random rank,
  so it is neither the smallest nor the middle more often than any copy.
- Strings and bytes: every copy changes the same character position, to distinct
  characters of the same class (digit, lower, upper; digits preferred where they allow
  as many copies), drawn so the original's rank in the class's order is uniform (fewer
  copies where a character has fewer than k neighbours on a side): the k+1 members are
  pairwise one edit apart, so there is no centre and no end.

A literal that cannot be changed this way (hex or exponent numbers, strings with
escapes (not raw ones) or without a letter or digit) is no site: a one-sided change would name its
original to any test that reads its own file. What stays: a reader with a model of what
a plausible value is (a real word against its one-letter variants, a round number) can
still guess better than chance; each family is one guess, and a forger must guess every
family of the evaluation right.
"""

from __future__ import annotations

import ast
import builtins
import random
import re
import string
from dataclasses import dataclass

_INT = re.compile(r"-?\s*[1-9]\d*|-?\s*0")
_FLOAT = re.compile(r"-?\s*\d+\.(\d+)")
CLASSES = (string.digits, string.ascii_lowercase, string.ascii_uppercase)
# What an expected exception is swapped for: built-in types (their relations are known).
EXCEPTIONS = {n: t for n, t in vars(builtins).items() if isinstance(t, type)
              and issubclass(t, Exception) and not issubclass(t, Warning)}  # fmt: skip
_RAISES = {"raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp"}


@dataclass(frozen=True)
class Site:
    """One literal that a passing run of the test must have compared for equality."""

    start: int  # character offsets into the file's source
    end: int
    source: str
    letters: bool = False
    """Change a letter rather than a digit: a text looked for in a collection could meet
    a numbered sibling (`"item_1" in names` beside `"item_2"`)."""

    @property
    def exception(self) -> bool:
        return self.source in EXCEPTIONS

    def changes(self, k: int, rng: random.Random) -> list[str]:
        """k different spellings; with the original they are exchangeable (or [])."""
        if self.source in EXCEPTIONS:
            return exception_family(self.source, k, rng)
        return number_family(self.source, k, rng) or string_family(
            self.source, k, rng, self.letters
        )


def number_family(source: str, k: int, rng: random.Random, rank: int | None = None) -> list[str]:
    """k numbers of the original's notation, evenly spaced with it, the original at `rank`
    (uniformly random when None)."""
    text = source.replace(" ", "")
    rank = rng.randrange(k + 1) if rank is None else rank
    if _INT.fullmatch(source):
        value = int(text)
        digits = str(abs(value))
        step = 10 ** (len(digits) - len(digits.rstrip("0"))) if value else 1
        return [str(value + (i - rank) * step) for i in range(k + 1) if i != rank]
    match = _FLOAT.fullmatch(source)
    if match:
        places = len(match.group(1))
        units = int(text.replace(".", ""))  # the value in units of its last decimal
        out = []
        for i in range(k + 1):
            if i != rank:
                n = units + i - rank
                sign, n = ("-" if n < 0 else ""), abs(n)
                whole, frac = divmod(n, 10**places)
                out.append(f"{sign}{whole}.{frac:0{places}d}")
        return out
    return []


def string_family(source: str, k: int, rng: random.Random, letters: bool = False) -> list[str]:
    if not source or source[-1] not in "'\"":
        return []
    quote = source[-1]
    first = source.find(quote)
    if "\\" in source and "r" not in source[:first].lower():
        return []  # an escape: a raw string's backslashes are plain characters
    spots = [
        i for i in range(first + 1, len(source) - 1) if source[i].isascii() and source[i].isalnum()
    ]
    if source.startswith(quote * 3, first) or not spots:
        return []
    # The original must be able to take any rank among the k+1 members in its class's
    # order (else "the smallest character" finds a "0" original every time): a spot with
    # k characters of its class on each side, or as many as the best spot has.
    rooms = {i: _room(source[i]) for i in spots}
    k = min(k, max(rooms.values()))
    spots = [i for i in spots if rooms[i] >= k]
    spots = [i for i in spots if source[i].isdigit() != letters] or spots
    if k < 1:
        return []
    i = rng.choice(spots)
    alphabet = next(c for c in CLASSES if source[i] in c)
    at = alphabet.index(source[i])
    below = rng.randrange(k + 1)  # the original's rank, uniform
    chars = rng.sample(alphabet[:at], below) + rng.sample(alphabet[at + 1 :], k - below)
    rng.shuffle(chars)
    return [source[:i] + c + source[i + 1 :] for c in chars]


def _room(char: str) -> int:
    alphabet = next(c for c in CLASSES if char in c)
    at = alphabet.index(char)
    return min(at, len(alphabet) - 1 - at)


def exception_family(name: str, k: int, rng: random.Random) -> list[str]:
    """k built-in exception types unrelated to `name` (neither catches the other): code
    that raises `name` fails each copy. Drawn from `name`'s depth class, which is the
    same pool for every member (a pool of common types alone named a rarer original).
    None for an alias (`IOError` is `OSError`): the pool would hold the type itself, whose
    copy passes beside its original (sqlfluff-1763's gold was called tampered so), and
    the one member spelled as an alias would name the original."""
    if EXCEPTIONS[name].__name__ != name:
        return []
    pool = [n for n in exception_class(name) if n != name]
    return rng.sample(pool, min(k, len(pool)))


def exception_class(name: str) -> list[str]:
    """Built-in exception types at the same depth of the hierarchy as `name`: pairwise
    unrelated (none catches another), and the same list for each of its members, so the
    pool does not depend on which member is the original (aliases such as IOError left
    out)."""
    depth = len(EXCEPTIONS[name].__mro__)
    return sorted(
        n for n, t in EXCEPTIONS.items()
        if t.__name__ == n and len(t.__mro__) == depth and t.__bases__[0] is not BaseException
        and "Group" not in n
    )  # fmt: skip


def superclasses(name: str, rng: random.Random) -> list[str]:
    """Built-in exception types that catch `name` (Exception included), in random order."""
    out = [c.__name__ for c in EXCEPTIONS[name].__mro__[1:]
           if c.__name__ in EXCEPTIONS and EXCEPTIONS[c.__name__] is c]  # fmt: skip
    rng.shuffle(out)
    return out


def expected_exception(node: ast.expr) -> ast.Name | None:
    """The built-in exception type a `raises(E, ...)` / `assertRaises(E)` call expects."""
    if not isinstance(node, ast.Call) or not node.args:
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    first = node.args[0]
    if name in _RAISES and isinstance(first, ast.Name) and first.id in EXCEPTIONS:
        # an alias (`IOError` is `OSError`) is no site: its pool would hold the type itself
        return first if EXCEPTIONS[first.id].__name__ == first.id else None
    return None


def literal_nodes(node: ast.expr) -> list[ast.expr]:
    """The literals of an expected value: itself, or the items (dict values) of a
    list, tuple, set or dict display."""
    if _literal(node):
        return [node]
    items: list[ast.expr | None] = []
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        items = list(node.elts)
    elif isinstance(node, ast.Dict):
        items = list(node.values)
    return [n for n in items if n is not None and _literal(n)]


def _literal(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
        return isinstance(node, ast.Constant) and type(node.value) in (int, float)
    return isinstance(node, ast.Constant) and type(node.value) in (int, float, str, bytes)
