"""The judge's pytest plugin, shipped into the container as source (never imported by dgm).

pytest loads it with `-p` from PYTEST_ADDOPTS, before any conftest, test module or the
patched package is imported. It takes the run's nonce out of the environment (so no
subprocess inherits it) and writes, to a duplicate of the exec's own stdout made before
pytest captures anything, one line per event:

  start   at import: the pid pytest runs in
  fork    in the child of any os.fork() (an at-fork hook registered before the package can
          run): the phase (collect / run) and the file that called fork
  t       as each test finishes (at its teardown): its id as the -rA summary prints it and
          its status as the JUnit report would give it
  x       a finding: the checks' (stream_checks.py), the audit hook's, or a test whose
          call raised but whose report says passed (round seven S1)
  junit   at unconfigure: the digest of the JUnit report pytest wrote
  end     at unconfigure: how many `t` lines were written

Every line first checks (fstat) that its fd is still the file it duplicated at load; once
it is not (closed, or another file dup2'd over it), the session is killed: no results.

The nonce comes in the environment (DGM_STREAM, popped at load); code in the process can
read it (the staged tests script, this module), so it tells the host which lines are the
plugin's, not code in the process apart from it.

A fork's child inherits this plugin, so a forked pytest writes its lines with its own pid,
and the parent cannot take back what the child wrote. The host (stream.py) refuses a run
whose results came from another process, or whose log or JUnit report pass a test this
stream saw fail. Code in the same process can still rewrite all of this: see the README.

No positive verdict is read from state code in the process can write without an audit
event (an attribute, a dict, a set, a closure cell): what the functions use is bound in
their defaults, which the audit hook (stream_audit.py) guards; the plugin manager and the
config, recorded after load, go once into the defaults of a holder (`_manager`,
`_configured`). `_emit` writes only for the plugin's own code (round nine D3 wrote the
stream through it), and the `t` and `end` lines say so once the plugin is unregistered.
Kept to Python 3.6 syntax, for old instance environments.
"""

import hashlib
import importlib
import json
import os
import sys

import pytest

if __name__.startswith("dgm_judge_stream_"):  # staged: its siblings have the same nonce
    _guard = importlib.import_module(__name__.replace("dgm_judge_stream_", "dgm_judge_audit_"))
else:  # dgm's own tests
    from dgm.benchmarks.swebench import stream_audit as _guard

_NONCE = os.environ.pop("DGM_STREAM", "")
_getpid = os.getpid
_STATE = {"pid": _getpid(), "phase": "collect", "n": 0}  # what is only reported
_RAISED = {}  # node id -> what its function raised, as the innermost pyfunc_call saw it
_RANK = {"PASSED": 0, "XFAIL": 1, "SKIPPED": 2, "FAILED": 3, "ERROR": 4}


def _open_stream():
    """(fd, (st_dev, st_ino)): a duplicate of the exec's stdout, made before pytest
    captures anything; (-1, None) without a nonce."""
    if not _NONCE:
        return -1, None
    try:
        fd = os.dup(1)
        st = os.fstat(fd)
        return fd, (st.st_dev, st.st_ino)
    except OSError:
        return -1, None


_FD, _PIPE = _open_stream()
_DEAD = []  # set once the stream's fd was found closed or re-pointed


# What these functions use is bound when they are made (defaults): rebinding this module's
# names changes nothing, and the audit hook refuses a change to a function's defaults or
# code (round nine C2 silenced the plugin through its globals).
def _emit(record, _fd=_FD, _pipe=_PIPE, _nonce=_NONCE, _fstat=os.fstat, _write=os.write,
          _getpid=os.getpid, _kill=os.kill, _dumps=json.dumps, _dead=_DEAD, _callers=None,
          _frame=getattr(sys, "_getframe", None)):  # fmt: skip
    """One line of the stream. `_callers` (bound at the module's end: the start line is
    written before) holds the code of the plugin's own functions: a call from any other
    code writes a finding instead of its record (round nine D3 wrote the `t`, `junit`
    and `end` lines of a session whose checks it had unregistered)."""
    if _fd < 0 or _dead:
        return
    if _callers is not None and _frame is not None:
        caller = _frame(1).f_code
        if caller not in _callers:
            what = f"{caller.co_filename}:{caller.co_name} ({record.get('ev')!s:.10})"
            record = {"ev": "x", "what": "the judge's stream writer was called by " + what}
    try:
        st = _fstat(_fd)
        same = (st.st_dev, st.st_ino) == _pipe
    except OSError:
        same = False
    if not same:  # closed or re-pointed (round eight A3, A3b; nine B4): this session's
        _dead.append(True)  # results can no longer be vouched for, so it ends here, with
        _kill(_getpid(), 9)  # none (a report already written has a stream without its end)
        return
    record["pid"] = _getpid()
    # one write under PIPE_BUF is atomic: never split by what pytest writes
    data = f"@@dgm-stream:{_nonce} {_dumps(record, sort_keys=True)}\n"
    data = data.encode("utf-8", "replace")
    data = data if len(data) < 4000 else data[:3999] + b"\n"  # unreadable, so not counted
    try:
        _write(_fd, data)
    except OSError:
        pass


