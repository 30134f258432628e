"""Must-fail copies for Go and Rust test files that no other rule gives one (go
error-handling and react, rust xorcism: red team round seven G7 un-failed a Go test on
such a file, where only the literal canaries stood, which never call the solution).

Used only when a whole file has no test another rule can change (copies_text sets
FALLBACK), so files that had copies keep exactly the copies they had. Both forms are
sources the test binaries are built from and then lose (reports.BUILD and RUN), and
each is a form the file itself uses:
- a comparison a test makes at its top level is inverted: a Go guard `if a != b {
  t.Fatalf(...) }` becomes `if a == b {...}` (or back), a Rust `assert_eq!` becomes
  `assert_ne!` (or back);
- a Go test's call to a helper of the file whose parameter is the wanted value
  (`assertCellValue(t, c, 2, "...")`, `func assertCellValue(..., expected int, ...)`)
  gets that literal argument changed, as any expected literal is (change_literal).

Only statements at the test's top level are taken, after no top-level `return` or skip,
so a correct solution, which passes the real test, reaches them: the copy fails.
"""

from __future__ import annotations

import contextvars
import re
import secrets

from dgm.benchmarks.polyglot.copies_go import Mutant
from dgm.benchmarks.polyglot.copies_scan import change_literal, closing, masked

FALLBACK: contextvars.ContextVar[bool] = contextvars.ContextVar("flipped", default=False)
"""Set while a file with no must-fail copy from the other rules is disguised again."""

_GO_GUARD = re.compile(r"if\s+([^{};\n]*?)\s*(==|!=)\s*([^{};\n]*?)\s*\{")
_GO_FAILS = re.compile(r"^\s*t\.(?:Fatal|Fatalf|Error|Errorf|FailNow|Fail)\s*\(")
_GO_STOPS = re.compile(r"^\s*(?:return\b|t\.Skip\w*\s*\(|goto\b|panic\s*\()")
_RUST_ASSERT = re.compile(r"assert_(eq|ne)!\s*\(")
_LOGIC = re.compile(r"&&|\|\||==|!=")
_WANTED = re.compile(r"(?i)^(?:want\w*|expected?\w*|exp)$")
_GO_FUNC = re.compile(r"^func\s+(\w+)\s*\(([^)]*)\)", re.MULTILINE)


def flipped(language: str, text: str, chunk: str, k: int = 1) -> list[Mutant]:
    """Up to k must-fail copies of one test (see module), all changing the same place
    (copies that changed different places would each keep the real form elsewhere, so
    the real test would be the majority at every place): a comparison inverted gives one
    copy, a helper's literal up to k."""
    if language == "go":
        sites = _go_guards(text, chunk) + _go_helper_calls(text, chunk, k)
    elif language == "rust" and "should_panic" not in chunk:  # (a failed assert panics)
        sites = _rust_asserts(text, chunk)
    else:
        return []
    return sites[secrets.randbelow(len(sites))] if sites else []


