"""What the test files already hold, counted token by token, and families drawn so that
the count does not name the original.

The rewritten test files are on disk while the tests run, so code under test can count
each member of a copy family in them. A copy's spelling made afresh occurs once (in its
copy); an original the file also uses elsewhere occurs more often, and the member spelled
most often was the original at 62% of sites (red team round four, G1). Here every member
of a family is drawn from one *count class*: values of the original's shape that occur in
the disguised files exactly as often as the original does outside the family's own
changed places (fresh spellings where that is never, values the files already hold
where it is more), with the original at a uniformly random rank in the members' order
(numeric order for numbers, text order otherwise). Where no such value exists the site
makes no family; the planner takes another site or test.

Counting is token-aware: a string is its value (one STRING token), a number is its
NUMBER token (so `5` is not counted inside `0.5` or `x5`), an exception type its NAME
token.
"""

from __future__ import annotations

import ast
import io
import random
import re
import tokenize
from collections import Counter
from collections.abc import Callable, Iterable
from functools import lru_cache

from dgm.benchmarks.swebench import mutations

Key = tuple[str, str]  # (kind, text): "s"/"b" string/bytes value, "n" number, "x" a name,
# "t" any of them by its text (what a count by token sees: the string "7" and the number 7)
_WORDISH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def tokens(text: str) -> Counter[Key]:
    """Each string, number and name token of a Python source, counted."""
    out: Counter[Key] = Counter()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            key = _token_key(tok.type, tok.string)
            if key is not None:
                out[key] += 1
                out[("t", key[1])] += 1  # by text alone: the string "7" and the number 7
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return out


def _token_key(kind: int, text: str) -> Key | None:
    if kind == tokenize.NUMBER:
        return ("n", text)
    if kind == tokenize.NAME:
        return ("x", text)
    if kind == tokenize.STRING:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return None  # an f-string piece
        if isinstance(value, str):
            return ("s", value)
        if isinstance(value, bytes):
            return ("b", value.decode("latin-1"))
    return None


@lru_cache(maxsize=1 << 16)  # pools repeat across sites and tests
def key_of(source: str) -> Key | None:
    """The key of a member's spelling (`-5` counts as the token `5`)."""
    if source in mutations.EXCEPTIONS:
        return ("x", source)
    text = source.replace(" ", "").lstrip("-")
    try:
        found = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    real = [t for t in found if t.type not in (tokenize.NEWLINE, tokenize.ENDMARKER)]
    return _token_key(real[0].type, real[0].string) if len(real) == 1 else None


class Counts:
    """How often each value occurs in the test files: as a token (`tokens`) and as text
    anywhere in them (`text.count`), the two ways a reader counts."""

    def __init__(self, texts: Iterable[str]) -> None:
        self.texts = list(texts)
        self.text = "\n".join(self.texts)
        self.tokens: Counter[Key] = Counter()
        for text in self.texts:
            self.tokens += tokens(text)
        self._seen: dict[str, tuple[int, int]] = {}  # a big file's text is searched once

    def of(self, spelling: str) -> tuple[int, int]:
        """(tokens, text): a number's text is counted as a token only (`5` inside `0.5`
        or `x5` is no use of it), as is a text under three characters."""
        if spelling not in self._seen:
            key = key_of(spelling)
            text = text_of(spelling)
            wordy = key is not None and key[0] != "n" and len(text) > 2
            self._seen[spelling] = (
                self.tokens[("t", text)], (self.text.count(text) if wordy else 0)
            )  # fmt: skip
        return self._seen[spelling]


@lru_cache(maxsize=1 << 16)  # pools repeat across sites and tests
def text_of(spelling: str) -> str:
    """What a member reads as in a file: a string's value, a number's digits, a name."""
    if spelling in mutations.EXCEPTIONS:
        return spelling
    if spelling[-1:] in "'\"":
        return _string_value(spelling)
    return spelling.replace(" ", "").lstrip("-")


