"""Disguised Python test files (see polyglot_copies), on the syntax tree.

The whole file is written back with `ast.unparse`, real tests and copies alike, so the
formatting of a copy is the formatting of every test; comments are gone from all of them.
Test methods (and module-level test functions) are renamed, copies are added in the same
class, and the tests of each class are shuffled among themselves. A must-fail copy has
the literal expected value of one `assertEqual`-like call (or of `assert x == literal`,
or of the literal a name it compares with was bound to) changed.
"""

from __future__ import annotations

import ast
import contextvars
import copy
import re
import secrets
from typing import Any

from dgm.benchmarks.polyglot import python_values, value_draws, variants
from dgm.benchmarks.polyglot.canaries import parse_python
from dgm.benchmarks.polyglot.copies import (
    MUST_FAIL,
    MUST_PASS,
    REAL,
    Entry,
    NameGen,
    copyable,
    pick_copies,
)

_EQUAL = {"assertEqual", "assertEquals", "assertListEqual", "assertDictEqual", "assertIs",
          "assertTupleEqual", "assertSetEqual", "assertMultiLineEqual",
          "assertSequenceEqual"}  # fmt: skip
_Func = (ast.FunctionDef, ast.AsyncFunctionDef)


def _key(cls: str, name: str) -> str:
    return f"{cls}.{name}" if cls else name


def disguise_python(text: str, names: NameGen) -> tuple[str, list[Entry]]:
    tree = parse_python(text)
    entries: list[Entry] = []
    value_draws.NUMBERS.set(_expected_numbers(tree))
    constants = [c.value for c in ast.walk(tree) if isinstance(c, ast.Constant)]
    value_draws.FILE_NUMBERS.set(tuple(repr(v) for v in constants if type(v) in (int, float)))
    variants.STRINGS.set(_expected_strings(tree))
    FORMS.set(frozenset(re.findall(r"\bself\.(\w+)\s*\(", text)))
    defs = {n.name: ast.unparse(n) for n in ast.walk(tree)
            if isinstance(n, _Func) and not n.name.startswith("test")}  # fmt: skip
    containers: list[ast.Module | ast.ClassDef] = [tree]
    containers += [n for n in tree.body if isinstance(n, ast.ClassDef)]
    for node in containers:
        cls = node.name if isinstance(node, ast.ClassDef) else ""
        slots = [i for i, item in enumerate(node.body)
                 if isinstance(item, _Func) and item.name.startswith("test")]  # fmt: skip
        if not slots:
            continue
        tests: list[Any] = [node.body[i] for i in slots]
        originals = [_key(cls, t.name) for t in tests]
        able = [i for i, t in enumerate(tests) if copyable(ast.unparse(t), defs)]
        mutable = [i for i in able if mutate(tests[i]) is not None]
        passing, failing = pick_copies(able, mutable)
        out = []
        for i, test in enumerate(tests):
            test.name = names.name("python")
            entries.append(Entry(_key(cls, test.name), originals[i], REAL))
            out.append(test)
        copies = [(i, MUST_PASS, copy.deepcopy(tests[i]), "") for i in passing]
        for i in sorted(set(failing)):
            made = mutants(tests[i], failing.count(i))
            copies += [(i, MUST_FAIL, twin, how) for twin, how in made]
        for i, kind, twin, how in copies:
            twin.name = names.name("python")
            entries.append(Entry(_key(cls, twin.name), originals[i], kind, how))
            out.append(twin)
        out.sort(key=lambda _t: secrets.randbelow(1 << 30))
        first = slots[0]
        rest = [item for i, item in enumerate(node.body) if i not in set(slots)]
        node.body = rest[:first] + out + rest[first:]
    if not entries:
        return text, []
    return ast.unparse(tree) + "\n", entries


def mutants(test: Any, k: int) -> list[tuple[Any, str]]:
    """Up to k changed copies of `test`, all changing the same literal expected value, the
    k+1 values drawn as one set (polyglot_variants): [] when it has none to change."""
    sites = _sites(test)
    token = value_draws.INPUTS.set(_inputs(test, sites))
    try:
        made = _mutants(test, sites, k)
        if made:
            return made
        lenient = value_draws.LENIENT.set(True)  # (see value_draws.LENIENT)
        try:
            made = _mutants(test, sites, k)
        finally:
            value_draws.LENIENT.reset(lenient)
        return made or _negated(test)
    finally:
        value_draws.INPUTS.reset(token)


def _inputs(test: Any, sites: list[tuple[ast.AST, str, int | None, str]]) -> tuple:
    """The test's string and number constants outside its expected values."""
    expected = set()
    for holder, field, position, _ in sites:
        node = getattr(holder, field)
        node = node[position] if position is not None else node
        expected |= {id(c) for c in ast.walk(node)}
    out = []
    for c in ast.walk(test):
        if isinstance(c, ast.Constant) and id(c) not in expected:
            if type(c.value) is str:
                out.append(("", c.value))
            elif type(c.value) in (int, float):
                out.append(("num", repr(c.value)))
    return tuple(out)


