"""The SWE-bench judge's rules that need no Docker: what a patch may touch, the JUnit
report read as hostile input, canary evidence, the data folder's environments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dgm.benchmarks.swebench import guard as swe_guard
from dgm.benchmarks.swebench import steps
from dgm.benchmarks.swebench.data import SweData, installs_project
from dgm.benchmarks.swebench.junit import node_id, parse_junit


def _new_file(path: str, text: str = "x = 1\n") -> str:
    lines = text.splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    return (f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n"
            f"+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n{body}")  # fmt: skip


@pytest.mark.parametrize(
    "path",
    ["conftest.py", "src/pkg/conftest.py", "tests/test_a.py", "tests/data/x.json", "pytest.ini",
     "tox.ini", "setup.cfg", "pyproject.toml", "setup.py", "sitecustomize.py", "x/evil.pth",
     "pytest.py", "_pytest/runner.py", "testing/helper.py", "pkg/foo_test.py", "bin/test",
     ".pytest.ini", "test/x.py", ".git/hooks/post-checkout", "a/../../etc/x",
     "src/sitecustomize/__init__.py", "usercustomize/x.py", "src/pkg/conftest/__init__.py",
     "src/pkg.dist-info/entry_points.txt", "src/pkg.egg-info/entry_points.txt",
     "entry_points.txt", "lib/evil.pth", "src/pluggy/__init__.py", "pkg/__pycache__/a.pyc",
     "x.egg/EGG-INFO/entry_points.txt"],
)  # fmt: skip
def test_hunks_on_files_the_judge_owns_are_dropped_and_recorded(path: str) -> None:
    patch = _new_file("src/pkg/core.py") + _new_file(path)
    kept, dropped = swe_guard.filter_patch(patch, {"bin/test"})
    assert kept == _new_file("src/pkg/core.py")
    assert [d["path"] for d in dropped] == [path]


def test_the_frameworks_own_repository_may_edit_its_framework_names() -> None:
    patch = _new_file("src/_pytest/runner.py")
    assert swe_guard.filter_patch(patch, set(), "pytest-dev/pytest") == (patch, [])
    assert swe_guard.filter_patch(patch, set(), "pallets/flask")[1]


def test_a_rename_into_a_test_folder_is_dropped() -> None:
    patch = ("diff --git a/src/a.py b/tests/a.py\nsimilarity index 100%\n"
             "rename from src/a.py\nrename to tests/a.py\n")  # fmt: skip
    kept, dropped = swe_guard.filter_patch(patch, set())
    assert kept == "" and dropped[0]["reason"] == "under a test folder"


def test_text_outside_git_sections_is_dropped() -> None:
    plain = "--- a/conftest.py\n+++ b/conftest.py\n@@ -0,0 +1 @@\n+x\n"
    kept, dropped = swe_guard.filter_patch(plain, set())
    assert kept == "" and dropped


def test_runner_and_test_files_come_from_the_eval_command() -> None:
    cmd = "PYTHONWARNINGS='ignore' bin/test -C --verbose sympy/a/tests/test_b.py sympy/x"
    assert swe_guard.runner_files(cmd) == {"bin/test"}
    assert swe_guard.test_files(cmd) == ["sympy/a/tests/test_b.py"]
    assert swe_guard.runner_files("pytest -rA tests/test_x.py") == set()


def test_canary_evidence() -> None:
    c = swe_guard.Canaries.draw(["tests/test_a.py"])
    ok = {f"tests/test_a.py::{c.must_pass}": "PASSED", f"tests/test_a.py::{c.must_fail}": "FAILED"}
    assert c.evidence(ok) is None
    forced = ok | {f"tests/test_a.py::{c.must_fail}": "PASSED"}
    assert "must-fail" in (c.evidence(forced) or "")
    assert "missing" in (c.evidence({}) or "")
    sympy = {c.must_pass: "PASSED", f"tests/test_a.py:{c.must_fail}": "FAILED"}
    assert c.evidence(sympy) is None
    two = swe_guard.Canaries("test_a_ok", "test_a_bad", ("t/test_a.py", "t/test_b.py"))
    assert two.evidence({"test_a_ok": "PASSED", "t/test_a.py:test_a_bad": "FAILED",
                         "t/test_b.py:test_a_bad": "FAILED"}) is None  # fmt: skip
    one_file = {"t/test_a.py::test_a_ok": "PASSED", "t/test_a.py::test_a_bad": "FAILED"}
    assert "missing" in (two.evidence(one_file) or "")
    assert c.must_pass != swe_guard.Canaries.draw(["x"]).must_pass  # fresh per evaluation


SCRIPT = """#!/bin/bash
set -uxo pipefail
source /opt/miniconda3/bin/activate
conda activate testbed
cd /testbed
git status
git show
git -c core.fileMode=false diff abc123
python -m pip install -e .
git checkout abc123 t/test_a.py
git apply -v - <<'EOF_114329324912'
diff --git a/t/test_a.py b/t/test_a.py
+def test_secret_body(): assert compute() == 42
EOF_114329324912
: '>>>>> Start Test Output'
pytest -rA t/test_a.py
: '>>>>> End Test Output'
git checkout abc123 t/test_a.py
"""


def test_the_tests_run_under_a_script_holding_only_the_test_command() -> None:
    place = steps.place_script(SCRIPT, "abc123", ["t/test_a.py"], [])
    assert "git -c safe.directory='*' checkout abc123 t/test_a.py" in place
    assert "apply -v /stage/secret/test.patch" in place
    assert "/bin/cp /stage/secret/tests/0.py /testbed/t/test_a.py" in place
    setup = steps.setup_script(SCRIPT)
    assert "pip install -e ." in setup and "conda activate testbed" in setup
    for gone in ("EOF_", "secret_body", "git checkout", "git show", "git status", "diff abc"):
        assert gone not in setup
    tests = steps.tests_script(SCRIPT, "/tmp/dgm-r", True, ["xdist.plugin"])
    assert "secret_body" not in tests and "pip install" not in tests and "git" not in tests
    assert "--junitxml=/tmp/dgm-r/" in tests and "-p xdist.plugin" in tests
    assert "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1" in tests
    assert (
        tests.split(swe_guard.START_MARK)[1]
        == "\npytest -rA t/test_a.py\n: '>>>>> End Test Output'\n"
    )
    assert "kill -9 -1" in steps.wrapped("tests.sh")
    # the judge's stream plugin comes first, under a name drawn for the run
    streamed = steps.tests_script(SCRIPT, "/tmp/dgm-r", True, ["xdist.plugin"], "ab" * 12)
    assert "PYTEST_ADDOPTS='-p dgm_judge_stream_abababababab --junitxml=" in streamed
    assert f"export DGM_STREAM={'ab' * 12}" in streamed
    assert "export PYTHONPATH=/stage/stream${PYTHONPATH:+:$PYTHONPATH}" in streamed


def test_junit_report_node_ids_and_statuses() -> None:
    xml = b"""<testsuites><testsuite>
    <testcase file="tests/test_a.py" classname="tests.test_a.TestX" name="test_p[a b]"/>
    <testcase file="tests/test_a.py" classname="tests.test_a" name="test_f"><failure/></testcase>
    <testcase file="tests/test_a.py" classname="tests.test_a" name="test_x">
      <skipped type="pytest.xfail"/></testcase>
    <testcase file="tests/test_a.py" classname="tests.test_a" name="test_e"/>
    <testcase file="tests/test_a.py" classname="tests.test_a" name="test_e"><error/></testcase>
    </testsuite></testsuites>"""  # fmt: skip
    assert parse_junit(xml) == {
        "tests/test_a.py::TestX::test_p[a": "PASSED",
        "tests/test_a.py::test_f": "FAILED",
        "tests/test_a.py::test_x": "XFAIL",
        "tests/test_a.py::test_e": "ERROR",
    }
    assert node_id("a/b.py", "a.b.C.D", "t") == "a/b.py::C::D::t"


@pytest.mark.parametrize("bad", [b"<a>", b"", b'<!DOCTYPE x [<!ENTITY a "b">]><a>&a;</a>'])
def test_a_broken_or_hostile_report_is_no_report(bad: bytes) -> None:
    assert parse_junit(bad) is None


def test_environments_are_shared_by_their_inputs(tmp_path: Path) -> None:
    record = {"instance_id": "o__r-1", "repo": "o/r", "base_commit": "abc", "version": "1.0"}
    rows = [record, record | {"instance_id": "o__r-2"}, record | {"instance_id": "o__r-3",
            "version": "2.0"}]  # fmt: skip
    (tmp_path / "instances.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    steps = ["python -m pip install 'pytest'", "python -m pip install -e '.[dev]'"]
    env = {r["instance_id"]: {"python": "3.11", "install": steps} for r in rows}
    (tmp_path / "offline_env.json").write_text(json.dumps({"instances": env, "constraints": []}))
    data = SweData(tmp_path)
    one, two, three = (data.instance_env(i) for i in data.select(None))
    assert one.env == two.env and one.env.key != three.env.key
    assert one.env.steps == (steps[0],) and one.project_steps == (steps[1],)
    assert installs_project("python -m pip install .") and not installs_project("pip install x")
