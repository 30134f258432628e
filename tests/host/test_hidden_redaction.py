"""Hidden tests never reach a prompt: the diagnosis sees test names and redacted, cut
output (dgm/jobs/hidden_redaction.py). Unit level; the Docker test prints real tests."""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path

from dgm.jobs.diagnose import choose_target, diagnosis_request
from dgm.jobs.hidden_redaction import HiddenSource, redact, results_for_diagnosis
from dgm.store import Evaluation

CANARY = "CANARY_7f3a_expected_value = compute_secret_answer(41) + 1"
HIDDEN = f"""import unittest
from solution import add


class AddTest(unittest.TestCase):
    def test_adds_small_numbers(self):
        self.assertEqual(add(1, 2), 3)

    def test_canary(self):
        {CANARY}
        self.assertEqual(add(20, 22), 42)
"""


def test_copied_reindented_and_fragmented_lines_are_removed() -> None:
    hidden = HiddenSource([HIDDEN])
    output = "\n".join([
        "test_adds_small_numbers (test_add.AddTest) ... FAIL",
        "AssertionError: 4 != 3",
        ">       self.assertEqual(add(1, 2), 3)",  # pytest shows the failing source line
        CANARY,  # printed verbatim by the solution
        "    " + CANARY.replace(" ", "  "),  # re-spaced
        CANARY[:30],  # a fragment of a line
        "print: " + base64.b64encode(HIDDEN.encode()).decode()[:200],  # disguised
        "Ran 2 tests in 0.001s",
    ])  # fmt: skip
    text = redact(output, hidden)
    assert "CANARY_7f3a" not in text and "compute_secret" not in text
    assert "assertEqual(add(1, 2), 3)" not in text
    assert base64.b64encode(HIDDEN.encode()).decode()[:40] not in text
    assert "AssertionError: 4 != 3" in text and "Ran 2 tests" in text
    assert "test_adds_small_numbers (test_add.AddTest) ... FAIL" in text


def test_the_judges_mutated_copies_of_hidden_lines_are_removed_too() -> None:
    """The judge adds copies of real tests with another expected value: output showing
    them would teach the next generation how a copy differs from the real test."""
    hidden = HiddenSource([HIDDEN, "  expect(encode([0x81, 0])).toEqual([129]);\n"])
    output = "\n".join([
        ">       self.assertEqual(add(1, 2), 7)",  # a must-fail copy, as pytest shows it
        "> 6 |   expect(encode([0x81, 0])).toEqual([130]);",  # jest's code frame
        "AssertionError: 3 != 7",
        "Expected: [130]",
    ])  # fmt: skip
    text = redact(output, hidden)
    assert "add(1, 2), 7" not in text and "toEqual([130])" not in text
    assert "AssertionError: 3 != 7" in text and "Expected: [130]" in text


def test_report_has_names_and_a_cut_output_or_names_only_without_the_source() -> None:
    tests = {"test_adds_small_numbers": "failed", "test_canary": "passed"}
    output = CANARY + "\n" + "x" * 10_000 + "\nAssertionError: 4 != 3\n"
    report = results_for_diagnosis(tests, output, HiddenSource([HIDDEN]), limit=1_000)
    assert "1 of 2 tests passed." in report and "Failed: test_adds_small_numbers" in report
    assert "CANARY" not in report and len(report) < 1_400
    blind = results_for_diagnosis(tests, output, None)
    assert "CANARY" not in blind and "withheld" in blind and "test_canary" not in blind


def _failed_eval(tmp_path: Path, output: str) -> Evaluation:
    log = tmp_path / "logs" / "eval-1"
    log.mkdir(parents=True)
    (log / "test_output.txt").write_text(output)
    (log / "trajectory.json").write_text(json.dumps({
        "exit_status": "finished",
        "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": CANARY}],
    }))  # fmt: skip
    return Evaluation(node_id=0, task_id="python__add", benchmark="polyglot", resolved=False,
                      log_dir="eval-1", details={"tests": {"test_canary": "failed"}})  # fmt: skip


def test_diagnosis_prompt_never_holds_hidden_lines(tmp_path: Path) -> None:
    evaluation = _failed_eval(tmp_path, f"{HIDDEN}\nFAILED test_canary\n")
    rng = random.Random(1)
    targets = [
        choose_target([evaluation], tmp_path / "logs", rng, hidden_sources=lambda t: [HIDDEN])
        for _ in range(8)
    ]
    task_targets = [t for t in targets if t.kind == "task"]
    assert task_targets
    for target in task_targets:
        agent = tmp_path / "agent"
        agent.mkdir(exist_ok=True)
        (agent / "run.py").write_text("print('agent')\n")
        prompt = json.dumps(diagnosis_request(target, agent))
        assert "CANARY_7f3a" not in prompt and "assertEqual(add(20, 22), 42)" not in prompt
        assert "test_canary" in prompt and "FAILED test_canary" in prompt


def test_without_a_hidden_source_the_output_is_withheld(tmp_path: Path) -> None:
    evaluation = _failed_eval(tmp_path, f"{HIDDEN}\nFAILED\n")
    target = choose_target([evaluation], tmp_path / "logs", random.Random(3))
    while target.kind != "task":
        target = choose_target([evaluation], tmp_path / "logs", random.Random())
    assert "CANARY" not in (target.test_output or "") and "withheld" in target.test_output


def test_dgm_mode_shows_tests_only_when_enabled(tmp_path: Path) -> None:
    evaluation = _failed_eval(tmp_path, f"{HIDDEN}\n")
    target = choose_target([evaluation], tmp_path / "logs", random.Random(3),
                           hidden_tests=lambda t: HIDDEN)  # fmt: skip
    while target.kind != "task":
        target = choose_target([evaluation], tmp_path / "logs", random.Random(),
                               hidden_tests=lambda t: HIDDEN)  # fmt: skip
    assert CANARY in target.hidden_tests and CANARY in target.test_output
