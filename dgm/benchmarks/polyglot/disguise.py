"""The judge's disguise of one hidden test file (see copies.py): the entry point."""

from __future__ import annotations

from dgm.benchmarks.polyglot import value_draws, variants
from dgm.benchmarks.polyglot.copies import (
    MUST_FAIL,
    TEXT_WORDS,
    TOKENS,
    WORDS,
    Entry,
    NameGen,
    file_tokens,
    file_words,
    text_words,
)
from dgm.benchmarks.polyglot.copies_python import disguise_python
from dgm.benchmarks.polyglot.copies_text import disguise_text

DRAWS = 3
"""Whole-file draws while none gives a must-fail copy (a value set near a boundary is
thrown away, not redrawn; a file left without copies would get the literal canaries,
which an attacker can tell)."""


def disguise(
    language: str,
    text: str,
    names: NameGen,
    context: str = "",
    elsewhere: dict[str, list[str]] | None = None,
) -> tuple[str, list[Entry]]:
    """The test file with every test renamed and copies added; ([] entries) when the file
    has no test the judge can rename, unchanged. `context`: the exercise's other test
    files (Go: a test's table may be in another file; `elsewhere` then gets the changed
    copies of such tables, which layout.go_tables puts beside them)."""
    token = WORDS.set(file_words(text + "\n" + context))
    spoken = TEXT_WORDS.set(text_words(text + "\n" + context))
    grammar = TOKENS.set(file_tokens(text + "\n" + context))
    numbers = value_draws.NUMBERS.set(value_draws.file_numbers(text + "\n" + context))
    every = value_draws.FILE_NUMBERS.set(value_draws.file_numbers(text + "\n" + context))
    strings = variants.STRINGS.set(())
    # Every language is readable: Go's and Rust's test binaries print each failing test's
    # expected value, and a C++ macro can embed its test's source (red team round five
    # H5, H10, H11), so a copy's value must not be told by how often the file holds it.
    readable = value_draws.READABLE.set(True)
    bodies = value_draws.FILE_STRINGS.set(value_draws.file_strings(text + "\n" + context))
    drawn = value_draws.DRAWN.set(None)  # (the token: each draw below sets its own)
    try:
        for _ in range(DRAWS):
            found: dict[str, list[str]] = {}
            value_draws.DRAWN.set({})  # a whole-file draw draws its copies afresh
            if language == "python":
                out, entries = disguise_python(text, names)
            else:
                out, entries = disguise_text(language, text, names, context, found)
            if any(e.kind == MUST_FAIL for e in entries):
                break
        if elsewhere is not None:
            elsewhere.update(found)
        return out, entries
    finally:
        WORDS.reset(token)
        TEXT_WORDS.reset(spoken)
        TOKENS.reset(grammar)
        value_draws.NUMBERS.reset(numbers)
        value_draws.FILE_NUMBERS.reset(every)
        variants.STRINGS.reset(strings)
        value_draws.READABLE.reset(readable)
        value_draws.FILE_STRINGS.reset(bodies)
        value_draws.DRAWN.reset(drawn)