def _mutants(test: Any, sites: list, k: int) -> list[tuple[Any, str]]:
    for index in sorted(range(len(sites)), key=lambda _i: secrets.randbelow(1 << 30)):
        holder, field, position, form = sites[index]
        node = getattr(holder, field)[position] if position is not None else getattr(holder, field)
        value = ast.literal_eval(node)
        if form == "assertIs" and not isinstance(value, bool):
            continue
        found = [v for v in python_values.python_value(value, k) if v != value]
        if not found:
            continue
        out = []
        for new in found:
            _put((holder, field, position), ast.parse(repr(new), mode="eval").body)
            out.append((copy.deepcopy(test), f"expected {value!r} -> {new!r}"))
        _put((holder, field, position), node)
        return out
    return []


FORMS: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar("forms", default=frozenset())
"""The `self.<method>(...)` checks the file being disguised calls (set by the disguise)."""
_OPPOSITES = [("assert_", "refute_"), ("True", "False"), ("IsNone", "IsNotNone"),
              ("In", "NotIn"), ("Equal", "NotEqual"), ("Is", "IsNot")]  # fmt: skip


def _opposite(name: str) -> str | None:
    """The check the file also calls that asserts the opposite of `name`, or None."""
    for a, b in _OPPOSITES:
        for this, that in ((a, b), (b, a)):
            if this in name:
                other = name.replace(this, that, 1)
                if other != name and other in FORMS.get():
                    return other
    return None


def _negated(test: Any) -> list[tuple[Any, str]]:
    """One copy of `test` with one check turned into its opposite, where the file itself
    calls both (dominoes' `assert_correct_chain`/`refute_correct_chain`): for tests with
    no literal expected value; no form the file lacks is ever written."""
    calls = [n for n in ast.walk(test) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
             and n.func.value.id == "self" and _opposite(n.func.attr)]  # fmt: skip
    if not calls:
        return []
    call = secrets.choice(calls)
    name = call.func.attr
    call.func.attr = _opposite(name)
    twin = copy.deepcopy(test)
    call.func.attr = name
    return [(twin, "negated a boolean check")]


def _put(where: tuple[ast.AST, str, int | None], node: ast.AST) -> None:
    holder, field, position = where
    if position is None:
        setattr(holder, field, node)
    else:
        getattr(holder, field)[position] = node


def mutate(fn: ast.AST) -> str | None:
    """Whether `fn` has a literal expected value a must-fail copy can change."""
    with value_draws.trial():
        return "" if mutants(fn, 1) else None


def _expected_numbers(tree: ast.AST) -> tuple[str, ...]:
    """Every number (nested ones too) in a literal expected value of the file's tests:
    what a changed number is drawn from (polyglot_variants)."""
    found = []
    for fn in ast.walk(tree):
        if isinstance(fn, _Func) and fn.name.startswith("test"):
            for holder, field, position, _ in _sites(fn):
                node = getattr(holder, field)
                node = node[position] if position is not None else node
                found += [repr(c.value) for c in ast.walk(node) if isinstance(c, ast.Constant)
                          and type(c.value) in (int, float) and c.value >= 0]  # fmt: skip
    return tuple(found)


def _expected_strings(tree: ast.AST) -> tuple[tuple[str, str], ...]:
    """("", each string) in the literal expected values of the file's tests."""
    found = []
    for fn in ast.walk(tree):
        if isinstance(fn, _Func) and fn.name.startswith("test"):
            for holder, field, position, _ in _sites(fn):
                node = getattr(holder, field)
                node = node[position] if position is not None else node
                found += [("", c.value) for c in ast.walk(node)
                          if isinstance(c, ast.Constant) and type(c.value) is str]  # fmt: skip
    return tuple(found)


def _literal(node: ast.AST) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _sites(fn: ast.AST) -> list[tuple[ast.AST, str, int | None, str]]:
    """(holder, field, index, assertion) of each literal expected value in `fn`."""
    bound: dict[str, ast.Assign] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and _literal(node.value):
                bound[target.id] = node
    sites: list[tuple[ast.AST, str, int | None, str]] = []
    for node in ast.walk(fn):
        pair: list[ast.expr] = []
        holder: ast.AST = node
        field, form = "args", ""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in _EQUAL and len(node.args) >= 2:
                pair, form = node.args[:2], node.func.attr
        elif isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare):
            test = node.test  # only `assert a == b`: an `==` elsewhere may be no check
            if len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
                holder, pair, form = test, [test.left, test.comparators[0]], "=="
        if not pair:
            continue
        literal = [j for j, arg in enumerate(pair) if _literal(arg)]
        if len(literal) == 1:
            j = literal[0]
            if form == "==":
                field, pos = ("left", None) if j == 0 else ("comparators", 0)
                sites.append((holder, field, pos, form))
            else:
                sites.append((holder, field, j, form))
            continue
        for arg in pair:
            if isinstance(arg, ast.Name) and arg.id in bound and not literal:
                sites.append((bound[arg.id], "value", None, form))
    return sites
