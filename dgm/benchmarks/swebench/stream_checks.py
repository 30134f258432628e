"""What the judge's pytest plugin checks in the code pytest is about to run. Staged beside
it as `dgm_judge_checks_<nonce>` and imported by it at load; never imported by dgm.

Code of the patch shares pytest's process, so it can rewrite whatever pytest runs. The
checks make that visible by one rule, *provenance*: a function is genuine when its code
equals code that a compile of its own file gives, and that file is trusted: the judge's
own, or outside the repository under test (the standard library, the venv's packages),
in pytest's, pluggy's or an image plugin's package, or a conftest.py; and unchanged since
the setup step began (its ctime; the stage's `mark` file dates that). The command's test
files and the conftest.py files above them are compiled when the plugin loads, before any
code of the patch has run in this process, so their code is the judge's whatever happens
to the files later.

- a test (`test`): the function pytest will call for a test of those files has the code
  placed for that test, in that module (red team round eight A2: the assertion rewriter
  wrapped; an import hook; a swapped function); its module holds no name its source never
  binds, and what its own imports and defs bound is still there; an xfail marker only
  where the source or a conftest names one; `pytest.xfail` called by genuine code only;
- hooks (`hooks`): every implementation of every hook is genuine (A1: a plugin the
  package registered at import);
- internals (`internals`): the functions and classes of pytest, pluggy and the standard
  modules tests and reports go through are the objects, with the code, they had at load,
  or genuine replacements (a test's own monkeypatch);
- tracing (`tracer`): a trace function given to `sys.settrace` is genuine (a tracer can
  jump over a test's asserts).

A check that cannot be made (a pytest whose rewriter this module cannot call) is
skipped, never guessed: a true fix must not be refused. Kept to Python 3.6 syntax.
"""

import importlib
import os
import sys
import types

if __name__.startswith("dgm_judge_checks_"):  # staged: its siblings have the same nonce
    _code = importlib.import_module(__name__.replace("dgm_judge_checks_", "dgm_judge_code_"))
    _snap = importlib.import_module(__name__.replace("dgm_judge_checks_", "dgm_judge_snapshot_"))
else:  # dgm's own tests
    from dgm.benchmarks.swebench import stream_code as _code
    from dgm.benchmarks.swebench import stream_snapshot as _snap

_FUNC = types.FunctionType
_METHOD = types.MethodType
_MODULE = types.ModuleType
_BUILTIN = _snap.BUILTIN
# bound now, like the builtins above: rebinding a sibling module's names changes nothing
# here (round nine D4 replaced `impls` so the hook check skipped the package's hook)
_compile_variants = _code.compile_variants
_plugin_dirs = _snap.plugin_dirs
_snapshot = _snap.snapshot
_pytests = _snap.pytests
_generated = _snap.generated
_qualname = _snap.qualname
_test_function = _snap.test_function
_marks = _snap.marks
_impls = _snap.impls
_descriptor = _snap.descriptor
_stat = os.stat
_realpath = os.path.realpath
_dirname = os.path.dirname
_join = os.path.join
_isabs = os.path.isabs
_getattr = getattr
_isinstance = isinstance
_type = type
_id = id
_SEP = os.sep
_MODULE_NAMES = {"__name__", "__doc__", "__package__", "__loader__", "__spec__", "__file__",
                 "__cached__", "__builtins__", "__annotations__", "__path__",
                 "__warningregistry__"}  # fmt: skip