def neutral_family(
    source: str, k: int, rng: random.Random, counts: Counts, target: tuple[int, int],
    avoid: Callable[[str], bool], letters: bool = False,
) -> list[str]:  # fmt: skip
    """Up to k spellings for a site whose original occurs `target` times (tokens, text) in
    the disguised files outside the family's changed places. A spelling that `avoid`
    allows occurs `counts.of` times there besides its own copy's changed places, so it
    qualifies when that is `target` (fresh spellings where the original occurs nowhere
    else) or, with the original at a uniform rank by count, near it."""
    if source in mutations.EXCEPTIONS:
        pool = [n for n in mutations.exception_class(source) if n != source]
        # no value order: a type's name says nothing of its rank, and one class holds
        # each member's whole pool (a uniform draw from it is exchangeable)
        return _ranked(source, pool, k, rng, counts, target, avoid, None)
    if mutations.number_family(source, 1, rng):
        pool = _number_pool(source, k, rng, counts.tokens)
        return _ranked(source, pool, k, rng, counts, target, avoid, _number_value, True)
    fresh = _one_spot(source, k, rng, letters)
    pool = list(fresh) + ([] if letters or not fresh else _string_pool(source, counts.tokens))
    return _ranked(source, pool, k, rng, counts, target, avoid, _string_value)


def _ranked(
    source: str, pool: Iterable[str], k: int, rng: random.Random, counts: Counts,
    target: tuple[int, int], avoid: Callable[[str], bool],
    order: Callable[[str], object] | None, numeric: bool = False,
) -> list[str]:  # fmt: skip
    """k of the pool's spellings, the original at a uniformly random rank among them in
    `order` where none occurs elsewhere, by count where they do (numbers: both). Where
    the original occurs nowhere else, the members occur nowhere else either (equal
    counts); where it does, they are values the files hold too
    (a reader cannot set the fresh ones aside), each above or below the original's count
    as its rank asks (equal counts fall on a side at random)."""
    mine = _identity(source)
    seen: set[object] = set()
    found: list[tuple[str, tuple[int, int]]] = []
    kind = tuple(n > 0 for n in target)
    for spelling in pool:
        key = _identity(spelling)
        if key is None or key == mine or key in seen or avoid(spelling):
            continue
        seen.add(key)
        count = counts.of(spelling)
        if tuple(n > 0 for n in count) == kind and (count == target or any(target)):
            found.append((spelling, count))
    if order is None and not any(target):
        return rng.sample([s for s, _ in found], min(k, len(found)))
    at = order(source) if order is not None else None
    if not any(target) or not numeric:
        # one order: by value where all counts are equal (none elsewhere), else by count
        # (values the files hold, the original at any rank by how often it occurs)
        rank_of: Callable[[str, tuple[int, int]], object]
        rank_of = (lambda s, c: order(s)) if not any(target) else (lambda s, c: c)  # type: ignore[misc]  # noqa: E731
        mine_rank = at if not any(target) else target
        below = [s for s, c in found if rank_of(s, c) < mine_rank]  # type: ignore[operator]
        above = [s for s, c in found if rank_of(s, c) > mine_rank]  # type: ignore[operator]
        equal = [s for s, c in found if rank_of(s, c) == mine_rank]
        k = next((n for n in range(k, 0, -1) if all(
            max(0, r - len(below)) + max(0, n - r - len(above)) <= len(equal)
            for r in range(n + 1))), 0)  # fmt: skip
        if k < 1:
            return []
        rank = rng.randrange(k + 1)
        rng.shuffle(equal)
        from_below = min(rank, len(below))
        from_above = min(k - rank, len(above))
        ties = equal[: k - from_below - from_above]
        chosen = rng.sample(below, from_below) + rng.sample(above, from_above) + ties
        rng.shuffle(chosen)
        return chosen
    # numbers the files hold: by value and by count, each rank uniform
    quads: dict[tuple[bool, bool], list[str]] = {(a, b): [] for a in (0, 1) for b in (0, 1)}  # type: ignore[misc]
    for spelling, count in found:
        low_count = count < target if count != target else rng.random() < 0.5
        quads[(low_count, order(spelling) < at)].append(spelling)  # type: ignore[operator]
    sizes = {q: len(v) for q, v in quads.items()}
    k = next((n for n in range(k, 0, -1) if _all_ranks(n, sizes)), 0)
    if k < 1:
        return []
    low_c, low_v = rng.randrange(k + 1), rng.randrange(k + 1)
    n_ll, n_lh, n_hl, n_hh = rng.choice(_splits(k, low_c, low_v, sizes))
    chosen = rng.sample(quads[(True, True)], n_ll) + rng.sample(quads[(True, False)], n_lh)
    chosen += rng.sample(quads[(False, True)], n_hl) + rng.sample(quads[(False, False)], n_hh)
    rng.shuffle(chosen)
    return chosen


