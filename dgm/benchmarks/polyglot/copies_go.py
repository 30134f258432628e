"""Must-fail copies of Go tests (see copies_text): a table test gets a renamed copy of its
table with one expected field changed; a test that binds `want`/`expected` to a literal
gets that literal changed; any other test none."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

from dgm.benchmarks.polyglot import value_draws, variants
from dgm.benchmarks.polyglot.copies import NameGen
from dgm.benchmarks.polyglot.copies_scan import (
    BOUND,
    change_literal,
    closing,
    initializer_end,
    masked,
    outside_calls,
    string_parts,
    tokens,
    used_as_input,
)

_GO_RANGE = re.compile(r"for\s+_?\s*,\s*(\w+)\s*:=\s*range\s+(\w+)\s*\{")
_GO_FIELD = re.compile(r"(?i)^(?:expect\w*|want\w*|output\w*|result\w*|answer|exp)$")


@dataclass(frozen=True)
class Mutant:
    """A must-fail copy of a test: its text, what changed, and for a Go table test the
    table it ranges over and the changed copy of that table's declaration."""

    body: str
    how: str
    table: str = ""
    decl: str = ""


def mutate_go(text: str, chunk: str, names: NameGen, k: int = 1,
              context: str = "") -> list[Mutant]:  # fmt: skip
    """Up to k must-fail copies of a Go test, all changing the same value: a field of its
    table (declared inside the test, or in a test file of the package, `context`: then
    the copy ranges over a changed copy of the table, named like the real one, placed
    with it, see layout.go_tables), else a literal a
    `want`/`expected` is bound to. A test with neither gets none (an inverted check would
    be a form the file never uses)."""
    found = _GO_RANGE.search(chunk)
    if found:
        var, table = found.group(1), found.group(2)
        fields = {f for f in re.findall(rf"\b{var}\.(\w+)", chunk) if _GO_FIELD.match(f)}
        fields |= _compared_fields(chunk, var)
        if fields and re.search(rf"\b{table}\s*:=", chunk):  # a table inside the test
            changed = _change_field(chunk, fields, k)
            if changed:
                return [Mutant(body, how) for body, how in changed]
        where = decl_span(text, table) or decl_span(context, table)
        home = text if decl_span(text, table) else context
        changed = _change_field(home[where[0] : where[1]], fields, k) if where and fields else []
        out = []
        for source, how in changed:
            new_name = "test" + names.token().capitalize()
            source = re.sub(rf"^var\s+{table}\b", f"var {new_name}", source, count=1)
            body = re.sub(rf"\brange\s+{table}\b", f"range {new_name}", chunk, count=1)
            out.append(Mutant(body, how, table, source))
        if out:
            return out
    for m in BOUND.finditer(masked("go", chunk)):
        if used_as_input("go", chunk, m.group(1), m.end()):
            continue
        end = initializer_end("go", chunk, m.end())
        for lo, hi in outside_calls("go", chunk, m.end(), end):
            changed = change_literal("go", chunk, lo, hi, k)
            if changed:
                return [Mutant(body, how) for body, how in changed]
    return []


def _compared_fields(chunk: str, var: str) -> set[str]:
    """Fields of the table entry `var` that the test compares with a result
    (`score != tc.score`, `reflect.DeepEqual(rows, tc.rows)`), never passed to the
    solution: expected values whatever their name."""
    code = masked("go", chunk)
    other = r"(?!nil\b|true\b|false\b)(?<![\w.])[A-Za-z_]\w*(?![\w.(\[])"
    found = set(re.findall(rf"{other}\s*[!=]=\s*\b{var}\.(\w+)\b(?!\s*[.(\[])", code))
    found |= set(re.findall(rf"\b{var}\.(\w+)\s*[!=]=\s*{other}", code))
    found |= set(re.findall(rf"DeepEqual\(\s*\w+\s*,\s*{var}\.(\w+)\s*\)", code))
    found |= set(re.findall(rf"DeepEqual\(\s*{var}\.(\w+)\s*,\s*\w+\s*\)", code))
    return {f for f in found if not _passed(code, f"{var}.{f}")}


_HARMLESS = re.compile(r"(?i)^(?:\w*equal\w*|len|cap|errorf?|fatalf?|logf?|sprintf|printf"
                       r"|println|string|contains\w*|hasprefix|tolower|skip\w*)$")  # fmt: skip


