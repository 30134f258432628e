"""English words, to keep a must-fail copy of a string that reads right reading right.

A copy made by changing one letter of a word (`Norwegian` -> `Norweoian`) is the member
that is no word, and a solution that reads the disguised tests while they run can look
its candidates up (red team round six T1: the run image's own Python sources as its
dictionary picked the real string in 0.71-0.75 of Python's groups, chance 0.49). The
judge uses the same kind of dictionary: the words of this interpreter's standard library
sources, which every toolchain image also holds. Not a packaged word list: none is in
Python, and a Debian one would be one more thing each host has to install.
"""

from __future__ import annotations

import collections
import re
import sysconfig
from functools import cache
from pathlib import Path

MIN_USES = 2
"""A word the sources use once may be a typo or an identifier fragment."""


@cache
def _counts() -> collections.Counter[str]:
    counts: collections.Counter[str] = collections.Counter()
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
        try:
            counts.update(re.findall(r"(?<![A-Za-z0-9_])[A-Za-z]{2,}(?![A-Za-z0-9_])",
                                     path.read_text(errors="ignore")))  # fmt: skip
        except OSError:
            continue
    return counts


@cache
def words() -> frozenset[str]:
    """Letter-only words (2+ letters) the standard library's sources use MIN_USES times,
    as written: what an attacker would take for words (`Norwegian`, but also `tbreak`)."""
    return frozenset(w for w, n in _counts().items() if n >= MIN_USES)


@cache
def common() -> tuple[str, ...]:
    """The lower-case words the sources also write capitalised (at the start of a
    sentence): English, not identifiers (`number`, not `tbreak`). What a copy takes."""
    counts = _counts()
    return tuple(sorted(w for w, n in counts.items()
                        if w.islower() and n >= MIN_USES and counts[w.capitalize()]))  # fmt: skip


def in_case(word: str, like: str) -> str:
    """`word` (lower case) written in the case of `like` (`Norwegian`, `NORWEGIAN`)."""
    return word.upper() if like.isupper() else word.capitalize() if like.istitle() else word


def is_word(token: str) -> bool:
    """Is a run of letters a dictionary word (any case: `NORWEGIAN`, `Norwegian`)?"""
    return any(form in words() for form in (token, token.lower(), token.capitalize()))
