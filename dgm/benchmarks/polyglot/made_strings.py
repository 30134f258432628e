"""A string copy made afresh, where the file expects too few others to draw from: one
word swapped for a word of the file's, else of the dictionary (wordlist), else one letter
or digit changed for another of its class, never inside a word unless nothing else fits
(red team round six T1: a copy that is no word, `Norweoian`, was told from `Norwegian`).
"""

from __future__ import annotations

import re
import secrets

from dgm.benchmarks.polyglot import wordlist
from dgm.benchmarks.polyglot.copies import TEXT_WORDS, TOKENS, WORDS, text_words
from dgm.benchmarks.polyglot.value_draws import FILE_STRINGS, NONE, READABLE, fresh, shuffled

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def made(body: str, k: int, pool: list[str]) -> list[str]:
    """A word of the file's, else of the dictionary, for one of body's words; else one
    character changed, never inside a word (a copy that is no word is told, round six T1)."""
    return (fresh(_word_swapped(body, k), pool) or fresh(_dictionary_swapped(body, k), pool)
            or fresh(_char_changed(body, k), pool)
            # Last, inside a word: a reader tells such a copy, but it still catches "pass
            # what touched my code", which a test with no copy does not.
            or fresh(_char_changed(body, k, in_words=True), pool))  # fmt: skip


_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}(?![A-Za-z])")


def _word_class(word: str) -> tuple[str, int]:
    shape = "U" if word.isupper() else "T" if word.istitle() else "l" if word.islower() else ""
    return shape, len(word)


def _word_swapped(body: str, k: int) -> list[str]:
    """k strings made from `body` with one word swapped for others of the file ([] if
    none fits)."""
    spots = list(_WORD.finditer(body))
    for m in shuffled(spots):
        word = m.group(0)
        if READABLE.get() and not _elsewhere(word, body):
            continue  # had a copy been real, this word would be in no other string
        kind = _word_class(word)
        others = [w for w in WORDS.get() if w != word and _word_class(w) == kind and kind[0]]
        if len(others) >= k:
            picks = shuffled(others)[:k]
            return [body[: m.start()] + w + body[m.end() :] for w in picks]
    return NONE


def _dictionary_swapped(body: str, k: int) -> list[str]:
    """k strings made from `body` with one of its dictionary words swapped for k other
    dictionary words of its kind (case, length), where the file holds that word nowhere
    else (else the copies' words would be the ones seen once); [] if none fits."""
    uses = TEXT_WORDS.get() or {}
    for m in shuffled(list(_WORD.finditer(body))):
        word = m.group(0)
        if not wordlist.is_word(word) or (READABLE.get() and _elsewhere(word, body)):
            continue
        here = text_words(body).get(word.lower(), 0)  # counted as `uses` is: by word
        if READABLE.get() and uses.get(word.lower(), 0) > here:
            continue  # in a test's name or a comment too: no copy's word would be
        kind = _word_class(word)
        if not kind[0]:
            continue
        others = [wordlist.in_case(w, word) for w in wordlist.common()
                  if len(w) == len(word) and w != word.lower() and w not in uses]  # fmt: skip
        if len(others) >= k:
            return [body[: m.start()] + w + body[m.end() :] for w in shuffled(others)[:k]]
    return NONE


def _elsewhere(word: str, body: str) -> bool:
    """Is `word` in a string of the file other than `body`, or twice in it? (A copy
    swaps it for a word the file holds: to be exchangeable, the real value's word must
    be one the file would hold were a copy the real test, red team round five H11.)"""
    pattern = re.compile(rf"(?<![A-Za-z]){word}(?![A-Za-z])")
    if len(pattern.findall(body)) > 1:
        return True
    return any(b != body and pattern.search(b) for b in FILE_STRINGS.get())


def _char_changed(body: str, k: int, in_words: bool = False) -> list[str]:
    """k strings made from `body` with one letter or digit changed for others of its
    class (where the file holds a word-swapped one, e.g. its only two words). Where the
    file's strings hold other tokens of the same length with a character of that class
    at that place (cards: `6S`, `7H`), the new characters are theirs, so a changed
    token is one of the file's grammar (round four G3: `6S` -> `6M` was no card)."""
    words = set() if in_words else {i for m in _WORD.finditer(body) if wordlist.is_word(
        m.group(0)) for i in range(m.start(), m.end())}  # fmt: skip
    plain = [m.start() for m in re.finditer(r"[A-Za-z0-9]", body) if m.start() not in words
             and (m.start() == 0 or body[m.start() - 1] != "\\")]  # fmt: skip
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
