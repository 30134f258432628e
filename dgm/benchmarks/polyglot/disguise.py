"""The judge's disguise of one hidden test file (see copies.py): the entry point."""

from __future__ import annotations

from dgm.benchmarks.polyglot import variants
from dgm.benchmarks.polyglot.copies import WORDS, Entry, NameGen, file_words
from dgm.benchmarks.polyglot.copies_python import disguise_python
from dgm.benchmarks.polyglot.copies_text import disguise_text


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
    numbers = variants.NUMBERS.set(variants.file_numbers(text + "\n" + context))
    every = variants.FILE_NUMBERS.set(variants.file_numbers(text + "\n" + context))
    try:
        if language == "python":
            return disguise_python(text, names)
        return disguise_text(language, text, names, context, elsewhere)
    finally:
        WORDS.reset(token)
        variants.NUMBERS.reset(numbers)
        variants.FILE_NUMBERS.reset(every)
