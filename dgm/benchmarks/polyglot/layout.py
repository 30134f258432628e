"""The layout of a disguised brace-language test file (see copies_text): every test
block, real or copy, in one form, at a uniformly shuffled place.

Tests that sit next to each other with only blank lines between them form a run; a run
is rewritten as all its blocks (real tests and their copies) in a uniformly random
order, each block exactly as the test's own text (renamed), one blank line between
them. So blank lines, adjacency, order and line numbers (which reach the test binaries:
Catch2 test lines, Rust panic locations, Go's line tables) say nothing about which
block is the real test. Anything else between tests (helpers, comments, `#if` lines)
stays where it was, and the tests around it stay on their side of it.
"""

from __future__ import annotations

import re
import secrets

from dgm.benchmarks.polyglot.copies_go import decl_span

__all__ = ["decl_span", "go_tables", "lay_out", "runs"]


def _shuffled(items: list[str]) -> list[str]:
    return sorted(items, key=lambda _b: secrets.randbelow(1 << 30))


def runs(text: str, spans: list[tuple[int, int]]) -> list[list[int]]:
    """Indexes of the spans, grouped into runs separated by nothing but whitespace."""
    out: list[list[int]] = []
    for i, (start, _) in enumerate(spans):
        if out and not text[spans[i - 1][1] : start].strip():
            out[-1].append(i)
        else:
            out.append([i])
    return out


def lay_out(text: str, spans: list[tuple[int, int]], blocks: list[list[str]]) -> str:
    """`text` with the span i replaced by its `blocks[i]` (each ends with a newline), all
    the blocks of a run shuffled together and one blank line apart."""
    pieces, last = [], 0
    for run in runs(text, spans):
        start, end = spans[run[0]][0], spans[run[-1]][1]
        mine = [_canonical(b) for i in run for b in blocks[i]]
        pieces += [text[last:start], "\n".join(_shuffled(mine))]
        last = end
    return "".join(pieces) + text[last:]


def _canonical(block: str) -> str:
    lines = block.splitlines(keepends=True)
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    out = "".join(lines)
    return out if out.endswith("\n") else out + "\n"


def go_tables(text: str, table: str, copies: list[str], fresh: str) -> str:
    """The real table `table` renamed `fresh` (a name drawn like its copies' names), and
    its declaration (when in `text`) replaced by it and its changed copies, shuffled, one
    blank line apart."""
    renamed = re.sub(rf"\b{table}\b", fresh, text)
    where = decl_span(renamed, fresh)
    if where is None:
        return renamed
    start, end = where
    group = _shuffled([renamed[start:end], *[c.rstrip() for c in copies]])
    return renamed[:start] + "\n\n".join(group) + renamed[end:]
