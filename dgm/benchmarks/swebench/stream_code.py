"""What a compile of one Python file holds, for the judge's pytest plugin checks
(stream_checks.py). Staged beside the plugin as `dgm_judge_code_<nonce>`; never imported
by dgm, except by its own tests.

`compile_variants` gives a *held* file: every code object the file compiles to, as Python
imports it and as pytest's assertion rewriter makes it (with and without the pass hook),
and what the module's own source binds at top level. It is a plain tuple of immutable
values (frozensets, tuples, bools), so code of the patch, which shares the process, can
read it but not add a code of its own to it (red team round nine D2 added entries to the
checks' caches). What it uses is bound in each function's defaults, not looked up in this
module's globals at call time (a module's names can be rebound, and no audit event says
so). Kept to Python 3.6 syntax.

A held file, by index (`has` and the checks unpack it):
  0 codes        frozenset of code objects (a code's `==` and hash are its content)
  1 quals        frozenset of "Class.test_x" names defined at module and class level
  2 qual_codes   frozenset of (qualname, code)
  3 names        frozenset of "test_x" names
  4 name_codes   frozenset of (name, code)
  5 partial      the rewriter could not be run: rewritten code is unknown (all held)
  6 bound        frozenset of every name the module's own source can bind
  7 dynamic      it binds names no one can list (`import *`, `globals()`)
  8 imports      tuple of (name, module, attribute or None): a name bound once, by a
                 top-level import
  9 defs         frozenset of names bound once, by an undecorated top-level def
  10 decorated   frozenset of qualnames with a decorator other than a pytest mark
  11 marks_xfail its source names xfail
"""

import ast

_FUNCTION_FLAGS = 0x1 | 0x2  # CO_OPTIMIZED | CO_NEWLOCALS: a function's code, not a class body's
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_COMPS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_AST = ast.AST
_ONLY_AST = ast.PyCF_ONLY_AST


def has(held, code, _frozenset=frozenset):
    """Whether the held file compiles to `code` (or cannot say: partial)."""
    return code in held[0] or held[5]


def _children(node, _AST=_AST, _isinstance=isinstance, _getattr=getattr, _list=list):
    """`ast.iter_child_nodes`, without the `ast` module's Python code (its globals can be
    rebound after load)."""
    out = []
    for field in node._fields:
        value = _getattr(node, field, None)
        if _isinstance(value, _AST):
            out.append(value)
        elif _isinstance(value, _list):
            out.extend(v for v in value if _isinstance(v, _AST))
    return out


def _walk(tree, _children=_children):
    stack, out = [tree], []
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(_children(node))
    return out


def _module_bindings(body, _DEFS=_DEFS, _COMPS=_COMPS, _children=_children, _ast=ast,
                     _isinstance=isinstance, _list=list):  # fmt: skip
    """The names statements of a module's top level bind in its scope."""
    out = []
    stack = _list(body)
    while stack:
        node = stack.pop()
        if _isinstance(node, _DEFS):
            out.append(node.name)
            stack.extend(node.decorator_list)
            continue
        if _isinstance(node, _ast.Lambda) or _isinstance(node, _ast.comprehension):
            continue
        if _isinstance(node, (_ast.Import, _ast.ImportFrom)):
            for alias in node.names:
                out.append((alias.asname or alias.name).split(".")[0])
            continue
        if _isinstance(node, _ast.Name) and not _isinstance(node.ctx, _ast.Load):
            out.append(node.id)
        elif _isinstance(node, _ast.ExceptHandler) and node.name:
            out.append(node.name)
        for child in _children(node):
            if not _isinstance(child, _COMPS):
                stack.append(child)
    return out


def _is_mark(decorator, _ast=ast, _isinstance=isinstance):
    """`@pytest.mark.x`, `@mark.x(...)`: a marker, not a wrapper."""
    node = decorator.func if _isinstance(decorator, _ast.Call) else decorator
    while _isinstance(node, _ast.Attribute):
        if node.attr == "mark":
            return True
        node = node.value
    return _isinstance(node, _ast.Name) and node.id == "mark"


def _decorated(body, _DEFS=_DEFS, _is_mark=_is_mark, _ast=ast, _isinstance=isinstance,
               _any=any):  # fmt: skip
    out = []
    stack = [(node, "") for node in body]
    while stack:
        node, prefix = stack.pop()
        if not _isinstance(node, _DEFS):
            continue
        if _any(not _is_mark(d) for d in node.decorator_list):
            out.append(prefix + node.name)
        if _isinstance(node, _ast.ClassDef):
            stack.extend((child, prefix + node.name + ".") for child in node.body)
    return out


