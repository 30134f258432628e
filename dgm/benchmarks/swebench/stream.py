"""The host's side of the judge's result stream (stream_plugin.py runs in the container).

The plugin's lines reach the exec's output as each event happens, from whichever process
runs pytest's hooks. What the host refuses, as tampering with the evidence:

- results written by a process that is not the pytest the judge started (a fork of it
  ran the tests; a forked child that only runs a test's function never writes results);
- `os.fork()` while pytest collected the tests, from anything but the standard library's
  process modules (the package forked at import);
- a test the stream saw fail that the log or the JUnit report call passed, or one the
  log calls passed that a stream which ended never saw (none of them, when its fd was
  blinded);
- a JUnit report from a session whose end the stream never saw (its pytest did not
  finish the way it started);
- what the plugin found in pytest itself: the internals a report passes through rebound
  after it loaded, or a test whose call raised but whose report says passed; and what its
  checks (stream_checks.py) found: a hook implementation, an internal or a trace function
  whose code no genuine file holds, or, for a test that decides the verdict, a function
  that is not the code the judge placed, a module whose names were rebound, an xfail no
  source names.

No stream at all (the plugin did not load) is only noted: the log and report checks
still apply, and a true fix is never refused for it.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DIR = "stream"  # under the stage: /stage/stream/<module>.py
PASSING = ("PASSED", "XFAIL")
_RANK = {"PASSED": 0, "XFAIL": 1, "SKIPPED": 2, "FAILED": 3, "ERROR": 4}
# forks pytest's own process may make while it collects (subprocess with preexec_fn,
# a multiprocessing pool a conftest starts)
_OPTION = re.compile(r"(.*?)\[(.*)\]")
_STDLIB_FORKS = re.compile(r"(^|/)(subprocess|multiprocessing/[a-z_]+|popen_fork)\.py$")


def staged(nonce: str) -> dict[str, str]:
    """The files the tests step's pytest loads from /stage/stream: the plugin and its
    checks, each under a name drawn for this run (the plugin finds its siblings by it)."""
    here = Path(__file__).parent
    names = {"stream_plugin.py": module(nonce),
             "stream_checks.py": f"dgm_judge_checks_{nonce[:12]}",
             "stream_code.py": f"dgm_judge_code_{nonce[:12]}",
             "stream_snapshot.py": f"dgm_judge_snapshot_{nonce[:12]}",
             "stream_trust.py": f"dgm_judge_trust_{nonce[:12]}",
             "stream_audit.py": f"dgm_judge_audit_{nonce[:12]}"}  # fmt: skip
    return {f"{name}.py": (here / source).read_text() for source, name in names.items()}


def new_nonce() -> str:
    return secrets.token_hex(12)


def module(nonce: str) -> str:
    """The plugin's module name for a run: drawn afresh, so no file a patch adds can
    shadow it on `sys.path` (`python -m pytest` puts the repository first)."""
    return f"dgm_judge_stream_{nonce[:12]}"


@dataclass
class Records:
    starts: set[int] = field(default_factory=set)
    ends: dict[int, int] = field(default_factory=dict)  # pid -> tests it says it wrote
    tests: dict[int, dict[str, str]] = field(default_factory=dict)  # pid -> id -> status
    counted: dict[int, int] = field(default_factory=dict)  # pid -> `t` lines read
    forks: list[dict[str, Any]] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)  # `x` lines: pytest's machinery forged
    test_findings: list[tuple[str, str]] = field(default_factory=list)  # (test id, what)
    notes: list[str] = field(default_factory=list)
    junit: list[str] = field(default_factory=list)  # digests of the report pytest wrote
    # keys that more than one test cut to (ids with spaces, reruns): the log keeps the
    # last of them, the stream the worst, so a disagreement there proves nothing
    shared: set[str] = field(default_factory=set)


def read(log: str, nonce: str) -> Records:
    out = Records()
    pattern = re.compile(rf"@@dgm-stream:{re.escape(nonce)} (\{{[^\n]*\}})")
    for match in pattern.finditer(log):
        try:
            record = json.loads(match.group(1))
            pid = int(record["pid"])
            event = str(record["ev"])
        except (ValueError, KeyError, TypeError):
            continue
        if event == "start":
            out.starts.add(pid)
        elif event == "fork":
            out.forks.append(record)
        elif event == "x" and record.get("id"):
            test = str(record["id"])
            key = test.split()[0] if test.strip() else test
            out.test_findings.append((key, str(record.get("what", ""))[:300]))
        elif event == "x":
            out.findings.append(str(record.get("what", ""))[:300])
        elif event == "junit":
            out.junit.append(str(record.get("sha", "")))
        elif event == "note":
            out.notes.append(str(record.get("what", ""))[:300])
        elif event == "end":
            out.ends[pid] = int(record.get("n", -1))
        elif event == "t":
            test = str(record.get("id", ""))
            key = test.split()[0] if test.strip() else test
            status = str(record.get("s", ""))
            seen = out.tests.setdefault(pid, {})
            if key in seen:
                out.shared.add(key)
            if _RANK.get(status, 4) >= _RANK.get(seen.get(key, ""), -1):
                seen[key] = status
            out.counted[pid] = out.counted.get(pid, 0) + 1
    for pid in set(out.tests) | set(out.ends):
        if pid not in out.starts:
            out.foreign.append(str(pid))
    return out


def evidence(
    records: Records, claims: dict[str, dict[str, str]], relevant: Callable[[str], bool],
    complete: bool, report_digest: str = "",
) -> str | None:  # fmt: skip
    """Why the stream says the log or the report was forged, or None. `claims`: per
    source (log, report) the per-test statuses it gives; `relevant`: the keys that
    decide the verdict (the official tests, the copies, the canaries); `complete`: the
    exec's output was not cut, so a missing line is missing; `report_digest`: the
    JUnit report the host copied out."""
    if not records.starts:
        return None
    written = [sha for sha in records.junit if sha]
    if report_digest and written and any(sha != report_digest for sha in written):
        return "the JUnit report was rewritten after pytest wrote it"
    if records.foreign:
        started = sorted(records.starts)
        return (f"test results came from process {', '.join(sorted(records.foreign))}, not "
                f"from the pytest the judge started ({started[0]}): pytest was forked")  # fmt: skip
    if records.findings:
        return f"pytest's own machinery was tampered with: {records.findings[0]}"
    for key, what in records.test_findings:  # a test that does not decide the verdict: no matter
        if relevant(key) or relevant(_as_options_parser(key)):
            return f"the code pytest ran for {key} was tampered with: {what}"
    for fork in records.forks:
        if fork.get("phase") == "collect" and not _STDLIB_FORKS.search(str(fork.get("by"))):
            return f"pytest forked while it collected the tests (os.fork from {fork.get('by')})"
    seen: dict[str, str] = {}
    for tests in records.tests.values():
        seen |= tests
    cut: dict[str, str] = {}
    shared = set(records.shared)  # keys two tests cut to: no proof either way
    for key, status in seen.items():
        short = _as_options_parser(key)
        if short != key:
            shared |= {short} if short in cut else set()
            cut[short] = status
    seen = cut | seen
    # the session ended as it started and the output was not cut: every test the log
    # passes has its line, whatever the `end` line counts (code in the process can
    # write a forged `end` and blind the plugin's fd after it: red team round eight A3)
    ended = complete and bool(records.ends)
    claims_pass = False
    for source, statuses in claims.items():
        for key, status in statuses.items():
            if status not in PASSING or not relevant(key):
                continue
            claims_pass = True
            streamed = seen.get(key)
            if streamed is not None and streamed not in PASSING and key not in shared:
                return f"{source} says {key} {status}, the judge's stream saw it {streamed}"
            # the log's ids are the stream's (both cwd-relative node ids); the report's
            # are rebuilt from xunit attributes, so only a seen failure counts there
            if streamed is None and ended and source == "log":
                return f"{source} says {key} {status}, the judge's stream never saw it run"
    if complete and claims_pass and "report" in claims and not records.ends:
        return "the JUnit report is from a pytest session the judge's stream never saw end"
    return None


# pytest's last line: "=== 7 failed, 20 passed in 1.2s ===" (also "no tests ran in ...")
_SUMMARY = re.compile(r"^=+ .*\bin [\d.]+s\b.*=+$")
_STATUS_LINE = re.compile(r"^(PASSED|FAILED|ERROR|XFAIL|XPASS|SKIPPED)\b")


def pytest_log(log: str) -> tuple[str, list[str]]:
    """(the log with every status line after pytest's own last summary line dropped, those
    lines): pytest writes none there, so each is another process's or an exit hook's, and
    evidence (round five's `PASSED` lines printed at exit; round nine B4 printed them for
    the failing originals there; the official parser keeps a test's last line)."""
    lines = log.splitlines(keepends=True)
    last = max((i for i, line in enumerate(lines) if _SUMMARY.match(line.strip())), default=None)
    if last is None:
        return log, []
    after = lines[last + 1 :]
    dropped = [ln.strip() for ln in after if _STATUS_LINE.match(ln)]
    kept = lines[: last + 1] + [ln for ln in after if not _STATUS_LINE.match(ln)]
    return "".join(kept), dropped


def _as_options_parser(key: str) -> str:
    """The key as swebench's parse_log_pytest_options writes it: a parameter that is an
    absolute path cut to its last part."""
    match = _OPTION.search(key)
    if not match:
        return key
    main, option = match.groups()
    if option.startswith("/") and not option.startswith("//") and "*" not in option:
        option = "/" + option.split("/")[-1]
    return f"{main}[{option}]"


def note(records: Records) -> dict[str, Any]:
    """What the details keep of the stream (for audits)."""
    return {"started": sorted(records.starts), "ended": sorted(records.ends),
            "tests": sum(records.counted.values()), "forks": records.forks[:5],
            "findings": records.findings[:5],
            "test_findings": [f"{k}: {w}" for k, w in records.test_findings[:5]],
            "notes": records.notes[:3]}  # fmt: skip