def _passed(code: str, name: str) -> bool:
    """Is `name` an argument of a call (its innermost one) that is no comparison or
    message: the solution's input? (`t.Run`'s closure holding it does not count.)"""
    for m in re.finditer(rf"(?<![\w.]){re.escape(name)}\b", code):
        depth, i = 0, m.start() - 1
        while i >= 0:
            if code[i] in ")]}":
                depth += 1
            elif code[i] in "([{":
                if depth == 0:
                    break
                depth -= 1
            i -= 1
        if i >= 0 and code[i] == "(":
            call = re.search(r"(\w+)\s*$", code[:i])
            if call and not _HARMLESS.match(call.group(1)):
                return True
    return False


def decl_span(text: str, table: str) -> tuple[int, int] | None:
    """Where the package-level declaration of `table` is in `text`."""
    decl = re.search(rf"^var\s+{table}\s*=", text, re.MULTILINE)
    end = _go_decl_end(text, decl.end()) if decl else -1
    return (decl.start(), end) if decl and end > 0 else None


def _go_decl_end(text: str, at: int) -> int:
    """Just past a package-level `var x = T{...}` (a `[]struct{...}{...}` included)."""
    opener = text.find("{", at)
    end = closing("go", text, opener) if opener >= 0 else -1
    while end > 0 and text[end:].lstrip(" \t").startswith("{"):
        end = closing("go", text, text.index("{", end))
    return end


def _change_field(source: str, fields: set[str], k: int) -> list[tuple[str, str]]:
    """`source` with the literal value of one `field: value` line changed, or of the
    field's place in one positional entry (`{"1", 1, false},`). A value is changed only
    in an entry that expects no error; an error flag (`expectError: true`, `ok: false`)
    only where no value changes, flipped either way, uniformly over every entry (a flag
    only ever set told the copy: its changed entry was the one more expecting an error,
    red team round five H10)."""
    pattern = rf"^\s*({'|'.join(sorted(fields))})\s*:\s*"
    sites, flags = [], []
    for m in re.finditer(pattern, source, re.MULTILINE):
        site = (m.end(), initializer_end("go", source, m.end()))
        value = source[site[0] : site[1]].strip().rstrip(",").strip()
        if value in ("true", "false") and _FLAG.match(m.group(1)):
            flags.append(site)
        elif not _expects_failure(source, m.start()):
            sites.append(site)
    if not sites and not flags and not re.search(pattern, source, re.MULTILINE):
        sites, flags = _positional_sites(source, fields)
    return _changed_at(source, fields, sites, k) or _changed_at(
        source, fields, _one_way(source, flags), k
    )