def _read_source(source, tree, _walk=_walk, _bindings=_module_bindings, _decorated=_decorated,
                 _ast=ast, _isinstance=isinstance, _any=any, _frozenset=frozenset,
                 _tuple=tuple):  # fmt: skip
    """(bound, dynamic, imports, defs, decorated, marks_xfail) of a module's source."""
    dynamic = False
    counts = {}
    for node in _walk(tree):
        if _isinstance(node, _ast.ImportFrom) and _any(a.name == "*" for a in node.names):
            dynamic = True
        elif _isinstance(node, _ast.Call) and _isinstance(node.func, _ast.Name):
            if node.func.id in ("globals", "exec", "vars", "setattr", "__import__"):
                dynamic = True
        elif _isinstance(node, _ast.Global):
            for name in node.names:
                counts[name] = counts.get(name, 0) + 2  # bound from inside a function
    for name in _bindings(tree.body):
        counts[name] = counts.get(name, 0) + 1
    decorated = _frozenset(_decorated(tree.body))
    imports, defs = [], []
    for node in tree.body:
        once = [n for n in _bindings([node]) if counts.get(n) == 1]
        if _isinstance(node, _ast.Import):
            for alias in node.names:
                if alias.asname and alias.asname in once:
                    imports.append((alias.asname, alias.name, None))
                elif not alias.asname and alias.name in once:  # `import a`, not `import a.b`
                    imports.append((alias.name, alias.name, None))
        elif _isinstance(node, _ast.ImportFrom) and not node.level and node.module:
            for alias in node.names:
                if (alias.asname or alias.name) in once:
                    imports.append((alias.asname or alias.name, node.module, alias.name))
        elif _isinstance(node, (_ast.FunctionDef, _ast.AsyncFunctionDef)):
            if node.name in once and node.name not in decorated:
                defs.append(node.name)
    return (_frozenset(counts), dynamic, _tuple(imports), _frozenset(defs), decorated,
            b"xfail" in source)  # fmt: skip


def _add(module_code, codes, quals, names, _type=type, _flags=_FUNCTION_FLAGS):
    """Every code object of a module's code into `codes`; (qualname, code) of its module-
    and class-level functions into `quals`, (name, code) into `names`."""
    stack = [(module_code, "")]
    while stack:
        code, prefix = stack.pop()
        codes.append(code)
        for const in code.co_consts:
            if _type(const) is not _type(code):
                continue
            if prefix is None or const.co_name.startswith("<"):
                stack.append((const, None))
            elif const.co_flags & _flags:
                quals.append((prefix + const.co_name, const))
                names.append((const.co_name, const))
                stack.append((const, None))  # nested defs are no tests
            else:  # a class body
                stack.append((const, prefix + const.co_name + "."))


class _PassHookConfig:
    """What the assertion rewriter reads of a config, for the pass-hook variant."""

    def getini(self, name):
        return name == "enable_assertion_pass_hook"


def compile_variants(source, path, rewrite, rewritten=True, _compile=compile,
                     _only_ast=_ONLY_AST, _read_source=_read_source, _add=_add,
                     _config=_PassHookConfig(), _Exception=Exception, _TypeError=TypeError,
                     _frozenset=frozenset, _tuple=tuple):  # fmt: skip
    """The held file (see the module's doc) for `source`: as Python compiles it and, when
    pytest may rewrite it (a test file, a conftest, a plugin), as `rewrite` (pytest's
    `rewrite_asserts`, taken at load) rewrites it."""

    def parse():
        return _compile(source, path, "exec", _only_ast, dont_inherit=True)

    tree = parse()
    bound, dynamic, imports, defs, decorated, marks_xfail = _read_source(source, tree)
    codes, quals, names = [], [], []
    _add(_compile(tree, path, "exec", dont_inherit=True), codes, quals, names)
    partial = False
    if rewritten and rewrite is None:
        partial = True
    elif rewritten:
        for config in (None, _config):
            tree = parse()
            try:
                try:
                    rewrite(tree, source, path, config)
                except _TypeError:  # pytest < 5: (mod, module_path, config)
                    tree = parse()
                    rewrite(tree, path, config)
                _add(_compile(tree, path, "exec", dont_inherit=True), codes, quals, names)
            except _Exception:  # noqa: BLE001 - a rewriter this module cannot follow
                partial = True
    return (_frozenset(codes), _frozenset(q for q, _ in quals), _frozenset(quals),
            _frozenset(n for n, _ in names), _frozenset(names), partial, bound, dynamic,
            imports, defs, decorated, marks_xfail)  # fmt: skip
