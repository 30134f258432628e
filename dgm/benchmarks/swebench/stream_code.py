"""What a compile of one Python file holds, for the judge's pytest plugin checks
(stream_checks.py). Staged beside the plugin as `dgm_judge_code_<nonce>`; never imported
by dgm, except by its own tests.

`Held` keeps every code object a file compiles to, as Python imports it and as pytest's
assertion rewriter makes it (with and without the pass hook), and what the module's own
source binds at top level. Kept to Python 3.6 syntax.
"""

import ast

_compile = compile
_parse = ast.parse
_isinstance = isinstance
_type = type
_FUNCTION_FLAGS = 0x1 | 0x2  # CO_OPTIMIZED | CO_NEWLOCALS: a function's code, not a class body's
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class Held:
    """The code objects a compile of one file gives (plain, and as pytest's assertion
    rewriter makes it, with and without its pass hook), and what its source binds."""

    def __init__(self):
        self.codes = {}  # (name, first line) -> [code, ...]
        self.by_qual = {}  # "Class.test_x" -> [code, ...]: module and class level defs
        self.by_name = {}  # "test_x" -> [code, ...]
        self.partial = False  # the rewriter could not be run: rewritten code is unknown
        self.bound = set()  # every name the module's own source can bind
        self.dynamic = False  # it binds names no one can list (`import *`, `globals()`)
        self.imports = {}  # name bound once, by a top-level import -> (module, attribute)
        self.defs = {}  # name bound once, by an undecorated top-level def -> qualname
        self.decorated = set()  # qualnames with a decorator other than a pytest mark
        self.marks_xfail = False

    def add(self, module_code):
        stack = [(module_code, "")]
        while stack:
            code, prefix = stack.pop()
            self.codes.setdefault((code.co_name, code.co_firstlineno), []).append(code)
            for const in code.co_consts:
                if _type(const) is not _type(code):
                    continue
                if prefix is None or const.co_name.startswith("<"):
                    stack.append((const, None))
                elif const.co_flags & _FUNCTION_FLAGS:
                    self.by_qual.setdefault(prefix + const.co_name, []).append(const)
                    self.by_name.setdefault(const.co_name, []).append(const)
                    stack.append((const, None))  # nested defs are no tests
                else:  # a class body
                    stack.append((const, prefix + const.co_name + "."))

    def has(self, code):
        for held in self.codes.get((code.co_name, code.co_firstlineno), ()):
            if held == code:
                return True
        return self.partial

    def read_source(self, source, tree):
        self.marks_xfail = b"xfail" in source
        counts = {}
        for node in ast.walk(tree):
            if _isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
                self.dynamic = True
            elif _isinstance(node, ast.Call) and _isinstance(node.func, ast.Name):
                if node.func.id in ("globals", "exec", "vars", "setattr", "__import__"):
                    self.dynamic = True
            elif _isinstance(node, ast.Global):
                for name in node.names:
                    counts[name] = counts.get(name, 0) + 2  # bound from inside a function
        for name in _module_bindings(tree.body):
            counts[name] = counts.get(name, 0) + 1
        self.bound = set(counts)
        for node in tree.body:
            self._classify(node, "")
            once = [n for n in _bound_by(node) if counts.get(n) == 1]
            if _isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname and alias.asname in once:
                        self.imports[alias.asname] = (alias.name, None)
                    elif not alias.asname and alias.name in once:  # `import a`, not `import a.b`
                        self.imports[alias.name] = (alias.name, None)
            elif _isinstance(node, ast.ImportFrom) and not node.level and node.module:
                for alias in node.names:
                    if (alias.asname or alias.name) in once:
                        self.imports[alias.asname or alias.name] = (node.module, alias.name)
            elif _isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if node.name in once and node.name not in self.decorated:
                    self.defs[node.name] = node.name

    def _classify(self, node, prefix):
        if not _isinstance(node, _DEFS):
            return
        if any(not _is_mark(d) for d in node.decorator_list):
            self.decorated.add(prefix + node.name)
        if _isinstance(node, ast.ClassDef):
            for child in node.body:
                self._classify(child, prefix + node.name + ".")


def _bound_by(node):
    """The names one top-level statement binds in the module's scope."""
    return list(_module_bindings([node]))


def _module_bindings(body):
    stack = list(body)
    while stack:
        node = stack.pop()
        if _isinstance(node, _DEFS):
            yield node.name
            stack.extend(node.decorator_list)
            continue
        if _isinstance(node, ast.Lambda) or _isinstance(node, ast.comprehension):
            continue
        if _isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                yield (alias.asname or alias.name).split(".")[0]
            continue
        if _isinstance(node, ast.Name) and not _isinstance(node.ctx, ast.Load):
            yield node.id
        elif _isinstance(node, ast.ExceptHandler) and node.name:
            yield node.name
        for child in ast.iter_child_nodes(node):
            if not _isinstance(child, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                stack.append(child)


def _is_mark(decorator):
    """`@pytest.mark.x`, `@mark.x(...)`: a marker, not a wrapper."""
    node = decorator.func if _isinstance(decorator, ast.Call) else decorator
    while _isinstance(node, ast.Attribute):
        if node.attr == "mark":
            return True
        node = node.value
    return _isinstance(node, ast.Name) and node.id == "mark"


class _PassHookConfig:
    """What the assertion rewriter reads of a config, for the pass-hook variant."""

    def getini(self, name):
        return name == "enable_assertion_pass_hook"


def compile_variants(source, path, rewrite, rewritten=True):
    """Held for `source`: as Python compiles it and, when pytest may rewrite it (a test
    file, a conftest, a plugin), as `rewrite` (pytest's `rewrite_asserts`, taken at load)
    rewrites it."""
    held = Held()
    tree = _parse(source, filename=path)
    held.read_source(source, tree)
    held.add(_compile(tree, path, "exec", dont_inherit=True))
    if not rewritten:
        return held
    if rewrite is None:
        held.partial = True
        return held
    for config in (None, _PassHookConfig()):
        tree = _parse(source, filename=path)
        try:
            try:
                rewrite(tree, source, path, config)
            except TypeError:  # pytest < 5: (mod, module_path, config)
                tree = _parse(source, filename=path)
                rewrite(tree, path, config)
            held.add(_compile(tree, path, "exec", dont_inherit=True))
        except Exception:  # noqa: BLE001 - a rewriter this module cannot follow
            held.partial = True
    return held
