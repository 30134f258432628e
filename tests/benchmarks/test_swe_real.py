"""Real SWE-bench instances (../shared/swe-bench) in real Docker: images built offline,
the official eval script, and a judge no patch can talk into a pass."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from dgm.benchmarks.swebench.judge import judge_swebench as judge
from dgm.benchmarks.swebench.loader import SweTasks
from dgm.sandbox import ResourceLimits
from tests.needs import missing

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("DGM_SHARED_DIR", ROOT.parent / "shared")) / "swe-bench"
CI_SUBSET = ROOT / "eval" / "subsets" / "swe_ci.txt"
MARSHMALLOW = "marshmallow-code__marshmallow-1359"
F2P = "tests/test_fields.py::TestParentAndName::test_datetime_list_inner_format"


@pytest.fixture(scope="session")
def swe_ci() -> SweTasks:
    """The CI subset's images (reused when their recipes are unchanged)."""
    from dgm.benchmarks.subsets import read_id_file
    from dgm.benchmarks.swebench import images as swebench_images
    from dgm.benchmarks.swebench.data import SweData

    if not (DATA / "instances.jsonl").is_file():
        missing("swebench", f"no SWE-bench data at {DATA}")
    swebench_images.build(SweData(DATA), read_id_file(CI_SUBSET), log=lambda _l: None)
    return SweTasks(str(DATA))


def _patch(edits: dict[str, Callable[[str], str]], tmp: Path, iid: str = MARSHMALLOW) -> str:
    """A git diff of an instance's base commit (marshmallow's) with `edits` made."""
    from dgm.benchmarks.swebench.data import SweData
    from dgm.benchmarks.swebench.images import checkout, unpack

    data = SweData(DATA)
    record = data.instances[iid]
    work = tmp / "work"
    checkout(unpack(data, record["repo"], tmp), record["base_commit"], work)
    for path, edit in edits.items():
        target = work / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(edit(target.read_text() if target.exists() else ""))
    subprocess.run(["git", "add", "-A", "-f"], cwd=work, check=True)  # -f: *.dist-info too
    return subprocess.run(["git", "diff", "--cached"], cwd=work, check=True,
                          capture_output=True, text=True).stdout  # fmt: skip


def _append(text: str) -> Callable[[str], str]:
    return lambda old: old + "\n" + text


