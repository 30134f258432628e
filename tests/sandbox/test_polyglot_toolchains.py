"""Reference solutions pass their (un-skipped) tests offline in the toolchain images.

The full sweep of all ~225 exercises is perf/polyglot_references.py; here: all
34 python exercises (in one container) plus one exercise per other language.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from dgm.benchmarks.polyglot import toolchains as tc
from dgm.sandbox import ResourceLimits, SandboxSpec, open_sandbox

pytestmark = pytest.mark.docker


def _workspace(polyglot_dir: Path, language: str, name: str, dest: Path, reference=True) -> Path:
    exercise = polyglot_dir / language / "exercises" / "practice" / name
    workspace = tc.copy_exercise(exercise, dest / name)
    if reference:
        tc.install_reference(exercise, workspace)
    tc.unskip_tests(language, workspace, tc.exercise_files(exercise).test)
    return workspace


def test_all_python_references_pass(runtime_image, polyglot_dir, tmp_path) -> None:
    root = polyglot_dir / "python" / "exercises" / "practice"
    names = sorted(p.name for p in root.iterdir() if p.is_dir())
    for name in names:
        _workspace(polyglot_dir, "python", name, tmp_path / "all")
    command = tc.toolchain("python").test_command
    script = f'for d in */; do (cd "$d" && {command} >/dev/null 2>&1) && echo "PASS $d"; done'
    with open_sandbox(SandboxSpec(image="runtime", limits=ResourceLimits(memory="2g"))) as box:
        for workspace in sorted((tmp_path / "all").iterdir()):
            box.copy_in(workspace, "/work")
        result = box.exec(["/bin/sh", "-c", script], timeout=600)
    passed = re.findall(r"^PASS (.+)/$", result.output, re.MULTILINE)
    assert len(names) == 34
    assert sorted(passed) == names, result.output


def test_a_stub_fails_its_tests(runtime_image, polyglot_dir, tmp_path) -> None:
    workspace = _workspace(polyglot_dir, "python", "bowling", tmp_path, reference=False)
    result = tc.run_tests(workspace, "python", timeout=120)
    assert result.exit_code != 0 and "failed" in result.output


@pytest.mark.parametrize(
    ("language", "exercise"),
    [
        ("go", "matrix"),
        ("rust", "gigasecond"),  # needs the `time` crate from Debian
        ("cpp", "space-age"),
        ("java", "affine-cipher"),
        ("javascript", "binary"),
    ],
)
def test_a_reference_per_language_passes_all_its_tests(
    polyglot_image, polyglot_dir, tmp_path, language, exercise
) -> None:
    workspace = _workspace(polyglot_dir, language, exercise, tmp_path)
    files = tc.exercise_files(polyglot_dir / language / "exercises" / "practice" / exercise)
    result = tc.run_tests(workspace, language, timeout=600, test_files=files.test)
    assert result.ok, result.output[-3000:]
    if language == "java":  # every @Test ran: @Disabled was removed
        expected = sum((workspace / name).read_text().count("@Test") for name in files.test)
        assert f"{expected} tests successful" in result.output
    if language == "rust":  # #[ignore]d tests ran too
        assert re.search(r"test result: ok\. \d+ passed; 0 failed; 0 ignored", result.output)


def test_unskip_rules_cover_each_tracks_markers(tmp_path) -> None:
    samples = {
        "java": ('@Disabled("Remove to run test")\n@Test\n', "\n@Test\n"),
        "javascript": ("xtest('a', () => {});\nxit('b');\n", "test('a', () => {});\nit('b');\n"),
    }
    for language, (before, after) in samples.items():
        (tmp_path / "t").write_text(before)
        tc.unskip_tests(language, tmp_path, ["t"])
        assert (tmp_path / "t").read_text() == after
    shutil.rmtree(tmp_path)