def _forked():
    caller = sys._getframe(1).f_code.co_filename if hasattr(sys, "_getframe") else ""
    _emit({"ev": "fork", "phase": _STATE["phase"], "parent": _STATE["pid"], "by": caller})


if _NONCE:
    _emit({"ev": "start", "ppid": os.getppid()})
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_forked)


_BOUND = _guard.watched() if _NONCE else []


def _finding(what, test=None, _emit=_emit):
    # every time it is found: the host reads them (no record of what was said, which
    # code in the process could fill in advance: round nine D1)
    _emit({"ev": "x", "what": what, "id": test} if test else {"ev": "x", "what": what})


def _load_checks():
    """stream_checks.py, staged beside this module: its checks made now (`build`), before
    any code of the patch runs in this process: (judged, test, xfail_call, hooks,
    internals, tracer, genuine, every function they use). Nones if it cannot load here (then only
    the checks of this module are made; never a reason to refuse)."""
    judged = [p for p in os.environ.pop("DGM_JUDGED", "").split(":") if p]
    plugins = os.environ.get("DGM_PLUGINS", "").split()
    mark = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mark")
    try:
        module = importlib.import_module(__name__.replace("dgm_judge_stream_", "dgm_judge_checks_"))
        return module.build(judged, plugins, mark)
    except Exception as error:  # noqa: BLE001
        _emit({"ev": "note", "what": f"checks unavailable: {type(error).__name__}: {error}"[:300]})
        return (None,) * 7 + ((),)


_LOADED = _NONCE and __name__.startswith("dgm_judge_stream_")
# the checks (plain functions whose state is in their defaults), bound into every function
# that uses them (defaults): no class, instance or module name is looked up at call time
_IS_JUDGED, _TEST, _XFAIL, _HOOKS, _INTERNALS, _TRACER, _GENUINE, _CHECK_FUNCS = (
    _load_checks() if _LOADED else (None,) * 7 + ((),)
)


def _judged_set(func, _setter=None, _label="", _tracer=None, _finding=None):
    """`sys.settrace` or `sys.setprofile` (`_setter`), naming a function of no genuine
    file it is given."""
    found = _tracer(func, _label)
    if found:
        _finding(found)
    return _setter(func)


def _judged(setter, label, _tracer=_TRACER, _finding=_finding):
    """A copy of `_judged_set` bound to `setter` (defaults, not a closure: a closure's
    cells can be written without an audit event)."""
    func = _judged_set
    return type(func)(func.__code__, func.__globals__, func.__name__,
                      (setter, label, _tracer, _finding))  # fmt: skip


if _TRACER is not None:
    sys.settrace = _judged(sys.settrace, "trace")
    sys.setprofile = _judged(sys.setprofile, "profile")


def _manager(_pm=None, _hookexec=None):
    """(the judge's plugin manager, pluggy's executor in it), as `pytest_addhooks` found
    them, before any code of the patch ran; set once, by it alone (see `stream_audit.audit`)."""
    return _pm, _hookexec


def _configured(_config=None, _stream=None):
    """(the judge's pytest's config, the `_Stream` registered on it); set once, by
    `pytest_configure` alone (see `stream_audit.audit`)."""
    return _config, _stream