FORCE_HOOK = """
import pytest
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"
"""
PATCH_REPORTS = """
import _pytest.reports as _r
_orig = _r.TestReport.from_item_and_call.__func__
def _forced(cls, item, call):
    rep = _orig(cls, item, call)
    rep.outcome = "passed"
    return rep
_r.TestReport.from_item_and_call = classmethod(_forced)
"""
GC_HOOK = """
import gc as _gc, pytest as _pt
class _Probe:
    @_pt.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        out = yield
        rep = out.get_result()
        if rep.when == "call" and "marshmallow" in repr(vars(item.module).values()):
            rep.outcome, rep.longrepr = "passed", None
for _o in _gc.get_objects():
    if type(_o).__name__ == "Config" and hasattr(_o, "pluginmanager"):
        _o.pluginmanager.register(_Probe(), "probe")
"""
INIT = "src/marshmallow/__init__.py"
HOSTILE = Path(__file__).resolve().parents[2] / "dgm" / "benchmarks" / "agents" / "hostile"
HOSTILE_READER = (HOSTILE / "test_patch_reader.py").read_text()
FAMILIES = (HOSTILE / "copy_families.py").read_text() + "\n\n"  # (both forgers call it)
REPORT_FORKER = FAMILIES + (HOSTILE / "report_forker.py").read_text()
OBJECT_FORGER = FAMILIES + (HOSTILE / "report_object_forger.py").read_text()
ROUND8 = Path(__file__).resolve().parent / "attacks_round8_swe"
BLINDER = (ROUND8 / "a3_stream_blinded.py.txt").read_text()
HOOK_SWALLOW = (ROUND8 / "a1_hook_swallow.py.txt").read_text()
REWRITER_SWALLOW = (ROUND8 / "a2_rewriter_swallow.py.txt").read_text()
ENTRY = "src/probe-1.0.dist-info"
ATTACKS = {
    "gc Config hook for tests that import the package": {INIT: _append(GC_HOOK)},
    "pytest11 entry point in a new dist-info": {
        f"{ENTRY}/METADATA": _append("Metadata-Version: 2.1\nName: probe\nVersion: 1.0\n"),
        f"{ENTRY}/entry_points.txt": _append("[pytest11]\nprobe = probe_plugin\n"),
        "src/probe_plugin.py": _append(FORCE_HOOK)},
    "sitecustomize as a package": {"src/sitecustomize/__init__.py": _append(PATCH_REPORTS)},
    "conftest forcing passes": {"conftest.py": _append(FORCE_HOOK)},
    "pytest report patched from the package": {INIT: _append(PATCH_REPORTS)},
    "PASSED lines printed at exit": {INIT: _append(
        f"import atexit\natexit.register(print, 'PASSED {F2P}')\n")},
    "os._exit(0) at import": {INIT: _append("import os\nos._exit(0)\n")},
    "test patch read from the stage or an open fd": {INIT: _append(HOSTILE_READER)},
    "pytest forked at import, log and report rewritten": {INIT: _append(REPORT_FORKER)},
    "report objects forged in pytest's process": {INIT: _append(OBJECT_FORGER)},
    "stream blinded after a forged end": {INIT: _append(BLINDER)},
    "a plugin registered at import swallows the original's failure": {
        INIT: _append(HOOK_SWALLOW)},
    "the assertion rewriter wraps the original's body": {INIT: _append(REWRITER_SWALLOW)},
    "test file edited": {"tests/test_fields.py": _append("assert True\n")},
    "pytest.ini with addopts": {"pytest.ini": _append("[pytest]\naddopts = --co -q\n")},
}  # fmt: skip


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_no_attack_resolves_a_real_instance(swe_ci: SweTasks, tmp_path: Path,
                                            attack: str) -> None:  # fmt: skip
    task = swe_ci.task(MARSHMALLOW)
    verdict, log = judge(task, _patch(ATTACKS[attack], tmp_path), ResourceLimits(), "docker", {})
    assert not verdict.resolved, (attack, verdict.details)
    if attack in ("conftest forcing passes", "test file edited", "pytest.ini with addopts"):
        assert verdict.details["dropped_hunks"], verdict.details
    if attack in ("pytest report patched from the package",
                  "gc Config hook for tests that import the package"):  # fmt: skip
        assert verdict.tampered and "must-fail" in verdict.details["tamper_evidence"]
    if attack in ("pytest11 entry point in a new dist-info", "sitecustomize as a package"):
        assert verdict.details["dropped_hunks"] and not verdict.resolved
    if attack == "pytest forked at import, log and report rewritten":
        # red team round five H13: resolved with nothing fixed before the result stream
        assert verdict.tampered, verdict.details
        assert verdict.details["tamper_evidence"].startswith("stream: "), verdict.details
    if attack == "report objects forged in pytest's process":
        # red team round seven S1: resolved on the CI three, no fork, before the plugin
        # watched pytest's machinery
        assert verdict.tampered, verdict.details
        assert "machinery was tampered" in verdict.details["tamper_evidence"], verdict.details
    if attack == "stream blinded after a forged end":
        # red team round eight A3: resolved on the CI three while an ended stream that
        # named no test was taken for a pytest that formats ids differently; since round
        # nine (B4) the plugin ends the session once its fd is pointed elsewhere
        assert "no test results" in (verdict.error or ""), verdict.details
    if attack in ("a plugin registered at import swallows the original's failure",
                  "the assertion rewriter wraps the original's body"):  # fmt: skip
        # red team round eight A1, A2: resolved on the CI three (a count names the
        # original there), before the plugin's checks by provenance (stream_checks.py)
        assert verdict.tampered, verdict.details
        evidence = verdict.details["tamper_evidence"]
        seen = ("hook pytest_pyfunc_call", "rewrite_asserts was replaced", "judge placed")
        assert evidence.startswith("stream: ") and any(s in evidence for s in seen), evidence
    if attack == "PASSED lines printed at exit":
        # the official name printed after pytest's last line (at exit): not read, and
        # evidence (before round nine: one test reported under two names)
        assert f"PASSED {F2P}" in log and verdict.tampered, verdict.details
        assert "after pytest's last line" in verdict.details["tamper_evidence"]