def _one_way(source: str, flags: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The flags set, or those unset, each half the time where both occur: a copy then
    adds an error as often as it takes one away, whatever the table holds (drawn by
    entry, a flip would mostly add one, and "the member whose changed entry is the rarer
    kind is the copy" would win)."""

    def is_true(site: tuple[int, int]) -> bool:
        return source[site[0] : site[1]].strip().rstrip(",").strip() == "true"

    on = [s for s in flags if is_true(s)]
    off = [s for s in flags if not is_true(s)]
    return (on if secrets.randbelow(2) else off) if on and off else flags


_FLAG = re.compile(r"(?i)^(?:\w*(?:err|panic|fail|invalid)\w*|ok|valid\w*|success\w*)$")


def _changed_at(source: str, fields: set[str], sites: list[tuple[int, int]],
                k: int) -> list[tuple[str, str]]:  # fmt: skip
    """`source` with the value at one of `sites` (drawn uniformly) changed, or []."""
    numbers, strings, idents = _site_values(source, sites)
    wide = value_draws.WIDE.set(_wide(source, fields))
    pools = [value_draws.NUMBERS.set(numbers) if len(set(numbers)) > 1 else None,
             variants.STRINGS.set(strings) if len(set(strings)) > 1 else None]  # fmt: skip
    try:
        for lo, hi in sorted(sites, key=lambda _s: secrets.randbelow(1 << 30)):
            changed = change_literal("go", source, lo, hi, k) or _swap_ident(
                source, lo, hi, idents, k
            )
            if changed:
                return changed
    finally:
        value_draws.WIDE.reset(wide)
        for var, token in zip((value_draws.NUMBERS, variants.STRINGS), pools, strict=True):
            if token is not None:
                var.reset(token)
    return []


_IDENT = re.compile(r"(?!nil$|true$|false$)[A-Za-z_]\w*")


def _site_values(source: str, sites: list[tuple[int, int]]) -> tuple[tuple, tuple, list[str]]:
    """The expected values of one table field (number literals, string literals as
    (quote, body), bare identifiers), repeats kept: what its changed values are drawn
    from, so a copy's value is one the same field holds elsewhere in the table."""
    numbers, strings, idents = [], [], []
    for lo, hi in sites:
        value = source[lo:hi].strip().rstrip(",").strip()
        if _IDENT.fullmatch(value):
            idents.append(value)
        for t in tokens("go", source, lo, hi):
            if t.lastgroup == "num":
                numbers.append(t.group(0))
            parts = string_parts(t.group(0)) if t.lastgroup == "str" else None
            strings += [parts] if parts else []
    return tuple(numbers), tuple(strings), idents


def _swap_ident(source: str, lo: int, hi: int, idents: list[str],
                k: int) -> list[tuple[str, str]]:  # fmt: skip
    """The site's value, a bare identifier (`verse8`, a constant of the file), replaced by
    k others the same field holds in other entries, drawn as numbers are."""
    value = source[lo:hi].strip().rstrip(",").strip()
    if not _IDENT.fullmatch(value):
        return []
    at = lo + source[lo:hi].index(value)
    drawn = variants.drawn(idents, value, k) or []
    return [(source[:at] + n + source[at + len(value) :], f"expected {value} -> {n}")
            for n in drawn]  # fmt: skip


_WIDE_TYPES = {"int", "int64", "float64", "float32"}


def _wide(source: str, fields: set[str]) -> bool:
    """Are the expected fields all declared in `source`'s struct with a 64-bit int or a
    float type (no 8-, 16- or 32-bit slot that a drawn value could overflow)?"""
    struct = re.search(r"struct\s*\{([^{}]*)\}", source)
    if not struct:
        return False
    types = dict(re.findall(r"^\s*(\w+)\s+(\S+)", struct.group(1), re.MULTILINE))
    numeric = [types[f] for f in fields if f in types and types[f] not in ("bool", "string")]
    return bool(numeric) and all(t in _WIDE_TYPES for t in numeric)


_ERROR_FIELD = re.compile(r"(?i)^\s*\w*(?:err|panic|fail|invalid)\w*\s*:\s*(.+?),?\s*$",
                          re.MULTILINE)  # fmt: skip
_NOTHING = {"false", "nil", '""', "``", "0", '"none"'}
_OK_FIELD = re.compile(r"(?i)^(?:ok|valid\w*|success\w*)$")


def _expects_failure(source: str, at: int) -> bool:
    """Does the table entry around `at` expect an error? (Its expected value is then
    often not checked, and a changed one would not fail.)"""
    start, end = at, -1
    while end <= at:  # the entry's own brace, not an inner one (`[]int{0, 0},` before it)
        start = source.rfind("{", 0, start)
        if start < 0:
            break
        end = closing("go", source, start)
    entry = source[start:end] if start >= 0 and end > at else ""
    oks = re.findall(r"(?im)^\s*(?:ok|valid\w*|success\w*)\s*:\s*false\b", entry)
    return bool(oks) or any(v.strip() not in _NOTHING for v in _ERROR_FIELD.findall(entry))


def _positional_sites(source: str, fields: set[str]) -> tuple[list, list]:
    """The spans of the expected field in one-line positional entries of a table whose
    element type is the `struct {...}` declared in `source` (entries that expect no
    error), and of its expected bool flags (`_FLAG`, every entry)."""
    struct = re.search(r"struct\s*\{([^{}]*)\}", source)
    if not struct:
        return [], []
    names = re.findall(r"^\s*(\w+)\s+\S", struct.group(1), re.MULTILINE)
    flagged = [i for i, n in enumerate(names) if n in fields and _FLAG.match(n)]
    index = next((i for i, n in enumerate(names) if n in fields and i not in flagged), None)
    if index is None and not flagged:
        return [], []
    sites, flags = [], []
    for entry in re.finditer(r"^\s*\{(.*)\},?\s*$", source[struct.end() :], re.MULTILINE):
        lo = struct.end() + entry.start(1)
        parts, depth, start = [], 0, 0
        body = masked("go", entry.group(1))
        for i, char in enumerate(body):
            depth += char in "([{"
            depth -= char in ")]}"
            if char == "," and depth == 0:
                parts.append((start, i))
                start = i + 1
        parts.append((start, len(body)))
        risky = [i for i, n in enumerate(names) if re.search(r"(?i)err|panic|fail|invalid", n)]
        oks = [i for i, n in enumerate(names) if _OK_FIELD.match(n)]
        values = [entry.group(1)[a:b].strip() for a, b in parts]
        if len(parts) == len(names):
            flags += [(lo + parts[i][0], lo + parts[i][1]) for i in flagged
                      if values[i] in ("true", "false")]  # fmt: skip
        if index is None:
            continue
        failing = [values[i] == "false" for i in oks if i < len(values)]
        failing += [values[i] not in _NOTHING for i in risky if i < len(values)]
        if any(failing):
            continue  # an entry that expects an error: its value may not be checked
        if len(parts) == len(names):
            a, b = parts[index]
            sites.append((lo + a, lo + b))
    return sites, flags
