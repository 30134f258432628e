"""Go table tests copies_go does not see through (red team round five H7, files that had
no must-fail copy): a test that ranges over joined tables and compares in a helper
(go/two-bucket: `for _, tc := range append(testCases, errorTestCases...) {
runTestCase(t, tc) }`), or that hands an entry's field to a local closure whose
parameter is the wanted value (go/palindrome-products: `matchProd := func(field string,
have, want Product) {... reflect.DeepEqual(have, want) ...}; matchProd("pmin", pmin,
tc.pmin)`). The test is handed to copies_go as it would read written plainly: ranging
over the first table, the helper's comparisons in its body, each closure call as the
`reflect.DeepEqual` it makes. Each copy is then the real test ranging
over a changed copy of that table (placed beside the real one as copies_go places any,
layout.go_tables), so only the table differs."""

from __future__ import annotations

import re
import secrets

from dgm.benchmarks.polyglot import variants
from dgm.benchmarks.polyglot.copies import NameGen
from dgm.benchmarks.polyglot.copies_go import Mutant, decl_span, mutate_go
from dgm.benchmarks.polyglot.copies_scan import (
    change_literal,
    closing,
    masked,
    string_parts,
    tokens,
    top_level_comma,
)

_RANGE = re.compile(r"\brange\s+(?:append\(\s*(\w+)\s*,\s*[\w\s,.]*\.\.\.\s*\)|(\w+))")
_FUNC = re.compile(r"^func\s+(\w+)\s*\(([^)]*)\)[^{\n]*\{", re.MULTILINE)
_CLOSURE = re.compile(r"(\w+)\s*:=\s*func\s*\(([^)]*)\)\s*\{")


def mutate_plain(text: str, chunk: str, names: NameGen, k: int = 1,
                 context: str = "") -> list[Mutant]:  # fmt: skip
    """Up to k must-fail copies of such a test (see module); [] for any other."""
    code = masked("go", chunk)
    loop = re.search(r"for\s+_?\s*,\s*(\w+)\s*:=\s*", code)
    found = _RANGE.search(code, loop.end()) if loop else None
    if not loop or not found:
        return []
    var, first = loop.group(1), found.group(1) or found.group(2)
    synthetic = chunk[: found.start()] + f"range {first} " + chunk[found.end() :]
    compared, closures = _closures_compared(synthetic, var)
    plain = compared + _helpers(text, chunk, var)
    if not plain:
        return []
    for name in closures:  # (their calls compare: copies_go would take them for inputs)
        synthetic = re.sub(rf"(?<![\w.]){name}\s*\(", "reflect.DeepEqual(", synthetic)
    out = []
    for mutant in mutate_go(text, synthetic + "\n" + plain, names, k, context):
        renamed = re.search(r"\brange\s+(\w+)", mutant.body)
        if not mutant.table or not renamed:
            return []  # only a changed copy of the table is a copy of this test
        head = re.sub(rf"\b{first}\b", renamed.group(1), found.group(0), count=1)
        body = chunk[: found.start()] + head + chunk[found.end() :]
        out.append(Mutant(body, mutant.how, mutant.table, mutant.decl))
    return out


def _helpers(text: str, chunk: str, var: str) -> str:
    """The file's functions the test hands `var` to, their parameter renamed `var`."""
    found = []
    for m in _FUNC.finditer(masked("go", text)):
        called = re.search(rf"(?<![\w.]){m.group(1)}\s*\([^)]*\b{var}\b", chunk)
        param = re.search(r"(\w+)\s+\w+\s*$", m.group(2))
        end = closing("go", text, m.end() - 1)
        if called and param and end > 0:
            found.append(re.sub(rf"\b{param.group(1)}\.", f"{var}.", text[m.start() : end]))
    return "\n".join(found)


