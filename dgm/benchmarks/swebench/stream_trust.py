"""Provenance for the judge's pytest plugin checks (stream_checks.py): whether a code
object is genuine (equal to code a compile of its own trusted file gives) and whether
calling an object runs only genuine code. Staged beside the plugin as
`dgm_judge_trust_<nonce>`; never imported by dgm, except by its own tests.

Code of the patch can reach every object here (red team round nine D2 wrote a positive
entry into the checks' cache of genuine code). So no positive verdict is read from state
that code in the process can write, with or without an audit event:
- what is known at load is immutable values (str, tuple, frozenset, code objects), bound
  into the defaults of copies of these functions (`bind`): the plugin's audit hook
  refuses a change to a function's defaults or code, while an instance's or class's
  attribute, a dict, a set or a closure cell can be written without any audit event;
- the functions call each other through their defaults too, never through a class, an
  instance or a module's globals (D4 rebound a sibling module's `impls`);
- what is found genuine after load (a file compiled lazily, a code, a class) is memoised
  only in CPython's C `functools.lru_cache` (its cache cannot be written from Python;
  `cache_clear()` only costs a recompute), and not at all without one.
Kept to Python 3.6 syntax.
"""

import functools
import importlib
import os
import types

try:
    from _functools import _lru_cache_wrapper as _C_LRU
except ImportError:  # not CPython's: positives are not memoised
    _C_LRU = None

if __name__.startswith("dgm_judge_trust_"):  # staged: its siblings have the same nonce
    _code = importlib.import_module(__name__.replace("dgm_judge_trust_", "dgm_judge_code_"))
    _snap = importlib.import_module(__name__.replace("dgm_judge_trust_", "dgm_judge_snapshot_"))
else:  # dgm's own tests
    from dgm.benchmarks.swebench import stream_code as _code
    from dgm.benchmarks.swebench import stream_snapshot as _snap

_FUNC = types.FunctionType
_METHOD = types.MethodType
_MODULE = types.ModuleType
_SEP = os.sep
_OS = (os.stat, os.path.realpath, os.path.dirname, os.path.join, os.path.isabs,
       os.path.basename)  # fmt: skip
_dirname, _join = os.path.dirname, os.path.join


def bind(func, **values):
    """A copy of `func` (same code) whose named defaults are `values`: the state it works
    on, and the functions it calls."""
    code = func.__code__
    names = code.co_varnames[: code.co_argcount]
    defaults = list(func.__defaults__ or ())
    first = len(names) - len(defaults)
    for key, value in values.items():
        defaults[names.index(key) - first] = value
    return _FUNC(code, func.__globals__, func.__name__, tuple(defaults), func.__closure__)


def memo(func, _lru=functools.lru_cache, _C=_C_LRU):
    """`func` memoised in a C lru_cache, whose cache code in the process cannot write; or
    `func` itself where there is none (positives are then recomputed each time)."""
    if _C is None:
        return func
    wrapped = _lru(maxsize=None)(func)
    return wrapped if type(wrapped) is _C else func


def lookup(pairs, key, _none=None):
    """The value paired with `key` in a tuple of (key, value) pairs (few: the command's
    test files and their conftests)."""
    for have, value in pairs:
        if have == key:
            return value
    return _none


def conftests(path, _repo="", _sep=_SEP, _dirname=_dirname, _join=_join):
    out = []
    folder = _dirname(path)
    while (folder + _sep).startswith(_repo):
        out.append(_join(folder, "conftest.py"))
        if _dirname(folder) == folder:
            break
        folder = _dirname(folder)
    return out


def compile_file(path, _judged=frozenset(), _plugin_dirs=(), _rewrite=None,
             _variants=_code.compile_variants, _open=open, _any=any, _Exception=Exception,
             _basename=os.path.basename):  # fmt: skip
    """The held file at `path` (stream_code), or None (missing, or no Python)."""
    try:
        with _open(path, "rb") as handle:
            source = handle.read()
        rewritten = (path in _judged or _basename(path) == "conftest.py"
                     or _any(path.startswith(d) for d in _plugin_dirs))  # fmt: skip
        return _variants(source, path, _rewrite, rewritten)
    except _Exception:  # noqa: BLE001 - missing, or not Python: it holds no genuine code
        return None