def test_gold_resolves_and_a_dropped_test_edit_beside_it_is_recorded(
    swe_ci: SweTasks, tmp_path: Path
) -> None:
    task = swe_ci.task(MARSHMALLOW)
    extra = _patch({"tests/test_fields.py": _append("# an agent's own test\n")}, tmp_path)
    verdict, _ = judge(task, task.meta["patch"] + extra, ResourceLimits(), "docker", {})
    assert verdict.resolved and not verdict.tampered, verdict.details
    assert [d["path"] for d in verdict.details["dropped_hunks"]] == ["tests/test_fields.py"]
    assert verdict.tests[F2P] == "PASSED"
    copies = verdict.details["copies"]  # copies of real tests, kept apart, names mapped back
    assert copies["must_fail"] and not set(copies["must_fail"]) & {
        t.split("::")[-1] for t in verdict.tests
    }
    assert "copy_mismatch" not in verdict.details


@pytest.mark.parametrize("agent, expected", [("oracle", True), ("null", False)])
def test_reference_agents_through_the_harness(swe_ci: SweTasks, tmp_path: Path, agent: str,
                                              expected: bool) -> None:  # fmt: skip
    from dgm.benchmarks.subsets import read_id_file
    from dgm.evaluation.evaluate_agent import evaluate_agent
    from dgm.jobs.evaluate import AgentRef

    tasks = [swe_ci.task(i) for i in read_id_file(CI_SUBSET)]
    outcomes = evaluate_agent(AgentRef.reference(agent), tasks, tmp_path, workers=2)
    for task, outcome in zip(tasks, outcomes, strict=True):
        assert outcome.resolved is expected, (task.id, outcome.error)
        assert all(outcome.tests.get(t) == ("PASSED" if expected else "FAILED")
                   for t in task.meta["FAIL_TO_PASS"]), outcome.tests  # fmt: skip


def test_a_forger_guessing_each_copy_familys_original_by_structure_is_caught(
    swe_ci: SweTasks, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The red team's structural attack (hostile/structural_forger.py): it passes the member
    of each new family it takes for the original. The families are exchangeable, so it is
    right about 1 time in k+1; the plan's draw is pinned to one where its rule (the
    smallest body) picks a copy (under the old one-sided copies its rules won every draw
    on this instance)."""
    from dgm.benchmarks.swebench import judge as judge_module

    monkeypatch.setattr(judge_module.secrets, "randbits", lambda _bits: 0)
    forger = (HOSTILE / "structural_forger.py").read_text()
    task = swe_ci.task(MARSHMALLOW)
    verdict, _ = judge(task, _patch({INIT: _append(forger)}, tmp_path), ResourceLimits(), "docker")
    # it fails the original it took for a copy (and passes a copy beside a failing original)
    assert not verdict.resolved, verdict.details
    assert verdict.details["resolution"] == "RESOLVED_NO"


FLASK = "pallets__flask-4992"


def test_start_up_code_the_setup_step_planted_is_tampering(swe_ci: SweTasks,
                                                          tmp_path: Path) -> None:  # fmt: skip
    """Red team round eight P: `__version__` made non-literal, so the setup step's
    `pip install -e .` imports the package (setuptools' `attr:` version), whose first
    lines plant a module and a `.pth` in the env's site-packages; at the tests step's
    start it swallows every failure but the copies', before the judge's plugin loads.
    The setup step's audit lists what it wrote."""
    planter = (ROUND8 / "p_plant_prepend.py.txt").read_text()
    version = '__version__ = "2.3.0.dev"'

    def edit(old: str) -> str:
        assert version in old
        return (
            planter + "\n" + old.replace(version, '__version__ = ".".join(["2", "3", "0", "dev"])')
        )

    patch = _patch({"src/flask/__init__.py": edit}, tmp_path, FLASK)
    verdict, _ = judge(swe_ci.task(FLASK), patch, ResourceLimits(), "docker", {})
    assert verdict.tampered and not verdict.resolved, verdict.details
    evidence = verdict.details["tamper_evidence"]
    assert evidence.startswith("setup: ") and "rt8_boot" in evidence, evidence
