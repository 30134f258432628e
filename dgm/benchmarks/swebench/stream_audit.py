"""The judge's pytest plugin's audit hook, and the internals of pytest and pluggy it
watches by identity. Staged beside the plugin as `dgm_judge_audit_<nonce>` (loaded by it
at import); never imported by dgm, except by its own tests.

`audit` is added by the plugin at the end of its load, with what it guards bound in its
defaults (`set_defaults`, before it is added): the ids and code of the judge's functions
(the plugin's, its checks', this module's), the holders that may be set once, the trace
wrapper's code and the checks' `genuine`. Kept to Python 3.6 syntax.
"""

import sys


def set_defaults(func, **values):
    """Set named defaults of `func` (at the plugin's load, before `audit` is added: it
    refuses that after)."""
    code = func.__code__
    names = code.co_varnames[: code.co_argcount]
    defaults = list(func.__defaults__)
    first = len(names) - len(defaults)
    for key, value in values.items():
        defaults[names.index(key) - first] = value
    func.__defaults__ = tuple(defaults)


def watched(_modules=sys.modules, _getattr=getattr, _isinstance=isinstance, _type=type,
            _vars=vars):  # fmt: skip
    """(label, the object now bound there) for the pytest and pluggy internals a report
    passes through; those an old pytest lacks are left out."""
    found = []
    places = [("_pytest.reports", "TestReport", "from_item_and_call"),
              ("_pytest.runner", "TestReport", "from_item_and_call"),
              ("_pytest.runner", "CallInfo", "from_call"),
              ("_pytest.runner", "", "call_and_report"),
              ("_pytest.runner", "", "call_runtest_hook"),
              ("_pytest.runner", "", "runtestprotocol"),
              ("_pytest.python", "Function", "runtest"),
              ("_pytest.python", "", "pytest_pyfunc_call"),
              ("_pytest.unittest", "TestCaseFunction", "runtest"),
              ("pluggy._callers", "", "_multicall"),
              ("pluggy.callers", "", "_multicall"),
              ("pluggy._hooks", "_HookCaller", "__call__"),
              ("pluggy.hooks", "_HookCaller", "__call__")]  # fmt: skip
    for mod_name, cls_name, attr in places:
        mod = _modules.get(mod_name)
        holder = _getattr(mod, cls_name, None) if cls_name else mod
        if holder is None:
            continue
        where = holder.__dict__ if _isinstance(holder, _type) else _vars(holder)
        if attr in where:
            found.append((".".join(p for p in (mod_name, cls_name, attr) if p), where[attr]))
    return found


def audit(event, args, _finding=None, _own=frozenset(), _codes=frozenset(),
           _once=(), _setter=None, _genuine=None, _frame=getattr(sys, "_getframe", None),
           _id=id, _RuntimeError=RuntimeError, _type=type, _str=str,
           _tops=("_pytest", "pluggy", "pytest"), _isinstance=isinstance):  # fmt: skip
    """The judge's audit hook, added at the end of the plugin's load, before any
    code of the patch runs (Python 3.8+): no later hook is let in (round nine B3 timed a
    swap of `item.runtest` by one), no attribute of this plugin's or its checks' functions
    or classes is set (their defaults hold what they use; `_own`, their ids), no function
    is made of their code with other defaults or globals (`_codes`), and a read of the
    process's environment or memory through /proc is a finding. `_once`: (holder, the
    code of the one hook that may set its defaults, once)."""
    if event == "sys.addaudithook":
        _finding("an audit hook was added after the judge's plugin loaded")
        raise _RuntimeError("refused by the judge")
    if event in ("object.__setattr__", "object.__delattr__") and args and _id(args[0]) in _own:
        for holder, setter in _once:
            if args[0] is holder and args[1] == "__defaults__" and holder()[0] is None:
                if _frame is not None and _frame(1).f_code is setter:
                    return
        _finding(f"the judge's plugin was changed ({args[1]!s:.40})")
        raise _RuntimeError("refused by the judge")
    if event == "object.__setattr__" and args and args[1] == "__class__":
        # (red team round ten P1: the config's class swapped for one that lies to a check)
        if _str(_type(args[0]).__module__).split(".")[0] in _tops:
            _finding(f"the class of a {_type(args[0]).__name__} of pytest's was swapped")
            raise _RuntimeError("refused by the judge")
    if event in ("sys.settrace", "sys.setprofile") and _genuine is not None and _frame:
        # through the judge's wrappers or by genuine code (a test's cProfile, coverage's C
        # tracer): round ten T1 called the original, read from the wrapper's defaults, from
        # the package, setting a tracer inside a test's call and taking it off there
        code = _frame(1).f_code
        if code is not _setter and not _genuine(code):
            _finding(f"{event} was called from {code.co_filename!s:.80}, not the judge's wrapper")
        # round eleven T2, T3: a trusted tracer (a builtin; stdlib bdb) only switches
        # tracing on, and the package's function goes into a frame's own `f_trace`, which
        # no check reads: no code of no genuine file may be on the stack when one is set
        frame = _frame(2) if code is _setter else _frame(1)
        while frame is not None:
            code = frame.f_code
            if code is not _setter and not code.co_filename.startswith("<"):
                if not _genuine(code):
                    _finding(
                        f"{event} was called under {code.co_filename!s:.80}:{code.co_name!s:.40}"
                    )
                    break
            frame = frame.f_back
    if event == "function.__new__" and args and args[0] in _codes:
        _finding(f"a function was made of the judge's code ({args[0].co_name!s:.40})")
        raise _RuntimeError("refused by the judge")
    if event == "open" and args and _isinstance(args[0], _str) and args[0].startswith("/proc/"):
        if args[0].endswith(("/environ", "/mem")):
            _finding(f"{args[0]} was opened")


def registered(plugin, hook, _manager=None, _getattr=getattr):
    """Whether `plugin` implements `hook` in the judge's plugin manager now (`_manager`:
    the plugin's holder of it), not a copy of the plugin's function called by other code
    after it was unregistered (round nine D3)."""
    caller = _getattr(_getattr(_manager()[0], "hook", None), hook, None)
    get = _getattr(caller, "get_hookimpls", None)
    if get is None:  # an old pluggy: not checked
        return True
    for impl in get():
        if _getattr(impl, "plugin", None) is plugin:
            return True
    return False
