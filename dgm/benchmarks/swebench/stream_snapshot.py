"""What the judge's pytest plugin checks (stream_checks.py) keeps of pytest's and the
standard modules' internals when it loads, and the small readers of pytest's objects it
uses. Staged beside the plugin as `dgm_judge_snapshot_<nonce>`; never imported by dgm,
except by its own tests. The readers the checks call after load take what they use from
their defaults, not from this module's globals (which code of the patch can rebind, with
no audit event). Kept to Python 3.6 syntax.
"""

import os
import sys
import types

_FUNC = types.FunctionType
_MODULE = types.ModuleType
BUILTIN = (
    types.BuiltinFunctionType,
    types.BuiltinMethodType,
    types.WrapperDescriptorType,
    types.MethodWrapperType,
    types.MethodDescriptorType,
    types.ClassMethodDescriptorType,
)
_getattr = getattr
_isinstance = isinstance
_type = type
_realpath = os.path.realpath
_dirname = os.path.dirname
_isabs = os.path.isabs
_SEP = os.sep

# pytest's own modules and the standard ones a test's checks and its report go through
# (not `sys` or `warnings`: a package may set its own excepthook or showwarning; tracing
# is watched apart)
WATCH_TOP = ("_pytest", "pluggy", "pytest", "py", "unittest")
WATCH_EXACT = ("builtins", "functools", "traceback", "contextlib", "ast", "operator",
                "inspect", "types", "re", "math")  # fmt: skip


# what dataclasses and attrs write with exec ("<string>"): trusted only under these names,
# on classes they made (round nine C3 passed a tracer's `__call__` compiled as "<tracer>")
_GENERATED = {"__init__", "__repr__", "__eq__", "__ne__", "__hash__", "__lt__", "__le__",
              "__gt__", "__ge__", "__setattr__", "__delattr__", "__getstate__",
              "__setstate__", "__match_args__", "__replace__"}  # fmt: skip


_GENERATED = frozenset(_GENERATED)


def generated(klass, key, func, _vars=vars, _names=_GENERATED):
    made = "__dataclass_fields__" in _vars(klass) or "__attrs_attrs__" in _vars(klass)
    return made and key in _names and func.__code__.co_filename.startswith("<")


def pytests(klass, _isinstance=isinstance, _getattr=getattr, _str=str, _type=type,
            _top=WATCH_TOP):  # fmt: skip
    """A class of pytest's, pluggy's or unittest's (whose dicts are watched for additions)."""
    if not _isinstance(klass, _type):
        return False
    return _str(_getattr(klass, "__module__", "")).split(".")[0] in _top


def descriptor(value, _type=type, _kinds=(_FUNC, staticmethod, classmethod, property) + BUILTIN):
    """What a class's attribute runs when used: functions, methods' wrappers, properties
    (not data, which pytest itself changes)."""
    return _type(value) in _kinds


def snapshot():
    """(namespace, name, value, its code) for the functions and classes of the watched
    modules, and for the functions and properties of those classes; (class, the names
    its dict held) for each such class, so a descriptor added later (one that shadows an
    inherited attribute) is seen too."""
    out = []
    for name, mod in list(sys.modules.items()):
        if _type(mod) is not _MODULE:
            continue
        if name not in WATCH_EXACT and name.split(".")[0] not in WATCH_TOP:
            continue
        space = vars(mod)
        for key, value in list(space.items()):
            kind = _type(value)
            if kind is _FUNC or kind in BUILTIN or _isinstance(value, type):
                out.append((space, key, value, _getattr(value, "__code__", None)))
            if _isinstance(value, type) and _getattr(value, "__module__", None) == name:
                for attr, inner in list(vars(value).items()):
                    func = _getattr(inner, "__func__", inner)
                    if _type(func) is _FUNC:
                        out.append((value, attr, inner, func.__code__))
                    elif descriptor(inner):
                        out.append((value, attr, inner, None))
    return out


def plugin_dirs(plugins):
    """The package folders (or module files) of the image's plugins, found without
    importing them."""
    from importlib.machinery import PathFinder

    out = []
    for name in plugins:
        try:
            spec = PathFinder.find_spec(name.split(".")[0], sys.path)
        except Exception:  # noqa: BLE001 - a broken path entry
            spec = None
        origin = _getattr(spec, "origin", None)
        if origin and _isabs(origin):
            real = _realpath(origin)
            out.append(_dirname(real) + _SEP if real.endswith("__init__.py") else real)
    return out


def impls(caller, _getattr=getattr, _list=list, _Exception=Exception):
    get = _getattr(caller, "get_hookimpls", None)
    if get is not None:
        try:
            return _list(get())
        except _Exception:  # noqa: BLE001 - not pluggy's caller: the internals check says so
            return []
    out = []
    for name in ("_nonwrappers", "_wrappers"):
        out.extend(_getattr(caller, name, None) or [])
    return out


def qualname(item, _type=type, _getattr=getattr):
    classes = []
    for node in item.listchain():
        if _type(node).__name__ == "Class":
            classes.append(node.name)
    name = _getattr(item, "originalname", None) or item.name.split("[")[0]
    return ".".join(classes + [name]), name


def test_function(item, _getattr=getattr, _type=type):
    """What pytest will call: the module's or class's function; for a unittest case, the
    class attribute unittest looks up when it runs."""
    cls = _getattr(item, "cls", None)
    if _type(item).__name__ == "TestCaseFunction" and cls is not None:
        return _getattr(cls, _getattr(item, "originalname", None) or item.name, None)
    return _getattr(item, "obj", None)


def marks(item, _Exception=Exception):
    try:
        out = []
        for mark in item.iter_markers():
            out.append(mark.name)
        return out
    except _Exception:  # noqa: BLE001 - an old pytest
        return ["xfail"] if item.get_closest_marker("xfail") is not None else []
