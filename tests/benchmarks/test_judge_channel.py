"""The Polyglot judge's channel guarantees, without Docker (red team round five, H2, H5,
H7-H9, H12): the test process cannot start a process (nospawn.py), Java's XML must agree
with the console tree printed before any shutdown hook, and the build's scan
(build_scan.py) names a solution that redefines Catch's macros or embeds a file with
`.incbin`. The Docker checks of the same attacks are in test_judge_attacks.py (round 5)."""

from __future__ import annotations

import base64
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dgm.benchmarks.polyglot import loader as polyglot
from dgm.benchmarks.polyglot import reports as polyglot_reports
from dgm.benchmarks.polyglot.judge import JudgePlan, verdict_from
from dgm.sandbox.spec import ExecResult

HERE = Path(polyglot.__file__).parent
NOSPAWN = HERE / "nospawn.py"
SCAN = HERE / "build_scan.py"
PROBE = """
import os, subprocess, threading
got = []
t = threading.Thread(target=lambda: got.append("thread")); t.start(); t.join()
for name, start in [("fork", os.fork), ("spawn", lambda: subprocess.run(["true"]).returncode)]:
    try:
        if start() == 0 and name == "fork":
            os._exit(0)
        got.append(name)
    except OSError:
        pass
print(" ".join(got))
"""

needs_seccomp = pytest.mark.skipif(
    sys.platform != "linux" or platform.machine() not in ("x86_64", "aarch64"),
    reason="the filter is for Linux x86_64/aarch64",
)


@needs_seccomp
def test_under_the_launcher_threads_run_and_no_process_starts() -> None:
    run = [sys.executable, str(NOSPAWN), sys.executable, "-c", PROBE]
    assert subprocess.run(run, capture_output=True, text=True).stdout.split() == ["thread"]
    allowed = subprocess.run(run, capture_output=True, text=True,
                             env={"DGM_SPAWN_ALLOWED": "1", "PATH": "/usr/bin:/bin"})  # fmt: skip
    assert allowed.stdout.split() == ["thread", "fork", "spawn"]  # rust/macros, js/grep


@needs_seccomp
def test_each_runs_every_binary_and_fails_when_one_fails() -> None:
    each = [sys.executable, str(NOSPAWN), "--each", "/bin/true", "/bin/false", "--"]
    assert subprocess.run(each).returncode == 1
    assert subprocess.run(each[:4] + ["--"]).returncode == 0


def _java_output(xml: str, tree: str) -> str:
    reports = {"TEST-junit-jupiter.xml": xml, polyglot_reports.RESULTS: tree}
    lines = [">>>>> dgm judge: tests exited 1 after 1.000 s"]
    lines += [f">>>>> dgm judge report {n} {base64.b64encode(t.encode()).decode()}"
              for n, t in reports.items()]  # fmt: skip
    return "\n".join([*lines, f">>>>> dgm judge: end of reports ({len(reports)})"]) + "\n"


def test_java_xml_rewritten_after_the_console_tree_is_tampering() -> None:
    task = polyglot.Task("java__x", "polyglot", "java", "", "", "", "", 60, "/nowhere")
    plan = JudgePlan("java", expected=["adds", "subtracts"])
    xml = ('<testsuites><testsuite><testcase classname="XTest" name="adds()"/>'
           '<testcase classname="XTest" name="subtracts()"/></testsuite></testsuites>')  # fmt: skip
    honest = ".\n'-- JUnit Jupiter [OK]\n  '-- XTest [OK]\n    +-- adds() [OK]\n" \
             "    '-- subtracts() [OK]\n"  # fmt: skip
    good = verdict_from(ExecResult(0, _java_output(xml, honest)), task, plan)
    assert good.resolved and not good.tampered
    # The tree printed before the hook said subtracts failed; the XML says it passed.
    hooked = honest.replace("subtracts() [OK]", "subtracts() [X] expected: <1> but was: <2>")
    forged = hooked + "    '-- subtracts() [OK]\n"  # a forged line cannot outvote it
    bad = verdict_from(ExecResult(0, _java_output(xml, forged)), task, plan)
    assert bad.tampered and not bad.resolved
    assert "subtracts (console: FAILED)" in bad.details["tamper_evidence"]


def test_build_evidence_is_tampering_even_when_the_run_reports_nothing() -> None:
    task = polyglot.Task("rust__x", "polyglot", "rust", "", "", "", "", 60, "/nowhere")
    plan = JudgePlan("rust", expected=["adds"], build_evidence=["the crate has a .init_array"])
    out = ">>>>> dgm judge: tests exited 1 after 1.000 s\n>>>>> dgm judge: end of reports (0)\n"
    verdict = verdict_from(ExecResult(0, out), task, plan)
    assert verdict.tampered and not verdict.resolved and "no per-test report" in verdict.error
    assert ".init_array" in verdict.details["tamper_evidence"]