def _top_level(code: str) -> list[tuple[int, int]]:
    """(start, end) of each statement at the top level of the function body in `code`
    (a test's source, masked), up to the first that may leave the test early."""
    opener = code.find("{")
    end = closing("go", code, opener) if opener >= 0 else -1
    out, depth, start = [], 0, opener + 1
    for i in range(opener + 1, max(end - 1, opener + 1)):
        ch = code[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if (
                depth == 0
                and ch == "}"
                and not code[i + 1 :].lstrip(" \t").startswith(("else", ")", ".", ","))
            ):
                out.append((start, i + 1))
                start = i + 1
        elif depth == 0 and ch in ";\n":
            out.append((start, i + 1))
            start = i + 1
    statements = []
    for lo, hi in out:
        if not code[lo:hi].strip():
            continue
        if _GO_STOPS.match(code[lo:hi]) or re.search(r"\breturn\b", _no_closures(code[lo:hi])):
            break  # (a nested `return` may leave before later statements run)
        statements.append((lo, hi))
    return statements


def _no_closures(code: str) -> str:
    """`code` without the bodies of the function literals and closures it holds (their
    `return` leaves them, not the test)."""
    for m in reversed(list(re.finditer(r"\bfunc\b|\|[^|\n]*\|\s*(?=\{)|\bmove\s*\|", code))):
        opener = code.find("{", m.end())
        end = closing("go", code, opener) if opener >= 0 else -1
        if end > 0:
            code = code[:opener] + " " * (end - opener) + code[end:]
    return code


def _go_guards(text: str, chunk: str) -> list[list[Mutant]]:
    """Top-level `if a OP b { t.Fatal... }` with no else: OP inverted (only where the file
    guards with both `==` and `!=`)."""
    code, whole = masked("go", chunk), masked("go", text)
    ops = {m.group(2) for m in _GO_GUARD.finditer(whole)}
    if ops != {"==", "!="}:
        return []
    out = []
    for lo, hi in _top_level(code):
        m = _GO_GUARD.match(code, lo + len(code[lo:hi]) - len(code[lo:hi].lstrip()))
        if not m or _LOGIC.search(m.group(1) + m.group(3)) or "else" in code[m.end() : hi]:
            continue
        if not _GO_FAILS.match(code[m.end() : hi]):
            continue
        other = "==" if m.group(2) == "!=" else "!="
        body = chunk[: m.start(2)] + other + chunk[m.end(2) :]
        out.append([Mutant(body, f"inverted the guard `{chunk[m.start() : m.end()].strip()}`")])
    return out


def _go_helper_calls(text: str, chunk: str, k: int) -> list[list[Mutant]]:
    """Top-level calls of the file's helpers with a literal where the helper's
    parameter is the wanted value: that literal changed."""
    wanted: dict[str, int] = {}
    for m in _GO_FUNC.finditer(masked("go", text)):
        params = [p.strip().split()[0] for p in m.group(2).split(",") if p.strip()]
        at = [i for i, p in enumerate(params) if _WANTED.match(p)]
        if len(at) == 1 and not m.group(1).startswith("Test"):
            wanted[m.group(1)] = at[0]
    code, out = masked("go", chunk), []
    for lo, hi in _top_level(code):
        call = re.match(r"\s*(\w+)\s*\(", code[lo:hi])
        if not call or call.group(1) not in wanted:
            continue
        open_at = lo + call.end() - 1
        args = _arguments(code, open_at)
        if len(args) <= wanted[call.group(1)]:
            continue
        a_lo, a_hi = args[wanted[call.group(1)]]
        if not re.fullmatch(r"\s*(?:-?[0-9][\w.]*|\"[^\"\n]*\")\s*", chunk[a_lo:a_hi]):
            continue
        changed = change_literal("go", chunk, a_lo, a_hi, k)
        if changed:
            out.append([Mutant(body, how) for body, how in changed])
    return out


def _arguments(code: str, open_at: int) -> list[tuple[int, int]]:
    """Spans of a call's top-level arguments, `code[open_at]` being its `(`."""
    end = closing("go", code, open_at)
    out, depth, start = [], 0, open_at + 1
    for i in range(open_at + 1, end - 1 if end > 0 else open_at + 1):
        ch = code[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append((start, i))
            start = i + 1
    if end > 0:
        out.append((start, end - 1))
    return out


def _rust_asserts(text: str, chunk: str) -> list[list[Mutant]]:
    """Top-level `assert_eq!`/`assert_ne!` statements, the other one (only where the file
    uses both)."""
    whole = masked("rust", text)
    if {m.group(1) for m in _RUST_ASSERT.finditer(whole)} != {"eq", "ne"}:
        return []
    code, out = masked("rust", chunk), []
    for lo, hi in _top_level(code):
        m = _RUST_ASSERT.match(code, lo + len(code[lo:hi]) - len(code[lo:hi].lstrip()))
        if not m:
            continue
        other = "ne" if m.group(1) == "eq" else "eq"
        body = chunk[: m.start(1)] + other + chunk[m.end(1) :]
        out.append([Mutant(body, f"assert_{m.group(1)}! became assert_{other}!")])
    return out
