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
MAIN=$(find src/main/java -name '*.java' 2>/dev/null || true)
if [ -n "$MAIN" ]; then
  javac -proc:none -encoding UTF-8 -nowarn -d "$DGM_OUT/main" -cp "$LIBS" $MAIN
fi
javac -proc:none -encoding UTF-8 -nowarn -g:none -d "$DGM_OUT/test" \\
  -cp "$DGM_OUT/main:$CONSOLE:$LIBS" \\
  $(find src/test/java -name '*.java')
"""
JAVA_RUN = """#!/bin/sh
# The Java judge's run: the JUnit platform on the built classes, XML report in $DGM_REPORT.
jars() { for j in "$@"; do [ -f "/usr/share/java/$j" ] && printf '%s:' "/usr/share/java/$j"; done; }
CONSOLE=/usr/share/java/junit-platform-console-standalone.jar
LIBS="$(jars assertj-core.jar com.android.json.jar)"
exec java -jar "$CONSOLE" --disable-banner --details=tree --fail-if-no-tests \\
  --reports-dir "$DGM_REPORT" -cp "$DGM_BIN/main:$DGM_BIN/test:$LIBS" \\
  --scan-classpath "$DGM_BIN/test"
"""

COMMANDS = {
    "python": "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -I -m pytest -q -p no:cacheprovider -rA"
    ' --junitxml="$DGM_REPORT/report.xml" -o junit_family=xunit1',
    "go": "go test -v -count=1 ./...",
    "rust": "cargo test --offline --no-fail-fast -- --include-ignored",
    "cpp": "mkdir -p build && cd build && cmake -DEXERCISM_RUN_ALL_TESTS=1 -G 'Unix Makefiles'"
    ' .. >/dev/null && make -j2 "$DGM_EXERCISE" && ./"$DGM_EXERCISE" --reporter junit'
    ' --out "$DGM_REPORT/report.xml"',
    "java": "sh /stage/java-build.sh && DGM_BIN=$DGM_OUT sh /stage/java-run.sh",
    "javascript": "cp /usr/local/share/dgm/babel.config.js babel.config.js && jest --ci"
    " --runInBand --no-watchman --rootDir . --setupFilesAfterEnv '<rootDir>/dgm-judge-setup.js'"
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
    "go": '"$DGM_BIN/tests.test" -test.v -test.count=1',
    "rust": 'rc=0; for t in "$DGM_BIN"/rust/*; do "$t" --include-ignored || rc=1; done; exit $rc',
    "cpp": '"$DGM_BIN/tests" --reporter junit --out "$DGM_REPORT/report.xml"',
    "java": "sh /stage/java-run.sh",
}
REPORT_FILES = {"python": "report.xml", "cpp": "report.xml", "javascript": "report.json",
                "java": "TEST-junit-jupiter.xml"}  # fmt: skip
"""Languages whose results come from a report file; the others' from their runner's lines."""
OPTIONAL_REPORTS = {"java": ("TEST-junit-vintage.xml", "TEST-junit-platform-suite.xml")}
"""Report files a runner may also write (the JUnit console: one per test engine)."""
RESULT_LINES = {
    "python": r"(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) \S",
    "go": r"\s*--- (PASS|FAIL|SKIP): ",
    "rust": r"test .+ \.\.\. (ok|FAILED|ignored)\s*$",
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
    if language != "python" or tests is None:
        return tests, {}
    return cross_check(tests, parse_pytest_log(log))


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
