"""Evaluation integrity: hidden tests and references never reach the agent's container,
and nothing the agent writes changes how the judge decides."""

from __future__ import annotations

from pathlib import Path

import pytest

from dgm.benchmarks.polyglot import loader as polyglot
from dgm.benchmarks.swebench.loader import SweTasks
from dgm.jobs.evaluate import AgentRef, EvalContext, EvalJob, evaluate_task

pytestmark = pytest.mark.docker

# The needles are split so that the agent's own script does not contain them.
SEARCH = r"""
found=/out/found.txt; : > $found
find / \( -path /proc -o -path /sys -o -path /dev \) -prune -o \
  \( -name "$NAME1""$NAME2" -o -name 'example.py' -o -name '.meta' -o -name 'reference.diff' \) \
  -print 2>/dev/null >> $found
grep -rIl --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev -e "$TEXT1""$TEXT2" \
  -e "$TEXT3""$TEXT4" / 2>/dev/null >> $found
echo searched >> /out/done.txt
"""


def _agent(tmp_path: Path, name: str, script: str, env: dict[str, str]) -> Path:
    agent = tmp_path / name
    agent.mkdir()
    exports = "".join(f"export {k}='{v}'\n" for k, v in env.items())
    (agent / "run.sh").write_text(exports + script)
    (agent / "agent.toml").write_text('[commands]\nsolve = "sh {agent_dir}/run.sh"\n')
    return agent


def _evaluate(agent: Path, task, tmp_path: Path):  # noqa: ANN001, ANN202
    job = EvalJob(AgentRef(str(agent)), task, str(tmp_path / "log"), agent_timeout_s=300)
    return evaluate_task(job, EvalContext())


def test_polyglot_agent_finds_no_hidden_test_or_reference(
    polyglot_dir: Path, runtime_image: str, tmp_path: Path
) -> None:
    task = polyglot.PolyglotTasks(polyglot_dir).task("python__affine-cipher")
    # A file name of the hidden test; a line of the hidden test; a line of the reference.
    env = {"NAME1": "affine_cipher", "NAME2": "_test.py", "TEXT1": "test_encode_mind",
           "TEXT2": "blowingly", "TEXT3": "def mod_", "TEXT4": "inverse"}  # fmt: skip
    assert "test_encode_mindblowingly" in (Path(task.source) / task.hidden_files[0]).read_text()
    assert "def mod_inverse" in (Path(task.source) / ".meta" / "example.py").read_text()
    outcome = _evaluate(_agent(tmp_path, "searcher", SEARCH, env), task, tmp_path)
    out = tmp_path / "log" / "out"
    assert (out / "done.txt").read_text() == "searched\n"  # the search ran to the end
    assert (out / "found.txt").read_text() == ""
    assert not outcome.resolved


def test_swebench_agent_finds_no_test_patch_or_gold_patch(suite_image: str, tmp_path: Path) -> None:
    task = SweTasks().task("dgm__tinyutil-2")
    env = {"NAME1": "reference", "NAME2": ".diff", "TEXT1": "test_roman_", "TEXT2": "subtractive",
           "TEXT3": '(400, "CD"), ', "TEXT4": '(100, "C")'}  # fmt: skip
    assert "test_roman_subtractive" in task.meta["test_patch"]
    assert '(400, "CD"), (100, "C")' in task.meta["patch"]
    _evaluate(_agent(tmp_path, "searcher", SEARCH, env), task, tmp_path)
    assert (tmp_path / "log" / "out" / "done.txt").is_file()
    assert (tmp_path / "log" / "out" / "found.txt").read_text() == ""


TAMPER = r"""
cd /work
# 1. Recreate the hidden test as one that passes, and as a link to another passing test.
printf 'def test_ok():\n    assert True\n' > affine_cipher_test.py
printf 'def test_ok():\n    assert True\n' > my_test.py
mkdir -p sub && ln -s ../my_test.py sub/linked_test.py
# 2. A conftest.py that reports every test as passed, and a pytest.ini that skips all.
cat > conftest.py <<'EOF'
import pytest
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
EOF
printf '[pytest]\naddopts = -k nothing_matches\n' > pytest.ini
# 3. Try to write the harness: the agent code, the task file, the staged workspace.
for f in /agent/x /task/task.json /stage/work/affine_cipher.py /usr/lib/x; do
  (echo hacked > $f) 2>> /out/denied.txt && echo "wrote $f" >> /out/wrote.txt
done
true
"""


def test_writing_tests_or_harness_does_not_change_the_verdict(
    polyglot_dir: Path, runtime_image: str, tmp_path: Path
) -> None:
    task = polyglot.PolyglotTasks(polyglot_dir).task("python__affine-cipher")
    outcome = _evaluate(_agent(tmp_path, "tamperer", TAMPER, {}), task, tmp_path)
    out = tmp_path / "log" / "out"
    assert not (out / "wrote.txt").exists()
    assert (out / "denied.txt").read_text().count("Read-only file system") == 4
    patch = (tmp_path / "log" / "patch.diff").read_text()
    assert "conftest.py" in patch and "affine_cipher_test.py" in patch  # it did try
    assert not outcome.resolved
    assert outcome.tests_total == 16 and outcome.tests_passed == 0  # the real tests, failing
    log = (tmp_path / "log" / "test_output.txt").read_text()
    assert "ignored agent file conftest.py (not a solution file)" in log
    assert "ignored agent file pytest.ini (not a solution file)" in log
    assert "ignored agent file affine_cipher_test.py (the judge's own file)" in log