def _check_process(config, _hooks=_HOOKS, _internals=_INTERNALS, _tracer=_TRACER,
                   _finding=_finding, _manager=_manager, _vars=vars):  # fmt: skip
    """The hooks, pluggy's executor and pytest's internals, by provenance (stream_checks),
    and the trace and profile functions now set."""
    if _hooks is None:
        return
    first, hookexec = _manager()
    manager = first if first is not None else config.pluginmanager
    found = _hooks(manager) + _internals()
    executor = _vars(manager).get("_inner_hookexec", hookexec)
    if manager is first and executor is not hookexec:
        found.append("pluggy's hook executor was replaced (hook call monitoring)")
    threading = sys.modules.get("threading")
    for label, func in (("trace", sys.gettrace()), ("profile", sys.getprofile()),
                        ("thread trace", getattr(threading, "_trace_hook", None)),
                        ("thread profile", getattr(threading, "_profile_hook", None))):  # fmt: skip
        problem = _tracer(func, label)
        if problem:
            found.append(problem)
    for what in found:
        _finding(what)


def _check_bound(_watched=_guard.watched, _dict=dict, _finding=_finding):
    now = _dict(_watched())
    for label, original in _BOUND:
        if now.get(label) is not original:
            _finding(label + " was replaced after the judge's plugin loaded")


# whether a plugin still implements a hook in the judge's plugin manager (round nine D3)
_registered = _guard.registered
_guard.set_defaults(_registered, _manager=_manager)


class _Stream:
    def __init__(self):
        self.status = {}  # node id -> the worst status yet (the log and JUnit decide)

    def pytest_pyfunc_call(self, pyfuncitem):
        outcome = yield
        if getattr(outcome, "excinfo", None) is not None:
            _RAISED[pyfuncitem.nodeid] = getattr(outcome.excinfo[0], "__name__", "?")

    def pytest_runtest_makereport(self, item, call, _judged=_IS_JUDGED, _xfail=_XFAIL,
                                  _configured=_configured):  # fmt: skip
        outcome = yield
        config = _configured()[0]
        raised = _RAISED.pop(item.nodeid, None) if call.when == "call" else None
        if raised and call.excinfo is None and item.config is config:
            # between the test's function and pytest's record of its call (round nine
            # B1-B3: hook-call monitoring, a profile function, a swapped item.runtest)
            _finding(f"its function raised {raised} but pytest's call saw none",
                     self._shown(item.nodeid))  # fmt: skip
        if call.when != "call" or call.excinfo is None or item.config is not config:
            return
        try:
            report = outcome.get_result()
        except Exception:
            return
        if report.outcome == "passed" and not hasattr(report, "wasxfail"):
            kind = getattr(call.excinfo, "typename", "an exception")
            _finding(f"{report.nodeid} raised {kind} but its report says passed")
        elif hasattr(report, "wasxfail") and _judged is not None and _judged(item):
            found = _xfail(call.excinfo, item)
            if found:
                _finding(found, self._shown(item.nodeid))

    def pytest_runtest_call(self, item, _judged=_IS_JUDGED, _test=_TEST,
                            _process=_check_process, _configured=_configured):  # fmt: skip
        if _judged is not None and _judged(item):
            shown = self._shown(item.nodeid)
            for found in _test(item):
                _finding(found, shown)
        _process(_configured()[0])
        yield

    def _shown(self, nodeid, _configured=_configured):
        try:
            return _configured()[0].cwd_relative_nodeid(nodeid)
        except Exception:
            return nodeid

    def pytest_collection_finish(self, session):
        _STATE["phase"] = "run"

    def pytest_runtest_logreport(self, report, _registered=_registered, _module=None):
        nodeid = report.nodeid
        status = _status(report)
        if _RANK[status] >= _RANK.get(self.status.get(nodeid, ""), -1):
            self.status[nodeid] = status
        if report.when != "teardown":
            return
        _check_bound()
        shown = self._shown(nodeid)
        if not (_registered(self, "pytest_runtest_logreport")
                and _registered(_module, "pytest_unconfigure")):  # fmt: skip
            _finding("the judge's plugin is no longer registered with pytest", shown)
        _STATE["n"] += 1
        _emit({"ev": "t", "id": shown, "s": self.status.pop(nodeid, status)})


if hasattr(pytest, "hookimpl"):  # after the terminal reporter wrote its own line
    _Stream.pytest_runtest_logreport = pytest.hookimpl(trylast=True)(
        _Stream.pytest_runtest_logreport
    )
    # outermost: it sees the call before, and the report after, every other makereport
    _Stream.pytest_runtest_makereport = pytest.hookimpl(hookwrapper=True, tryfirst=True)(
        _Stream.pytest_runtest_makereport
    )
    # outermost: its checks run before any other implementation sees the call
    _Stream.pytest_runtest_call = pytest.hookimpl(hookwrapper=True, tryfirst=True)(
        _Stream.pytest_runtest_call
    )
    # innermost: what the test's own function raised, before anything can swallow it
    _Stream.pytest_pyfunc_call = pytest.hookimpl(hookwrapper=True, trylast=True)(
        _Stream.pytest_pyfunc_call
    )
