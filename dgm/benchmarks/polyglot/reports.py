"""How the Polyglot judge runs each language's tests, and reads per-test results back.

Every command writes a structured per-test report (`$DGM_REPORT` is a folder the judge
made just before the tests; `$DGM_EXERCISE` the exercise folder's name) or prints the
runner's own per-test lines: pytest JUnit XML (cross-checked with its `-rA` summary),
Catch2 JUnit XML, the JUnit platform's XML, jest's JSON, `go test -v` and libtest lines.
Parsers reduce every entry to the same key `polyglot_canaries.expected_tests` gives, and
keep the worst status when a key repeats. They treat their input as hostile: size-capped,
DTDs refused, anything malformed is `None` (no report), never a pass.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from dgm.benchmarks.judging import xml_report_root

PASSED, FAILED, ERROR, SKIPPED = "PASSED", "FAILED", "ERROR", "SKIPPED"
_RANK = {PASSED: 0, SKIPPED: 1, FAILED: 2, ERROR: 3}
MAX_REPORT_BYTES = 8 * 1024 * 1024

JAVA_BUILD = """#!/bin/sh
# The Java judge's build: main and test classes into $DGM_OUT (no annotation processors).
set -e
jars() { for j in "$@"; do [ -f "/usr/share/java/$j" ] && printf '%s:' "/usr/share/java/$j"; done; }
CONSOLE=/usr/share/java/junit-platform-console-standalone.jar
LIBS="$(jars assertj-core.jar com.android.json.jar)"
mkdir -p "$DGM_OUT/main" "$DGM_OUT/test"
# Debian's android org.json declares JSONException checked; the exercises (rest-api) are
# written against org.json's unchecked one: that class, first on every class path.
if [ -f /usr/share/java/com.android.json.jar ]; then
  mkdir -p "$DGM_OUT/shim/org/json"
  printf '%s\\n' 'package org.json;' \\
    'public class JSONException extends RuntimeException {' \\
    '  public JSONException(String s) { super(s); }' \\
    '  public JSONException(String s, Throwable c) { super(s, c); }' \\
    '  public JSONException(Throwable c) { super(c); }' \\
    '}' > "$DGM_OUT/shim/org/json/JSONException.java"
  javac -proc:none -nowarn -d "$DGM_OUT/main" "$DGM_OUT/shim/org/json/JSONException.java"
  rm -rf "$DGM_OUT/shim"
fi
MAIN=$(find src/main/java -name '*.java' 2>/dev/null || true)
if [ -n "$MAIN" ]; then
  javac -proc:none -encoding UTF-8 -nowarn -d "$DGM_OUT/main" -cp "$DGM_OUT/main:$LIBS" $MAIN
fi
javac -proc:none -encoding UTF-8 -nowarn -g:none -d "$DGM_OUT/test" \\
  -cp "$DGM_OUT/main:$CONSOLE:$LIBS" \\
  $(find src/test/java -name '*.java')
"""
JAVA_RUN = """#!/bin/sh
# The Java judge's run: the JUnit platform on the built classes, XML report in $DGM_REPORT,
# the console's tree (printed before any shutdown hook runs) cross-checked with it.
jars() { for j in "$@"; do [ -f "/usr/share/java/$j" ] && printf '%s:' "/usr/share/java/$j"; done; }
CONSOLE=/usr/share/java/junit-platform-console-standalone.jar
LIBS="$(jars assertj-core.jar com.android.json.jar)"
exec $DGM_NOSPAWN java -jar "$CONSOLE" --disable-banner --details=tree --details-theme=ascii \\
  --disable-ansi-colors --fail-if-no-tests \\
  --reports-dir "$DGM_REPORT" -cp "$DGM_BIN/main:$DGM_BIN/test:$LIBS" \\
  --scan-classpath "$DGM_BIN/test"
