"""What the judge's pytest plugin checks (stream_checks.py) keeps of pytest's and the
standard modules' internals when it loads, and the small readers of pytest's objects it
uses. Staged beside the plugin as `dgm_judge_snapshot_<nonce>`; never imported by dgm,
except by its own tests. Kept to Python 3.6 syntax.
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


def generated(klass, key, func):
    made = "__dataclass_fields__" in vars(klass) or "__attrs_attrs__" in vars(klass)
    return made and key in _GENERATED and func.__code__.co_filename.startswith("<")


def pytests(klass):
    """A class of pytest's, pluggy's or unittest's (whose dicts are watched for additions)."""
    return (
        _isinstance(klass, type)
        and str(_getattr(klass, "__module__", "")).split(".")[0] in WATCH_TOP
    )


def descriptor(value):
    """What a class's attribute runs when used: functions, methods' wrappers, properties
    (not data, which pytest itself changes)."""
    kind = _type(value)
    return kind in (_FUNC, staticmethod, classmethod, property) or kind in BUILTIN


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


def impls(caller):
    get = _getattr(caller, "get_hookimpls", None)
    if get is not None:
        try:
            return list(get())
        except Exception:  # noqa: BLE001 - not pluggy's caller: the internals check says so
            return []
    old = [_getattr(caller, n, None) or [] for n in ("_nonwrappers", "_wrappers")]
    return [impl for group in old for impl in group]


def qualname(item):
    classes = [n.name for n in item.listchain() if _type(n).__name__ == "Class"]
    name = _getattr(item, "originalname", None) or item.name.split("[")[0]
    return ".".join(classes + [name]), name


def test_function(item):
    """What pytest will call: the module's or class's function; for a unittest case, the
    class attribute unittest looks up when it runs."""
    cls = _getattr(item, "cls", None)
    if _type(item).__name__ == "TestCaseFunction" and cls is not None:
        return _getattr(cls, _getattr(item, "originalname", None) or item.name, None)
    return _getattr(item, "obj", None)


def marks(item):
    try:
        return [m.name for m in item.iter_markers()]
    except Exception:  # noqa: BLE001 - an old pytest
        return ["xfail"] if item.get_closest_marker("xfail") is not None else []