def _closures_compared(chunk: str, var: str) -> tuple[str, list[str]]:
    """`reflect.DeepEqual(_, var.field)` for each call of a local closure that passes
    `var.field` as its `want`/`expected` parameter, where the closure compares it."""
    code, lines, names = masked("go", chunk), [], []
    for m in _CLOSURE.finditer(code):
        params = [p.strip() for p in m.group(2).split(",")]
        index = next((i for i, p in enumerate(params)
                      if re.match(r"(?i)(?:want|expected)\w*\b", p)), None)  # fmt: skip
        end = closing("go", code, m.end() - 1)
        if index is None or end < 0 or "DeepEqual(" not in code[m.end() : end]:
            continue
        for call in re.finditer(rf"(?<![\w.]){m.group(1)}\s*\(", code[end:]):
            at = end + call.end()
            stop = closing("go", code, at - 1)
            args, lo = [], at
            while 0 < stop and lo < stop - 1:
                comma = top_level_comma(code, lo, stop - 1)
                args.append(chunk[lo:comma].strip())
                lo = comma + 1
            if index < len(args) and re.fullmatch(rf"{var}\.\w+", args[index]):
                lines.append(f"_ = reflect.DeepEqual(got, {args[index]})")
                names.append(m.group(1))
    return "\n".join(lines), sorted(set(names))


_LOOP = re.compile(r"for\s+(\w+)\s*:=\s*(\d+)\s*;\s*\1\s*(<=?)\s*(\d+)\s*;\s*\1\+\+")


def mutate_indexed(text: str, chunk: str, names: NameGen, k: int = 1,
                   context: str = "") -> list[Mutant]:  # fmt: skip
    """Up to k must-fail copies of a test that checks against elements of a file-level
    `var table = []string{...}` read by index (go/food-chain: `got != text[v]` for v in
    1..8, `strings.Join(text[1:4], ...)`): one element the test surely reads changed in a
    copy of the table the copy reads instead. [] where an index is not a literal, a slice
    with literal bounds or a loop variable with literal bounds, or where the table is
    passed to the solution (an exported function)."""
    code = masked("go", chunk)
    for table in sorted(set(re.findall(r"(?<![\w.])(\w+)\[", code))):
        where = decl_span(text, table)
        if not where or not re.match(rf"var\s+{table}\s*=\s*\[\]string\s*\{{", text[where[0] :]):
            continue
        read = _indexes(code, table)
        cells = _cells(text, where)
        read = sorted(i for i in (read or ()) if i < len(cells))
        if not read or re.search(rf"(?<![.\w])[A-Z]\w*\([^()]*\b{table}\b", code):
            continue
        decl = text[where[0] : where[1]]
        lo, hi = cells[secrets.choice(read)]
        token = variants.STRINGS.set(tuple(_strings(decl)))
        try:
            changed = change_literal("go", decl, lo - where[0], hi - where[0], k)
        finally:
            variants.STRINGS.reset(token)
        out = []
        for source, how in changed:
            fresh = "test" + names.token().capitalize()
            source = re.sub(rf"^var\s+{table}\b", f"var {fresh}", source, count=1)
            body = re.sub(rf"(?<![\w.]){table}\[", f"{fresh}[", chunk)
            out.append(Mutant(body, how, table, source))
        return out
    return []


def _indexes(code: str, table: str) -> set[int] | None:
    """The indexes the test reads of `table` (None when one is not known)."""
    found: set[int] = set()
    loops = {m.group(1): (int(m.group(2)), int(m.group(4)) + (m.group(3) == "<="))
             for m in _LOOP.finditer(code)}  # fmt: skip
    for m in re.finditer(rf"(?<![\w.]){table}\[([^\]]*)\]", code):
        index = m.group(1).strip()
        if index.isdigit():
            found.add(int(index))
        elif index in loops:
            found |= set(range(*loops[index]))
        elif re.fullmatch(r"\d*:\d*", index):
            a, b = index.split(":")
            found |= set(range(int(a or 0), int(b) if b else 1 << 10))
        else:
            return None
    return found


def _cells(text: str, where: tuple[int, int]) -> list[tuple[int, int]]:
    """The spans of a `[]string{...}` declaration's elements."""
    code = masked("go", text)
    opener = code.index("{", where[0])
    stop = closing("go", code, opener) - 1
    cells, lo = [], opener + 1
    while lo < stop:
        comma = top_level_comma(code, lo, stop)
        if code[lo:comma].strip():
            cells.append((lo, comma))
        lo = comma + 1
    return cells


def _strings(decl: str) -> list[tuple[str, str]]:
    return [parts for t in tokens("go", decl) if t.lastgroup == "str"
            for parts in [string_parts(t.group(0))] if parts]  # fmt: skip