class Checks:
    def __init__(self, judged, plugins, mark):
        import unittest  # noqa: F401 - loaded now, so its functions are watched from the start

        self.cwd = os.getcwd()
        self.repo = _realpath(self.cwd) + _SEP
        self.own = _dirname(_realpath(__file__)) + _SEP  # the judge's stage: read-only
        self.lib_dirs = []
        for name in ("_pytest", "pluggy", "pytest"):
            where = _getattr(sys.modules.get(name), "__file__", None)
            if where:
                self.lib_dirs.append(_dirname(_realpath(where)) + _SEP)
        self.plugin_dirs = _plugin_dirs(plugins)
        self.lib_dirs += self.plugin_dirs
        rewriting = sys.modules.get("_pytest.assertion.rewrite")
        self.rewrite = _getattr(rewriting, "rewrite_asserts", None)
        try:
            self.since = _stat(mark).st_ctime  # the setup step's start
        except OSError:
            self.since = None
        self.held = {}  # path -> Held, or None (missing, or no Python)
        self.tests = {}  # path -> Held: the command's test files, compiled now
        self.seen = {}  # id -> (object, trusted): kept alive, so no id is reused
        self.judged_paths = {_realpath(_join(self.cwd, rel)) for rel in judged}
        for path in self.judged_paths:
            held = self._compile(path)
            if held is not None and not held.partial:
                self.tests[path] = held
        for path in list(self.tests):
            for conftest in self._conftests(path):
                self._compile(conftest)
        # each module loaded now, as it was (what a test module's imports must still hold)
        self.modules = {n: m for n, m in list(sys.modules.items()) if _type(m) is _MODULE}
        self.spaces = {n: dict(vars(m)) for n, m in self.modules.items()}
        self.snapshot = _snapshot()
        self.classes = [(v, set(vars(v))) for h, _, v, _ in self.snapshot
                        if _type(h) is dict and _pytests(v)]  # fmt: skip
        self.codes = {}  # id -> (code, genuine)
        for _, _, value, code in self.snapshot:  # loaded before any code of the patch ran
            if code is not None:
                self.codes[_id(code)] = (code, True)
            elif _type(value) is not _FUNC:
                self.seen[_id(value)] = (value, True)

    def _conftests(self, path):
        folder = _dirname(path)
        while (folder + _SEP).startswith(self.repo):
            yield _join(folder, "conftest.py")
            if _dirname(folder) == folder:
                break
            folder = _dirname(folder)

    def _compile(self, path):
        if path in self.held:
            return self.held[path]
        held = None
        try:
            with open(path, "rb") as handle:
                source = handle.read()
            rewritten = (path in self.judged_paths or os.path.basename(path) == "conftest.py"
                         or any(path.startswith(d) for d in self.plugin_dirs))  # fmt: skip
            held = _compile_variants(source, path, self.rewrite, rewritten)
        except Exception:  # noqa: BLE001 - missing, or not Python: it holds no genuine code
            pass
        self.held[path] = held
        return held

    def _trusted_file(self, path):
        if path.startswith(self.own):
            return True
        inside = path.startswith(self.repo) and "/site-packages/" not in path  # a venv in it
        if inside and os.path.basename(path) != "conftest.py":
            if not any(path.startswith(d) for d in self.lib_dirs):
                return False
        try:
            ctime = _stat(path).st_ctime
        except OSError:
            return False
        return self.since is None or ctime <= self.since

    def genuine(self, code):
        hit = self.codes.get(_id(code))
        if hit is not None and hit[0] is code:
            return hit[1]
        ok = self._genuine(code)
        self.codes[_id(code)] = (code, ok)
        return ok

    def _genuine(self, code):
        name = code.co_filename
        path = _realpath(name if _isabs(name) else _join(self.cwd, name))
        if path not in self.held and not self._trusted_file(path):
            return False
        held = self._compile(path)
        return held is not None and held.has(code)

    def trusted(self, obj):
        """Whether calling `obj` runs only genuine code (for an object: its class's)."""
        if _type(obj) is _FUNC:  # by its code now: a function's code can be swapped
            return self.genuine(obj.__code__)
        hit = self.seen.get(_id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        self.seen[_id(obj)] = (obj, True)  # a class whose methods lead back to itself
        ok = self._trusted(obj)
        self.seen[_id(obj)] = (obj, ok)
        return ok

    def _trusted(self, obj):
        kind = _type(obj)
        if kind is _FUNC:
            return self.genuine(obj.__code__)
        if kind is _METHOD:
            return self.trusted(obj.__func__)
        if kind in _BUILTIN or kind is _MODULE:
            return True
        if kind is property:  # (round nine C1: pytest's `obj` property swapped)
            return all(self.trusted(f) for f in (obj.fget, obj.fset, obj.fdel) if f is not None)
        if kind in (staticmethod, classmethod):
            return self.trusted(obj.__func__)
        if _isinstance(obj, type):
            for klass in obj.__mro__:
                for key, value in list(vars(klass).items()):
                    inner = _getattr(value, "__func__", value)
                    if _type(value) is property:
                        inner = value
                    elif _type(inner) is not _FUNC:
                        continue
                    elif _generated(klass, key, inner):
                        continue
                    if not self.trusted(inner):
                        return False
            return True
        func = _getattr(obj, "func", None)  # functools.partial
        if func is not None and kind.__module__ == "functools":
            return self.trusted(func)
        return self.trusted(kind)

    # -- the checks -------------------------------------------------------------------

    def judged(self, item):
        return _realpath(str(_getattr(item, "fspath", ""))) in self.tests

    def test(self, item, _qualname=_qualname, _test_function=_test_function, _marks=_marks):
        """Findings on a test of the command's files, before pytest calls it."""
        path = _realpath(str(_getattr(item, "fspath", "")))
        held = self.tests.get(path)
        if held is None:
            return []
        found = []
        qual, name = _qualname(item)
        func = _test_function(item)
        if func is not None:
            func = _getattr(func, "__func__", func)
            wanted = held.by_qual.get(qual) or held.by_name.get(name)
            if qual in held.decorated:
                problem = self._wrapped(func, name, wanted)
            else:
                problem = self._placed(func, name, wanted, _getattr(item, "module", None))
            if problem:
                found.append(problem)
        module = _getattr(item, "module", None)
        if _type(module) is _MODULE:
            found += self._globals(module, held)
        if not held.marks_xfail and not self._conftests_mark(path):
            if any(m == "xfail" for m in _marks(item)):
                found.append("it carries an xfail marker no source names")
        return found

    def _placed(self, func, name, wanted, module):
        if _type(func) is not _FUNC:
            return f"pytest would call a {_type(func).__name__}, not the test's function"
        code = func.__code__
        if wanted:
            if not any(code == w for w in wanted):
                return "the function pytest would call is not the code the judge placed"
            if _type(module) is _MODULE and func.__globals__ is not vars(module):
                return "its function runs in globals that are not its module's"
        elif not (code.co_name == name and self.genuine(code)):
            return "the function pytest would call is no test of a genuine file"
        return None

    def _wrapped(self, func, name, wanted):
        for _ in range(8):
            if _type(func) is _FUNC and func.__code__.co_name == name:
                if wanted and not any(func.__code__ == w for w in wanted):
                    return "the function pytest would call is not the code the judge placed"
                return None
            if not self.trusted(func):
                return "its decorator runs code of no genuine file"
            func = _getattr(func, "__wrapped__", None)
            if func is None:
                return None
        return None

    def _globals(self, module, held):
        space = vars(module)
        for key in list(space):
            if key in _MODULE_NAMES or key.startswith("@py") or key in held.bound:
                continue
            if not held.dynamic:
                return [f"its module holds a name its source never binds: {key}"]
        # what its imports of modules loaded before any code of the patch bound (a test's
        # monkeypatch of such a module later changes the module, not these names)
        for key, (source, attr) in held.imports.items():
            first = self.spaces.get(source)
            if key not in space or first is None:
                continue
            if attr is None:
                expected = self.modules[source]
            elif attr in first:
                expected = first[attr]
            else:
                continue  # a submodule, or a name the module's __getattr__ makes
            if space[key] is not expected:
                return [f"its global {key} is not what its `import` bound"]
        for key in held.defs:
            value = space.get(key)
            if _type(value) is _FUNC and not held.has(value.__code__):
                return [f"its function {key} is not the code its source defines"]
        return []

    def _conftests_mark(self, path):
        for conftest in self._conftests(path):
            held = self.held.get(conftest)
            if held is not None and held.marks_xfail:
                return True
        return False

    def xfail_call(self, excinfo):
        """A finding if `pytest.xfail()` (or a raised XFailed) came from code of no genuine
        file: the package under test marking its own failure expected."""
        tb = _getattr(excinfo, "tb", None)
        frames = []
        while tb is not None:
            frames.append(tb.tb_frame)
            tb = tb.tb_next
        caller = None
        for frame in reversed(frames):
            where = _realpath(frame.f_code.co_filename)
            if not any(where.startswith(d) for d in self.lib_dirs):
                caller = frame
                break
        if caller is None or self.genuine(caller.f_code):
            return None
        return f"pytest.xfail was called from {caller.f_code.co_filename}"

    def hooks(self, pluginmanager, _impls=_impls):
        """Findings on the hook implementations registered now."""
        relay = _getattr(pluginmanager, "hook", None)
        for name, caller in list(vars(relay).items()) if relay is not None else ():
            if not self.trusted(_type(caller)):
                kind = _type(caller).__name__
                return [f"hook {name} is called through a {kind} of no genuine file"]
            for impl in _impls(caller):
                func = _getattr(impl, "function", None)
                if func is not None and not self.trusted(func):
                    code = _getattr(_getattr(func, "__func__", func), "__code__", None)
                    where = _getattr(code, "co_filename", _type(func).__name__)
                    plugin = _getattr(impl, "plugin_name", "?")
                    return [f"hook {name} has an implementation from {where} (plugin {plugin})"]
        return []

    def internals(self, _descriptor=_descriptor):
        """Findings on the watched modules' functions and classes rebound since load, and
        on a descriptor added to one of those classes since."""
        for klass, names in self.classes:
            for key, value in list(vars(klass).items()):
                if key not in names and _descriptor(value) and not self.trusted(value):
                    return [f"{klass.__qualname__}.{key} was added after the judge's plugin loaded"]
        for holder, key, value, code in self.snapshot:
            space = holder if _type(holder) is dict else vars(holder)
            now = space.get(key, value)
            inner = _getattr(now, "__func__", now)  # a classmethod's, a staticmethod's
            if now is value and (code is None or _getattr(inner, "__code__", None) is code):
                continue
            if now is not value and self.trusted(now):
                continue  # a test's own monkeypatch, with genuine code
            label = space.get("__name__") if _type(holder) is dict else holder.__qualname__
            return [f"{label}.{key} was replaced after the judge's plugin loaded"]
        return []

    def tracer(self, func, label="trace"):
        """A finding if `func`, a trace (or profile: `label`) function, runs code of no
        genuine file."""
        if func is None or self.trusted(func):
            return None
        code = _getattr(_getattr(func, "__func__", func), "__code__", None)
        return f"a {label} function from {_getattr(code, 'co_filename', '?')} was set"
