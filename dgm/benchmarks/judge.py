"""The Polyglot judge: a fresh container gets the workspace, the patch and the hidden tests.

Everything the judge needs is staged on the host into one folder, bound read-only at
/stage of a container that exists for this one verdict (the container's main process is
`judge_prep.py`, which becomes the test command; no container is ever reused). The
hard timeout kills the container; the exit status of the test command is the verdict.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from dgm.benchmarks import polyglot
from dgm.benchmarks.task import Task, Verdict
from dgm.sandbox import Limits, Mount, SandboxSpec, run_command
from dgm.sandbox.spec import ExecResult

PREP_SCRIPT = Path(__file__).with_name("judge_prep.py")
PATCH_FAILED = 91
_TESTS_TOOK = re.compile(r"^>>>>> dgm judge: tests took ([0-9.]+) s$", re.MULTILINE)
_PYTEST_LINE = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+)")


def readable_by_sandbox(root: Path) -> None:
    """Let the sandbox's non-root user read a staged folder (temp dirs are 0700)."""
    for path in [root, *root.rglob("*")]:
        if path.is_symlink():
            continue
        extra = 0o755 if path.is_dir() else 0o644
        path.chmod(path.stat().st_mode | extra)


def judge_polyglot(
    task: Task,
    patch: str,
    limits: Limits,
    backend: str = "docker",
    labels: dict[str, str] | None = None,
) -> tuple[Verdict, str]:
    """Run the hidden tests on `patch`; returns the verdict and the full test output."""
    with tempfile.TemporaryDirectory(prefix="dgm-judge-") as tmp:
        stage = Path(tmp) / "stage"
        stage.mkdir()
        polyglot.prepare_workspace(task, stage / "work")
        polyglot.judge_files(task, stage / "restore")
        (stage / "patch.diff").write_text(patch)
        shutil.copyfile(PREP_SCRIPT, stage / "judge_prep.py")
        pristine = _files(stage / "work") + _files(stage / "restore")
        plan = {
            "command": task.test_command,
            "folder": Path(task.source).name,
            "forbidden": list(polyglot.forbidden_patterns(task.language)),
            "pristine": sorted(set(pristine)),
        }
        (stage / "plan.json").write_text(json.dumps(plan))
        readable_by_sandbox(stage)
        spec = SandboxSpec(
            image=task.judge_image,
            mounts=(Mount(stage, "/stage", read_only=True),),
            limits=limits,
            labels=labels or {},
        )
        result = run_command(spec, ["python3", "/stage/judge_prep.py"], task.time_limit_s, backend)
    return verdict_from(result, task), result.output


def verdict_from(result: ExecResult, task: Task) -> Verdict:
    tests = parse_pytest(result.output) if task.language == "python" else {}
    error = None
    if result.timed_out:
        error = f"the test command was killed at the {task.time_limit_s} s limit"
    elif result.oom_killed:
        error = "the tests ran out of memory"
    elif result.exit_code == PATCH_FAILED and "the patch does not apply" in result.output:
        error = "the patch does not apply to the workspace"
    resolved = result.exit_code == 0 and error is None
    took = _TESTS_TOOK.findall(result.output)
    return Verdict(
        resolved=resolved,
        tests=tests,
        exit_code=result.exit_code,
        timed_out=result.timed_out,
        error=error,
        seconds=result.duration_s,
        test_seconds=float(took[-1]) if took else result.duration_s,
    )


def parse_pytest(output: str) -> dict[str, str]:
    """Per-test status from `pytest -rA`'s short summary."""
    tests: dict[str, str] = {}
    for line in output.splitlines():
        match = _PYTEST_LINE.match(line)
        if match:
            tests[match.group(2)] = match.group(1)
    return tests


def _files(root: Path) -> list[str]:
    out = []
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not (Path(top) == root and d == ".git")]
        out += [str((Path(top) / f).relative_to(root)) for f in files]
    return out