def trusted_file(path, _own="", _repo="", _lib_dirs=(), _since=None, _stat=os.stat,
                  _basename=os.path.basename, _any=any, _OSError=OSError):  # fmt: skip
    """The judge's own file, or one outside the repository (or in pytest's, pluggy's or an
    image plugin's package, or a conftest.py), unchanged since the setup step began."""
    if not _own or not _repo:
        return False
    if path.startswith(_own):
        return True
    inside = path.startswith(_repo) and "/site-packages/" not in path  # a venv in it
    if inside and _basename(path) != "conftest.py":
        if not _any(path.startswith(d) for d in _lib_dirs):
            return False
    try:
        ctime = _stat(path).st_ctime
    except _OSError:
        return False
    return _since is None or ctime <= _since


def genuine_key(key, _cwd="", _loaded=(), _trusted_file=None, _compile=None,
                 _has=_code.has, _lookup=lookup, _os=_OS):  # fmt: skip
    """Whether key's code, (id, code), equals code that a compile of its own (trusted)
    file gives; the file's compile at load for the command's tests and conftests."""
    code = key[1]
    name = code.co_filename
    path = _os[1](name if _os[4](name) else _os[3](_cwd, name))
    held = _lookup(_loaded, path, False)
    if held is False:
        if _trusted_file is None or not _trusted_file(path):
            return False
        held = _compile(path)
    return held is not None and _has(held, code)


def genuine(code, _codes=frozenset(), _keep=(), _key=None, _id=id):
    """Whether `code` is genuine: loaded before any code of the patch ran (`_codes`, ids
    of the codes `_keep` holds alive), or compiled from its trusted file."""
    if _id(code) in _codes:
        return True
    return _key is not None and _key((_id(code), code))


def members(klass, stack, _trusted=None, _generated=_snap.generated, _type=type,
             _getattr=getattr, _list=list, _vars=vars, _property=property,
             _FUNC=_FUNC):  # fmt: skip
    """Whether the functions and properties of `klass` and its bases are trusted."""
    for base in klass.__mro__:
        for key, value in _list(_vars(base).items()):
            inner = _getattr(value, "__func__", value)
            if _type(value) is _property:
                inner = value
            elif _type(inner) is not _FUNC:
                continue
            elif _generated(base, key, inner):
                continue
            if not _trusted(inner, stack):
                return False
    return True


def trusted(obj, stack, _genuine=genuine, _loaded=frozenset(), _memo=None, _self=None,
             _members=None, _builtin=_snap.BUILTIN, _type=type, _id=id, _getattr=getattr,
             _isinstance=isinstance, _all=all, _property=property,
             _wrappers=(staticmethod, classmethod), _FUNC=_FUNC, _METHOD=_METHOD,
             _MODULE=_MODULE):  # fmt: skip
    """Whether calling `obj` runs only genuine code (for an object: its class's). `stack`:
    the ids of the classes whose check led here (a class met again is taken as trusted,
    as it is being checked); only a check from the top (an empty stack) is memoised."""
    kind = _type(obj)
    if kind is _FUNC:  # by its code now: a function's code can be swapped
        return _genuine(obj.__code__)
    if _id(obj) in _loaded or _id(obj) in stack:
        return True
    if kind is _METHOD:
        return _self(obj.__func__, stack)
    if kind in _builtin or kind is _MODULE:
        return True
    if kind is _property:  # (round nine C1: pytest's `obj` property swapped)
        return _all(_self(f, stack) for f in (obj.fget, obj.fset, obj.fdel) if f is not None)
    if kind in _wrappers:
        return _self(obj.__func__, stack)
    if _isinstance(obj, _type):
        if not stack and _memo is not None and kind is _type:  # (a metaclass could hash)
            return _memo((_id(obj), obj))
        return _members(obj, stack + (_id(obj),))
    func = _getattr(obj, "func", None)  # functools.partial
    if func is not None and kind.__module__ == "functools":
        return _self(func, stack)
    return _self(kind, stack)


def trusted_class(key, _members=None):
    """A class's verdict, memoised (key: (id, class), so no id outlives its class)."""
    return _members(key[1], (key[0],))


def trusted_top(obj, _trusted=None):
    return _trusted(obj, ())
