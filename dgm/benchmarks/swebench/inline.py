"""Helpers a test asserts through, inlined into the test before it is copied.

A FAIL_TO_PASS test that only calls a module-level helper holding the assertions
(`common_object_test(app)`) has no literal of its own to change, so it would get no
family of look-alikes, and a forger passes it unseen. Replacing the call statement by the
helper's body (its parameters bound first) gives the test the helper's assertions, which
the copy planner then changes like any other. Only when that is the same code: a plain
helper (no return, yield, global, decorators, defaults), whose names do not meet the
test's own, and whose text can move to another indentation unchanged.
"""

from __future__ import annotations

import ast
import textwrap


def inline_helpers(text: str, wanted: set[str]) -> str:
    """`text` with the helper calls of the tests named in `wanted` (bare names) inlined.
    Where every use of such a helper is a call a module-level test makes, all of them are
    inlined and the helper is gone: the original's text is then no helper's text."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return text
    lines = text.splitlines(keepends=True)
    functions = [s for s in tree.body if isinstance(s, ast.FunctionDef)]
    helpers = {s.name: s for s in functions if _plain(s)}
    calls: dict[str, list[tuple[ast.FunctionDef, ast.stmt, ast.Call]]] = {}
    for fn in functions:
        for stmt in fn.body:
            call = stmt.value if isinstance(stmt, ast.Expr) else None
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
                if call.func.id in helpers and helpers[call.func.id] is not fn:
                    calls.setdefault(call.func.id, []).append((fn, stmt, call))
    uses = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)]
    edits: list[tuple[int, int, str]] = []  # (first line, last line, new text), 0-based
    for name, found in calls.items():
        if not any(fn.name in wanted for fn, _, _ in found):
            continue
        helper = helpers[name]
        made = [(fn, stmt, _inlined(text, lines, helper, call, fn, stmt))
                for fn, stmt, call in found]  # fmt: skip
        everywhere = uses.count(name) == len(found) and all(
            new is not None and fn.name.startswith("test") for fn, _, new in made
        )
        for fn, stmt, new in made:
            if new is not None and (everywhere or fn.name in wanted):
                edits.append((stmt.lineno - 1, (stmt.end_lineno or stmt.lineno) - 1, new))
        if everywhere:
            edits.append((helper.lineno - 1, (helper.end_lineno or helper.lineno) - 1, ""))
    for first, last, new in sorted(edits, reverse=True):
        lines[first : last + 1] = [new]
    out = "".join(lines)
    try:
        compile(out, "<inlined>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return text
    return out


def _plain(fn: ast.FunctionDef) -> bool:
    args = fn.args
    if fn.decorator_list or args.vararg or args.kwarg or args.kwonlyargs or args.defaults:
        return False
    if args.posonlyargs or fn.name.startswith("test"):
        return False
    for node in ast.walk(fn):
        if isinstance(node, ast.Return | ast.Yield | ast.YieldFrom | ast.Await | ast.Global
                      | ast.Nonlocal | ast.Lambda | ast.FunctionDef | ast.ClassDef):  # fmt: skip
            if node is not fn:
                return False
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
            if node.lineno != node.end_lineno:
                return False  # a multi-line string would change with the indentation
    return True


def _names(node: ast.AST, ctx: type | None = None) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)
            and (ctx is None or isinstance(n.ctx, ctx))}  # fmt: skip


def _inlined(text: str, lines: list[str], helper: ast.FunctionDef, call: ast.Call,
             test: ast.FunctionDef, stmt: ast.stmt) -> str | None:  # fmt: skip
    params = [a.arg for a in helper.args.args]
    if len(call.args) + len(call.keywords) != len(params) or any(
        k.arg is None for k in call.keywords
    ):
        return None
    bound = dict(zip(params, call.args, strict=False))
    for keyword in call.keywords:
        if keyword.arg not in params or keyword.arg in bound:
            return None
        bound[str(keyword.arg)] = keyword.value
    body = helper.body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    if not body:
        return None
    # The helper's own names must not meet the test's: none it binds is one the test
    # uses (except a parameter bound to the same name), none it reads the test rebinds.
    own = set(params) | {n for s in body for n in _names(s, ast.Store)}
    same = {p for p, a in bound.items() if isinstance(a, ast.Name) and a.id == p}
    test_names = {n for s in test.body for n in _names(s)} | {a.arg for a in test.args.args}
    if (own - same) & test_names:
        return None
    reads = {n for s in body for n in _names(s, ast.Load)} - own
    test_binds = {n for s in test.body for n in _names(s, ast.Store)}
    if reads & (test_binds | {a.arg for a in test.args.args}):
        return None
    indent = lines[stmt.lineno - 1][: stmt.col_offset]
    if indent.strip():
        return None  # the call shares its line with another statement
    first = body[0].lineno - 1
    last = (body[-1].end_lineno or body[-1].lineno) - 1
    block = textwrap.dedent("".join(lines[first : last + 1]))
    binds = [f"{p} = {ast.get_source_segment(text, a)}\n" for p, a in bound.items()
             if p not in same]  # fmt: skip
    if any(b.count("\n") > 1 for b in binds):
        return None  # an argument over several lines
    out = textwrap.indent("".join(binds) + block, indent, lambda line: bool(line.strip()))
    return out if out.endswith("\n") else out + "\n"