def _splits(k: int, low_c: int, low_v: int,
            sizes: dict[tuple[bool, bool], int]) -> list[tuple[int, int, int, int]]:  # fmt: skip
    """How many members below/above the original by (count, order) give these ranks."""
    out = []
    for n_ll in range(0, min(low_c, low_v) + 1):
        split = (n_ll, low_c - n_ll, low_v - n_ll, k - low_c - low_v + n_ll)
        wants = dict(zip(_QUADS, split, strict=True))
        if all(0 <= n <= sizes[q] for q, n in wants.items()):
            out.append(split)
    return out


_QUADS = [(True, True), (True, False), (False, True), (False, False)]


def _all_ranks(k: int, sizes: dict[tuple[bool, bool], int]) -> bool:
    return all(_splits(k, c, v, sizes) for c in range(k + 1) for v in range(k + 1))


@lru_cache(maxsize=1 << 16)  # pools repeat across sites and tests
def _identity(spelling: str) -> object:
    """One member per value: a string by its value, a number by its signed spelling."""
    key = key_of(spelling)
    return (key[0], spelling.replace(" ", "")) if key and key[0] == "n" else key


def _one_spot(source: str, k: int, rng: random.Random, letters: bool) -> list[str]:
    """Every change of one character of the original (mutations.string_family's spot,
    where k have room on each side): the fresh spellings, pairwise one edit apart."""
    one = mutations.string_family(source, k, rng, letters)
    if not one:
        return []
    at = next(i for i in range(len(source)) if source[i] != one[0][i])
    alphabet = next(c for c in mutations.CLASSES if source[at] in c)
    return [source[:at] + c + source[at + 1 :] for c in alphabet if c != source[at]]


def _number_value(spelling: str) -> float:
    return float(spelling.replace(" ", ""))


@lru_cache(maxsize=1 << 16)  # pools repeat across sites and tests
def _string_value(spelling: str) -> str:
    value = ast.literal_eval(spelling)
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)


def _number_pool(source: str, k: int, rng: random.Random, held: Counter[Key]) -> list[str]:
    """A run around the original (the fresh spellings) and the numbers of its notation
    (int, or a float with as many decimals) and sign that the files hold."""
    run = mutations.number_family(source, 4 * k, rng, rank=2 * k)
    text = source.replace(" ", "")
    negative = text.startswith("-")
    decimals = len(text.split(".", 1)[1]) if "." in text else -1
    held_numbers = []
    for kind, number in held:
        if kind != "n" or not re.fullmatch(r"[1-9]\d*|0|\d+\.\d+", number):
            continue
        if (len(number.split(".", 1)[1]) if "." in number else -1) == decimals:
            held_numbers.append(("-" if negative else "") + number)
    return run + held_numbers


def _string_pool(source: str, held: Counter[Key]) -> list[str]:
    """The strings the files hold written in the original's quoting, when they look like
    it: a word where it is a word, one line, no quote or backslash to escape."""
    quote = source[-1]
    prefix = source[: source.find(quote)]
    kind = "b" if "b" in prefix.lower() else "s"
    value = _string_value(source)
    wordish = bool(_WORDISH.fullmatch(value))
    out = []
    for held_kind, text in held:
        if held_kind != kind or not text or not text.isascii() or not text.isprintable():
            continue
        if quote in text or "\\" in text or "{" in text and "f" in prefix.lower():
            continue
        if bool(_WORDISH.fullmatch(text)) != wordish or (" " in text) != (" " in value):
            continue
        if text.casefold() == value.casefold():
            continue  # an object comparing without case would equal it: not a must-fail
        out.append(f"{prefix}{quote}{text}{quote}")
    return out


def common_superclasses(rng: random.Random) -> list[str]:
    """What catches every member of a raise-only family: a must-pass copy expecting one
    says nothing about which member is the original (a superclass of the original alone
    would)."""
    out = ["Exception", "BaseException"]
    rng.shuffle(out)
    return out