"""

COMMANDS = {
    "python": "exec env PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 $DGM_NOSPAWN python3 -I -m pytest -q"
    " -p no:cacheprovider -rA"
    ' --junitxml="$DGM_REPORT/report.xml" -o junit_family=xunit1',
    "go": "go test -v -count=1 ./...",
    "rust": "cargo test --offline --no-fail-fast -- --include-ignored",
    "cpp": "mkdir -p build && cd build && cmake -DEXERCISM_RUN_ALL_TESTS=1 -G 'Unix Makefiles'"
    ' .. >/dev/null && make -j2 "$DGM_EXERCISE" && ./"$DGM_EXERCISE" --reporter junit'
    ' --out "$DGM_REPORT/report.xml"',
    "java": "sh /stage/java-build.sh && DGM_BIN=$DGM_OUT sh /stage/java-run.sh",
    "javascript": "cp /usr/local/share/dgm/babel.config.js babel.config.js"
    " && exec $DGM_NOSPAWN jest --ci --runInBand --no-watchman --rootDir ."
    " --setupFilesAfterEnv '<rootDir>/dgm-judge-setup.js'"
    " --testTimeout 60000"
    ' --json --outputFile="$DGM_REPORT/report.json"',
}
"""One command per language (the judge splits the compiled ones: BUILD and RUN)."""
JEST_GUARD = "dgm-judge-setup.js"
"""The judge's own jest setup in every JavaScript judge tree (jest_guard.js: a received
value carrying `asymmetricMatch` is refused); its name is the judge's, so the agent's
file of that name never comes over (judge_prep.allowed)."""
JEST_REFUSED = "dgm judge: the received value carries asymmetricMatch"
JEST_REPLACED = "dgm judge: the solution replaced expect"
JEST_EVIDENCE = {
    JEST_REFUSED: "received a value carrying asymmetricMatch",
    JEST_REPLACED: "ran after the solution assigned a new `expect`",
}
"""The guard's failure messages that are evidence of tampering (a value no answer is, an
`expect` swapped for another), with what each means; its other refusal (a Proxy) only
fails the test."""

BUILD = {
    "go": 'CGO_ENABLED=0 go test -c -o "$DGM_OUT/tests.test" .',  # after go build (judge_prep)
    "rust": "cargo test --offline --no-run --message-format=json-render-diagnostics"
    ' > "$DGM_OUT/cargo.json"',
    "cpp": "mkdir -p build && cd build && cmake -DEXERCISM_RUN_ALL_TESTS=1 -G 'Unix Makefiles'"
    ' .. >/dev/null && make -j2 "$DGM_EXERCISE" && cp "$DGM_EXERCISE" "$DGM_OUT/tests"',
    "java": "sh /stage/java-build.sh",
}
"""Compiled languages: the build in the first container, with the test sources; the
binaries it leaves in $DGM_OUT are all the second container gets."""
RUN = {
    "go": 'exec $DGM_NOSPAWN "$DGM_BIN/tests.test" -test.v -test.count=1',
    "rust": 'exec $DGM_NOSPAWN --each "$DGM_BIN"/rust/* -- --include-ignored',
    "cpp": 'exec $DGM_NOSPAWN "$DGM_BIN/tests" --reporter junit --out "$DGM_REPORT/report.xml"',
    "java": "exec sh /stage/java-run.sh",
}
# `$DGM_NOSPAWN` (judge_prep: `python3 -I -S /stage/nospawn.py`, ~35 ms): the launcher under
# which the test process and everything it execs can start threads but no process. Each
# command `exec`s it, so that no shell of the sandbox user stays alive beside the tests
# (one could be made to fork for them through ptrace or /proc/PID/mem). Spawning is
# allowed only for an exercise whose own tests start processes (SPAWNING_TESTS).
SPAWNING_TESTS = {
    "python": r"\b(?:subprocess|multiprocessing|os\.system|os\.fork|Popen)\b",
    "go": r'"os/exec"',
    "rust": r"\bstd::process::Command\b|\bprocess::Command\b",
    "cpp": r"\b(?:fork|popen|system|posix_spawn)\s*\(",
    "java": r"\bProcessBuilder\b|\.exec\s*\(",
    "javascript": r"\bchild_process\b",
}
"""A pristine (judge's own) test file matching its language's rule starts processes
itself (rust/macros runs cargo, javascript/grep runs node): its exercise runs with
spawning allowed (the launcher installs no filter). Decided on the host from the hidden
tests, never from the agent's files."""
REPORT_FILES = {"python": "report.xml", "cpp": "report.xml", "javascript": "report.json",
                "java": "TEST-junit-jupiter.xml"}  # fmt: skip
"""Languages whose results come from a report file; the others' from their runner's lines."""
OPTIONAL_REPORTS = {"java": ("TEST-junit-vintage.xml", "TEST-junit-platform-suite.xml")}
"""Report files a runner may also write (the JUnit console: one per test engine)."""
RESULT_LINES = {
    "python": r"(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) \S",
    "go": r"\s*--- (PASS|FAIL|SKIP): ",
    "rust": r"test .+ \.\.\. (ok|FAILED|ignored)\s*$",
    "java": r"[|' ]*[+'`]-- .+? \[(?:OK|X|A|S)\]",
}
"""The runner's per-test lines judge_prep keeps whole (the `results.log` report)."""
RESULTS = "results.log"


def merge(tests: dict[str, str], key: str, status: str) -> None:
    if _RANK[status] >= _RANK.get(tests.get(key, ""), -1):
        tests[key] = status


# -- report files ------------------------------------------------------------------------
def _python_key(classname: str, name: str) -> str:
    name = name.split("[")[0]
    return f"{classname.rsplit('.', 1)[-1]}.{name}" if "." in classname else name


_JUNIT_KEYS: dict[str, Callable[[str, str], str]] = {
    "python": _python_key,
    "cpp": lambda _cls, name: name,
    "java": lambda _cls, name: re.split(r"[(\[]", name, maxsplit=1)[0].strip(),
}


def parse_junit(data: bytes, language: str) -> dict[str, str] | None:
    """JUnit XML -> {key: status}; None when it is not a well-formed report."""
    root = xml_report_root(data, MAX_REPORT_BYTES)
    if root is None:
        return None
    if root.tag not in ("testsuites", "testsuite"):
        return None
    tests: dict[str, str] = {}
    key = _JUNIT_KEYS[language]
    for case in root.iter("testcase"):
        tags = {child.tag for child in case}
        status = (ERROR if "error" in tags else FAILED if "failure" in tags
                  else SKIPPED if "skipped" in tags else PASSED)  # fmt: skip
        merge(tests, key(case.get("classname") or "", case.get("name") or ""), status)
    return tests


def parse_jest(data: bytes) -> dict[str, str] | None:
    if len(data) > MAX_REPORT_BYTES:
        return None
    try:
        report = json.loads(data)
        tests: dict[str, str] = {}
        for suite in report["testResults"]:
            for case in suite["assertionResults"]:
                raw = case["status"]
                status = PASSED if raw == "passed" else FAILED if raw == "failed" else SKIPPED
                merge(tests, str(case["title"]), status)
        return tests
    except (ValueError, KeyError, TypeError):
        return None


def jest_refused(data: bytes) -> list[str]:
    """'title: why' for each test the judge's jest guard failed with JEST_EVIDENCE."""
    try:
        report = json.loads(data) if len(data) <= MAX_REPORT_BYTES else {}
        cases = [case for suite in report.get("testResults", [])
                 for case in suite["assertionResults"]]  # fmt: skip
        said = [(case["title"], " ".join(map(str, case.get("failureMessages") or [])))
                for case in cases]  # fmt: skip
        return [f"{title}: {why}" for title, text in said
                for mark, why in JEST_EVIDENCE.items() if mark in text]  # fmt: skip
    except (ValueError, KeyError, TypeError, AttributeError):
        return []


# -- the test log --------------------------------------------------------------------------
_PYTEST_LINE = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+)", re.MULTILINE)
_PYTEST_STATUS = {"XFAIL": SKIPPED, "XPASS": FAILED}
_GO_LINE = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+) \(", re.MULTILINE)
_GO_STATUS = {"PASS": PASSED, "FAIL": FAILED, "SKIP": SKIPPED}
_RUST_LINE = re.compile(r"^test (.+?) \.\.\. (ok|FAILED|ignored)\s*$", re.MULTILINE)
_RUST_STATUS = {"ok": PASSED, "FAILED": FAILED, "ignored": SKIPPED}


def parse_pytest_log(log: str) -> dict[str, str]:
    """`pytest -rA`'s short summary: node id file::Class::test -> the report's key."""
    tests: dict[str, str] = {}
    for status, node in _PYTEST_LINE.findall(log):
        parts = node.split("::")[1:]
        if parts:
            key = ".".join(parts[-2:]) if len(parts) >= 2 else parts[-1]
            merge(tests, key.split("[")[0], _PYTEST_STATUS.get(status, status))
    return tests


def parse_go_log(log: str) -> dict[str, str]:
    tests: dict[str, str] = {}
    for status, name in _GO_LINE.findall(log):
        merge(tests, name, _GO_STATUS[status])
    return tests


def parse_rust_log(log: str) -> dict[str, str]:
    tests: dict[str, str] = {}
    for name, status in _RUST_LINE.findall(log):
        merge(tests, name.rsplit("::", 1)[-1].strip(), _RUST_STATUS[status])
    return tests


_JAVA_TREE = re.compile(r"^[|' ]*[+'`]-- (.+?) \[(OK|X|A|S)\]", re.MULTILINE)
_JAVA_STATUS = {"OK": PASSED, "X": FAILED, "A": SKIPPED, "S": SKIPPED}


def parse_java_tree(log: str) -> dict[str, str]:
    """The JUnit console's `--details=tree` (ascii theme) lines: `+-- name() [X] ...`.
    Containers (classes, the engine) come out too; only the XML's keys are compared."""
    tests: dict[str, str] = {}
    for caption, icon in _JAVA_TREE.findall(log):
        merge(tests, _JUNIT_KEYS["java"]("", caption), _JAVA_STATUS[icon])
    return tests


def per_test(language: str, reports: dict[str, bytes]) -> tuple[dict | None, dict]:
    """({key: status} or None when there is no usable report, details of the cross-check)."""
    log = reports.get(RESULTS, b"").decode("utf-8", "replace")
    if language == "go":
        return parse_go_log(log) or None, {}
    if language == "rust":
        return parse_rust_log(log) or None, {}
    data = reports.get(REPORT_FILES[language])
    if data is None:
        return None, {}
    if language == "javascript":
        refused = jest_refused(data)
        return parse_jest(data), {"refused": refused} if refused else {}
    tests = parse_junit(data, language)
    if language == "java" and tests is not None:
        return console_check(tests, parse_java_tree(log))
    if language != "python" or tests is None:
        return tests, {}
    return cross_check(tests, parse_pytest_log(log))


def console_check(report: dict[str, str], tree: dict[str, str]) -> tuple[dict[str, str], dict]:
    """Java: the JUnit XML against the console tree, which the launcher printed before
    any shutdown hook could run. A test the XML calls PASSED that the tree does not (or
    does not show) is evidence: the XML was rewritten after the tests ran (red team
    round five, H8). Failure kinds are not compared (the XML tells an error from a
    failure, the tree does not). Each test's status is the worse of the two."""
    combined, rewritten = {}, []
    for key, status in report.items():
        seen = tree.get(key, ERROR)
        combined[key] = status if _RANK[status] >= _RANK[seen] else seen
        if status == PASSED and seen != PASSED:
            rewritten.append(f"{key} (console: {tree.get(key, 'not shown')})")
    details: dict = {"sources": {"report": report, "console": tree}}
    if rewritten:
        details["report_vs_console"] = rewritten[:20]
    return combined, details


def cross_check(report: dict[str, str], log: dict[str, str]) -> tuple[dict[str, str], dict]:
    """A test passes only when the report and the log both say so; a test one of them
    does not show counts as an error. `details["sources"]` keeps both for the canary
    checks (the judge pops it)."""
    combined: dict[str, str] = {}
    disagree: dict[str, str] = {}
    for key in report.keys() | log.keys():
        a, b = report.get(key, ERROR), log.get(key, ERROR)
        combined[key] = a if _RANK[a] >= _RANK[b] else b
        if a != b:
            disagree[key] = f"report {report.get(key)}, log {log.get(key)}"
    details: dict = {"sources": {"report": report, "log": log}}
    if disagree:
        details["report_vs_log"] = dict(list(disagree.items())[:20])
    return combined, details


def lookup(tests: dict[str, str], key: str, language: str) -> str | None:
    """The status of `key`: its own entry, or (C++ sections, Go subtests) the worst of
    the entries under it."""
    if key in tests:
        return tests[key]
    if language not in ("cpp", "go"):
        return None
    found: dict[str, str] = {}
    for name, status in tests.items():
        if name.startswith(key + "/"):
            merge(found, key, status)
    return found.get(key)
