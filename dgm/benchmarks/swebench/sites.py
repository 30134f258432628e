"""Where a test's copy can change one value: the literals its assertions compare (and
the built-in exceptions it expects) that a passing run of its body must have executed,
as character spans of the file (mutations.Site)."""

from __future__ import annotations

import ast
import random
import re

from dgm.benchmarks.swebench import mutations
from dgm.benchmarks.swebench.mutations import Site

_SWALLOWS = re.compile(r"raises|warns|suppress|expect|deprecated|Raises|Warns", re.I)
_UNITTEST_EQUAL = {"assertEqual", "assertEquals"}


def assertion_sites(
    text: str, body: list[ast.stmt], module: ast.Module | None = None
) -> list[Site]:
    """Literals compared for equality (or looked for in a text) by assertions a passing
    run of this body must have executed (only those: a flipped operator or an added `not`
    is one-sided, the original is the member without it)."""
    sites: list[Site] = []
    for stmt in body:
        expects = [mutations.expected_exception(i.context_expr)
                   for i in getattr(stmt, "items", [])]  # fmt: skip
        if isinstance(stmt, ast.Expr):
            expects.append(mutations.expected_exception(stmt.value))
        # an expected exception swapped for an unrelated one: the raise-only tests too
        sites += [Site(*span(text, e), e.id) for e in expects
                  if e is not None and Site(0, 0, e.id).changes(1, random.Random(0))]  # fmt: skip
        if isinstance(stmt, ast.With) and not any(
            _SWALLOWS.search(ast.unparse(i.context_expr)) for i in stmt.items
        ):
            sites += assertion_sites(text, stmt.body, module)
        elif isinstance(stmt, ast.For) and _runs_body(stmt, module):
            sites += assertion_sites(text, stmt.body, module)
        elif isinstance(stmt, ast.Assert):
            test = stmt.test
            if (
                isinstance(test, ast.Compare)
                and len(test.ops) == 1
                and isinstance(test.ops[0], ast.Eq)
            ):
                sites += _literal_sites(text, [test.left, test.comparators[0]])
                sites += _arithmetic_sites(text, test.comparators[0])
            elif (
                isinstance(test, ast.Compare)
                and isinstance(test.ops[0], ast.In)
                and len(test.ops) == 1
                and isinstance(test.left, ast.Constant)
                and isinstance(test.left.value, str)
                and len(test.left.value) >= 3
            ):
                # `assert "@foo" in out`: a text changed at one character is not in it
                sites += [Site(*span(text, test.left), s.source, letters=True)
                          for s in _literal_sites(text, [test.left])]  # fmt: skip
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            func = stmt.value.func
            if (isinstance(func, ast.Attribute) and func.attr in _UNITTEST_EQUAL
                    and isinstance(func.value, ast.Name) and func.value.id == "self"):  # fmt: skip
                sites += _literal_sites(text, stmt.value.args[:2])
                sites += _arithmetic_sites(text, *stmt.value.args[1:2])
    return sites


def _runs_body(loop: ast.For, module: ast.Module | None) -> bool:
    """A loop whose body every run executes in full: over a non-empty display written in
    the test or bound once at module level, with no `break`/`continue`/`else`."""
    if loop.orelse or any(isinstance(n, ast.Break | ast.Continue) for n in ast.walk(loop)):
        return False
    items = loop.iter
    if isinstance(items, ast.Name) and module is not None:
        bound = [s for s in ast.walk(module) if any(
            isinstance(t, ast.Name) and t.id == items.id
            for t in getattr(s, "targets", []) + [getattr(s, "target", None)])]  # fmt: skip
        rebound = [n for n in ast.walk(module) if isinstance(n, ast.Name)
                   and n.id == items.id and not isinstance(n.ctx, ast.Load)]  # fmt: skip
        if len(bound) != 1 or len(rebound) != 1 or bound[0] not in module.body:
            return False
        items = getattr(bound[0], "value", None)
    return (
        isinstance(items, ast.List | ast.Tuple)
        and bool(items.elts)
        and not any(isinstance(e, ast.Starred) for e in items.elts)
    )


def _arithmetic_sites(text: str, expected: ast.expr | None = None) -> list[Site]:
    """Numbers an expected expression computes with (`== sin(x)**3`, `== (1 + E, d)`): an
    operand of arithmetic beside a non-constant, so the changed expression has another
    value (two constants could fold to the same one)."""
    if expected is None or mutations.literal_nodes(expected):
        return []  # a plain literal or display: _literal_sites has it
    nodes = [
        side
        for node in ast.walk(expected)
        if isinstance(node, ast.BinOp)
        for side, other in ((node.left, node.right), (node.right, node.left))
        if isinstance(side, ast.Constant) and type(side.value) in (int, float)
        and not isinstance(other, ast.Constant)
    ]  # fmt: skip
    return _literal_sites(text, nodes)


def _literal_sites(text: str, operands: list[ast.expr]) -> list[Site]:
    out = []
    for node in (n for operand in operands for n in mutations.literal_nodes(operand)):
        start, end = span(text, node)
        site = Site(start, end, text[start:end])
        if site.changes(1, random.Random(0)):
            out.append(site)
    return out


def line_starts(text: str) -> list[int]:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def offset(text: str, lineno: int, col: int) -> int:
    """Character offset of ast's (1-based line, UTF-8 byte column)."""
    starts = line_starts(text)
    line = text[starts[lineno - 1] : starts[lineno]]
    return starts[lineno - 1] + len(line.encode()[:col].decode(errors="ignore"))


def span(text: str, node: ast.AST) -> tuple[int, int]:
    start = offset(text, node.lineno, node.col_offset)  # type: ignore[attr-defined]
    return start, offset(text, node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