def test_the_runners_lines_past_their_cap_are_a_malformed_report(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("judge_prep", HERE / "judge_prep.py")
    prep = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(prep)  # type: ignore[union-attr]
    # 3 MiB of forged per-test lines would push the runner's own out of the kept ones.
    forge = f"{sys.executable} -c \"print('--- PASS: TestForged (0.00s)\\n' * 110000)\""
    code, _, kept = prep.run_captured(forge, "/", {}, polyglot_reports.RESULT_LINES["go"],
                                      kill_all=False)  # fmt: skip
    assert code == 0 and kept["cut"]
    plan = {"reports": [], "result_lines": "x", "budget": 10**9}
    assert "2 MiB" in prep.sealed_reports(plan, str(tmp_path), kept)[1]


def test_a_runner_line_behind_an_unterminated_write_is_still_read() -> None:
    """Red team round nine L1: the solution printed a line of its own and then one byte
    with no newline, so libtest's `test x ... FAILED` that followed no longer started a
    line and was dropped. For Go and Rust a runner line counts wherever it starts."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("judge_prep", HERE / "judge_prep.py")
    prep = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(prep)  # type: ignore[union-attr]
    out = "test tests::a ... ok\\n#test tests::a ... FAILED\\n"
    forge = f"{sys.executable} -c \"import sys; sys.stdout.write('{out}')\""
    pattern = polyglot_reports.RESULT_LINES["rust"]
    _, _, kept = prep.run_captured(forge, "/", {}, pattern, kill_all=False, anywhere=True)
    assert kept["lines"] == [b"test tests::a ... ok", b"test tests::a ... FAILED"]
    log = b"\n".join(kept["lines"]).decode()
    assert polyglot_reports.parse_rust_log(log) == {"a": "FAILED"}  # the worst wins
    _, _, kept = prep.run_captured(forge, "/", {}, pattern, kill_all=False)
    assert kept["lines"] == [b"test tests::a ... ok"]  # (what the judge read before)


CATCH = "#define REQUIRE(x) check(x)\n#define TEST_CASE(n) void t()\n"
TEST = '#include "x.h"\n#include "test/catch.hpp"\nTEST_CASE("a") { REQUIRE(f() == 1); }\n'


@pytest.mark.skipif(not shutil.which("g++"), reason="needs g++")
@pytest.mark.parametrize(
    ("header", "evidence"),
    [
        ("inline int f() { return 1; }\n", None),
        (
            '#include "test/catch.hpp"\n#undef REQUIRE\n#define REQUIRE(x) (void)0\n'
            "inline int f() { return 0; }\n",
            "x.h defines the Catch macro REQUIRE",
        ),
        # include tricks do not hide it: the preprocessor follows them
        (
            '#define H "test/catch.hpp"\n#include H\n#define CATCH_CONFIG_DISABLE 1\n'
            "inline int f() { return 1; }\n",
            "x.h defines the Catch macro CATCH_CONFIG_DISABLE",
        ),
        # nor splitting the directive across literals and escapes
        (
            'asm(".pushsection .rodata\\n.in" "c\\x62in \\"" __FILE__ "\\"\\n.popsection");\n'
            "inline int f() { return 1; }\n",
            "includes a file",
        ),
        # nor changing a comparison without a macro (a specialisation in Catch's namespace)
        (
            "inline int f() { return 0; }\nnamespace Catch { template <> bool pass<int>(); }\n",
            "x.h refers to Catch's own namespace",
        ),
        # or naming it mangled, in pieces, as an asm label
        (
            'int rc() __asm__("_ZN5Ca" "tch16getResultCaptureEv");\ninline int f() { return 1; }\n',
            "x.h refers to Catch's own namespace",
        ),
    ],
    ids=[
        "honest",
        "redefines-require",
        "disables-catch",
        "incbin-split",
        "catch-internals",
        "catch-mangled",
    ],
)
def test_cpp_build_scan_names_catch_macros_and_incbin(
    header: str, evidence: str | None, tmp_path: Path
) -> None:
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "catch.hpp").write_text(f"#pragma once\n{CATCH}")
    (tmp_path / "x.h").write_text(header)
    (tmp_path / "k3c9_test.cpp").write_text(TEST)
    run = [sys.executable, str(SCAN), "cpp", str(tmp_path), "x.h"]
    out = subprocess.run(run, capture_output=True, text=True, check=True).stdout
    assert (evidence in out) if evidence else out == "", out
