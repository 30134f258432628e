"""The judge's canaries are as secret as the hidden tests: their names, drawn fresh for each
evaluation and recorded with it, are removed from every line a diagnosis sees (the test
output, in both diagnosis modes), so no generation learns which tests to spare. And the
judge's canary names travel from its verdict to the record."""

from __future__ import annotations

import random
from pathlib import Path

from dgm.benchmarks.task import Verdict
from dgm.jobs.diagnose import choose_target
from dgm.jobs.evaluate import _canaries
from dgm.store import Evaluation

CANARIES = ["test_91c2e07fa35b_ok", "test_91c2e07fa35b_bad"]
OUTPUT = (
    "tests/test_x.py::test_real FAILED\n"
    f"tests/test_x.py::{CANARIES[0]} PASSED\n"
    f"tests/test_x.py::{CANARIES[1]} FAILED\n"
    f"____ {CANARIES[1]} ____\n"
    "E   assert 579 == 580\n"
)


def _target(tmp_path: Path, **kw) -> object:
    log = tmp_path / "logs" / "eval-1"
    log.mkdir(parents=True, exist_ok=True)
    (log / "test_output.txt").write_text(OUTPUT)
    evaluation = Evaluation(
        node_id=0, task_id="repo__1", benchmark="swebench", resolved=False, log_dir="eval-1",
        details={"tests": {"tests/test_x.py::test_real": "FAILED",  # a judge that kept
                           f"tests/test_x.py::{CANARIES[1]}": "FAILED"},  # canaries in
                 "canaries": CANARIES},
    )  # fmt: skip
    for seed in range(50):
        target = choose_target([evaluation], tmp_path / "logs", random.Random(seed), **kw)
        if target.kind == "task":
            return target
    raise AssertionError("no task target drawn")


def test_canary_names_never_reach_a_diagnosis(tmp_path: Path) -> None:
    redacted = _target(tmp_path, hidden_sources=lambda t: ["def test_real():\n    pass\n"])
    assert "test_real" in redacted.test_output  # real test names stay
    dgm_mode = _target(tmp_path, hidden_tests=lambda t: "def test_real(): ...")
    assert "test_real" in dgm_mode.test_output  # DGM's way shows the output...
    for target in (redacted, dgm_mode):
        assert "91c2e07fa35b" not in target.test_output  # ... but never a canary


def test_the_canary_names_go_from_the_verdict_to_the_record() -> None:
    assert _canaries(Verdict(False, details={"canaries": CANARIES})) == CANARIES
    assert _canaries(Verdict(False, details={"canaries": "not a list"})) == []
    assert _canaries(Verdict(True)) == []