else:
    del _Stream.pytest_runtest_makereport
    del _Stream.pytest_runtest_call
    del _Stream.pytest_pyfunc_call


def _status(report):
    if report.failed:
        return "FAILED" if report.when == "call" else "ERROR"
    if report.skipped:
        return "XFAIL" if hasattr(report, "wasxfail") else "SKIPPED"
    return "PASSED"


def pytest_addhooks(pluginmanager):
    """Mark the image's plugins (the judge's `-p` list: autoload is off) for assertion
    rewriting before any of them is imported, as pytest's autoload does: else one that
    another imported first (xdist.plugin, through xdist.looponfail's package) warns
    "already imported", which `filterwarnings = error` makes fatal (pylint-8898's gold
    patch could not resolve)."""
    if _manager()[0] is None:  # the judge's pytest's (a pytester session's comes later)
        _manager.__defaults__ = (pluginmanager, vars(pluginmanager).get("_inner_hookexec"))
    names = [n for n in os.environ.get("DGM_PLUGINS", "").split() if n not in sys.modules]
    hook = getattr(pluginmanager, "rewrite_hook", None)
    if names and hasattr(hook, "mark_rewrite"):
        hook.mark_rewrite(*names)


def pytest_configure(config):
    # the first config of the judge's manager only: an in-process pytest run by a test
    # (pytester) is not ours
    if _NONCE and _configured()[0] is None and config.pluginmanager is _manager()[0]:
        stream = _Stream()
        _configured.__defaults__ = (config, stream)
        config.pluginmanager.register(stream, "dgm-judge-stream")


def _digest(path):
    """The JUnit report as pytest wrote it (at sessionfinish, before this): the host
    refuses one rewritten later (round nine B4 rewrote it at exit)."""
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except (OSError, TypeError):
        return ""


def pytest_unconfigure(config, _configured=_configured, _check_bound=_check_bound,
                       _check_process=_check_process, _registered=_registered,
                       _finding=_finding, _emit=_emit, _digest=_digest, _state=_STATE,
                       _getattr=getattr, _module=None):  # fmt: skip
    first, stream = _configured()
    if config is first:
        _check_bound()
        _check_process(config)
        if not (_registered(_module, "pytest_unconfigure")
                and _registered(stream, "pytest_runtest_logreport")):  # fmt: skip
            _finding("the judge's plugin is no longer registered with pytest")
        _emit({"ev": "junit", "sha": _digest(_getattr(config.option, "xmlpath", None))})
        _emit({"ev": "end", "n": _state["n"]})


def _freeze(_module=sys.modules.get(__name__)):
    """At the end of the load, before any code of the patch runs: the ids of this module's
    functions and classes and of the checks' (whose defaults hold what they use), their
    code, bound into the audit hook and `_emit`; then the audit hook is added."""
    funcs = [v for v in list(globals().values())
             if callable(v) and getattr(v, "__module__", None) == __name__]  # fmt: skip
    funcs += [v for v in list(vars(_Stream).values()) if callable(v)]
    funcs += [f for f in (sys.settrace, sys.setprofile)
              if getattr(f, "__module__", "") == __name__]  # fmt: skip
    funcs += [f for f in _CHECK_FUNCS if f is not None]
    funcs += [v for v in list(vars(_guard).values()) if type(v) is type(_freeze)]
    codes = frozenset(getattr(f, "__code__", None) for f in funcs) - {None}
    for func in (_Stream.pytest_runtest_logreport, pytest_unconfigure):
        _guard.set_defaults(func, _module=_module)
    own = frozenset(id(v) for v in funcs) | {id(_module)}
    once = ((_manager, pytest_addhooks.__code__), (_configured, pytest_configure.__code__))
    setter = _judged_set.__code__ if _TRACER is not None else None
    audit = _guard.audit
    _guard.set_defaults(audit, _finding=_finding, _own=own, _codes=codes, _once=once,
                        _setter=setter, _genuine=_GENUINE)  # fmt: skip
    _guard.set_defaults(_emit, _callers=codes)
    if hasattr(sys, "addaudithook"):
        sys.addaudithook(audit)


if _NONCE:
    _freeze()
