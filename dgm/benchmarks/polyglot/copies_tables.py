"""C++ loop tests over a table of cases (cpp/clock's `for (timeTest t : timeCases)
REQUIRE(t.expected == actual);`, red team round five H2): their expected values are a
column of a file-level table. Where the file has no other must-fail copy
(copies_builders.BUILT), each such test gets the table declared inside its own body
(inline_tables: the same for the real test and its copies, so the form tells nothing),
and the cells of the compared column are its expected values (table_regions), changed
by copies_text as any literal (drawn from that column's own values). The compared field
is a string or a number the solution's output is checked against, never an input.
"""

from __future__ import annotations

import contextvars
import re

from dgm.benchmarks.polyglot import copies_scan as scan

_LOOP = re.compile(r"\bfor\s*\(\s*(?:const\s+)?[\w:<>]+\s*&?\s*(\w+)\s*:\s*(\w+)\s*\)")
_STRUCT = re.compile(r"\bstruct\s+(\w+)\s*\{([^{}]*)\}\s*;")
STRUCTS: contextvars.ContextVar[dict[str, list[str]] | None] = contextvars.ContextVar(
    "structs", default=None
)
"""The file's structs: name -> field names in order (set by copies_text with BUILT)."""
_TEST = re.compile(r"^[ \t]*TEST_CASE\s*\([^{]*\)\s*\{", re.MULTILINE)


def _decl(text: str, table: str) -> tuple[int, int, str] | None:
    """(start, end, element type) of the file-level `vector<T> table = {...};`."""
    m = re.search(rf"^(?:const\s+)?(?:std::)?vector<\s*(\w+)\s*>\s+{table}\s*=\s*\{{",
                  text, re.MULTILINE)  # fmt: skip
    end = scan.closing("cpp", text, m.end() - 1) if m else -1
    if not m or end < 0 or not text[end:].lstrip().startswith(";"):
        return None
    return m.start(), text.index(";", end) + 1, m.group(1)


def inline_tables(text: str) -> str:
    """`text` with every TEST_CASE that loops over a file-level table holding that
    table's declaration at the top of its body (same name: it shadows the global)."""
    out = text
    for m in reversed(list(_TEST.finditer(scan.masked("cpp", text)))):
        end = scan.closing("cpp", text, m.end() - 1)
        loop = _LOOP.search(scan.masked("cpp", text), m.end(), end) if end > 0 else None
        decl = _decl(text, loop.group(2)) if loop else None
        if decl:
            local = "\n    " + text[decl[0] : decl[1]].replace("\n", "\n    ")
            out = out[: m.end()] + local + out[m.end() :]
    return out


def structs(text: str) -> dict[str, list[str]]:
    found = _STRUCT.finditer(scan.masked("cpp", text))
    return {m.group(1): re.findall(r"(\w+)\s*;", m.group(2)) for m in found}


def table_regions(chunk: str) -> list[tuple[int, int]]:
    """The cells of the column a loop test compares (`REQUIRE(t.expected == actual)`),
    in the table declared inside the test (see inline_tables)."""
    code = scan.masked("cpp", chunk)
    loop = _LOOP.search(code)
    decl = _decl(chunk.replace("\n    ", "\n"), loop.group(2)) if loop else None
    local = re.search(rf"vector<\s*\w+\s*>\s+{loop.group(2)}\s*=\s*\{{", code) if loop else None
    if not loop or not decl or not local:
        return []
    fields = (STRUCTS.get() or {}).get(decl[2], [])
    compared = set()
    for check in re.finditer(r"\b(?:REQUIRE|CHECK)\s*\(", code):
        close = scan.closing("cpp", code, check.end() - 1)
        args = code[check.end() : close - 1]
        if "(" not in args:
            compared |= set(re.findall(rf"\b{loop.group(1)}\.(\w+)\b", args))
    index = [i for i, f in enumerate(fields) if f in compared]
    if len(index) != 1:
        return []
    opener = local.end() - 1
    stop = scan.closing("cpp", chunk, opener)
    regions = []
    for entry in re.finditer(r"\{", code[opener + 1 : stop]):
        at = opener + 1 + entry.start()
        if code[opener + 1 : at].count("{") != code[opener + 1 : at].count("}"):
            continue  # a brace inside an entry
        close = scan.closing("cpp", chunk, at)
        cuts, lo = [], at + 1
        while lo <= close - 1:
            comma = scan.top_level_comma(code, lo, close - 1)
            cuts.append((lo, comma))
            lo = comma + 1
        if len(cuts) == len(fields):
            regions.append(cuts[index[0]])
    return regions
