"""SWE-bench-format tasks, graded with the `swebench` package (5.x API).

A 5.x instance names its image, its eval script and its log parser. The agent runs in
a container of that image with the repository (/testbed, at the base commit) copied
into its /work; the judge is a fresh container of the same image that copies /testbed
into its own /work, applies the patch, and runs the instance's eval script there
(`/testbed` rewritten to `/work`: dgm's containers have a read-only root file system).
The log is graded by swebench's `get_logs_eval`, `get_eval_tests_report` and
`get_resolution_status`, exactly as `swebench.harness` grades it.

Sources: `swebench` alone is dgm's own suite (eval/swe-dgm-suite); `swebench:FILE` a
JSON or JSONL file of instances; `swebench:NAME` a Hugging Face dataset (needs network).
"""

from __future__ import annotations

import difflib
import json
import tempfile
from functools import cached_property
from pathlib import Path
from typing import Any

from dgm.benchmarks import subsets, suite_image
from dgm.benchmarks.judge import readable_by_sandbox
from dgm.benchmarks.task import Task, Verdict
from dgm.errors import DgmError, NotFoundError
from dgm.sandbox import Limits, Mount, SandboxSpec, run_command

NAME = "swebench"
REPO_DIR = "/testbed"
REQUIRED = (
    "instance_id", "repo", "base_commit", "problem_statement", "patch", "test_patch",
    "FAIL_TO_PASS", "PASS_TO_PASS", "image", "eval_script", "log_parser",
)  # fmt: skip
_APPLY_FAILED = ">>>>> Patch Apply Failed"
# The patch is applied the way swebench.harness applies it: the first that works.
_APPLY = (
    "git apply --verbose /stage/patch.diff || git apply --verbose --3way /stage/patch.diff"
    " || patch --batch --forward --fuzz=5 -p1 -i /stage/patch.diff"
)


def read_instances(source: str) -> list[dict[str, Any]]:
    path = Path(source)
    if path.suffix in (".json", ".jsonl") or path.exists():
        if not path.is_file():
            raise NotFoundError(f"SWE-bench instance file {path} does not exist", "check the path")
        text = path.read_text()
        try:
            if path.suffix == ".jsonl":
                return [json.loads(line) for line in text.splitlines() if line.strip()]
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DgmError(f"{path} is not valid JSON: {exc}", "one instance per line") from None
        return data if isinstance(data, list) else [data]
    try:
        from swebench.harness.utils import load_swebench_dataset
    except ImportError:
        raise DgmError(
            "the swebench package is not installed", "pip install 'dgm[swebench]'"
        ) from None
    try:
        return [dict(i) for i in load_swebench_dataset(source)]
    except Exception as exc:  # noqa: BLE001 - datasets raises many kinds
        raise DgmError(
            f"cannot load SWE-bench dataset {source!r}: {exc}",
            "give a local JSON/JSONL file, or check the network",
        ) from None


def check_instance(instance: dict[str, Any], where: str) -> None:
    missing = [f for f in REQUIRED if f not in instance]
    if missing:
        iid = instance.get("instance_id", "?")
        raise DgmError(
            f"SWE-bench instance {iid} in {where} lacks {', '.join(missing)}",
            "dgm grades with swebench 5.x: an instance names its image, eval_script and log_parser",
        )


class SweBenchmark:
    name = NAME

    def __init__(self, source: str | None = None, time_limit_s: int = 300) -> None:
        self.source = source or str(suite_image.INSTANCES)
        self.time_limit_s = time_limit_s

    @cached_property
    def _instances(self) -> dict[str, dict[str, Any]]:
        found = {}
        for instance in read_instances(self.source):
            check_instance(instance, self.source)
            found[instance["instance_id"]] = instance
        return found

    def task_ids(self) -> list[str]:
        return list(self._instances)

    def languages(self) -> list[str]:
        return sorted({str(i.get("language", "python")) for i in self._instances.values()})

    def task(self, task_id: str) -> Task:
        instance = self._instances.get(task_id)
        if instance is None:
            near = difflib.get_close_matches(task_id, list(self._instances), n=1)
            raise NotFoundError(
                f"unknown SWE-bench instance {task_id!r} in {self.source}",
                f"did you mean {near[0]}?" if near else "see `dgm bench list swebench`",
            )
        return make_task(instance, self.source, self.time_limit_s)

    def tasks(self, subset: str) -> list[Task]:
        ids = subsets.resolve(subset, NAME, self.task_ids(), self.languages())
        return [self.task(i) for i in ids]


def make_task(instance: dict[str, Any], source: str, time_limit_s: int) -> Task:
    image = suite_image.image_for(str(instance["image"]))
    return Task(
        id=instance["instance_id"],
        benchmark=NAME,
        language=str(instance.get("language", "python")),
        problem_statement=instance["problem_statement"],
        image=image,
        judge_image=image,
        test_command=str(instance["eval_script"]),
        time_limit_s=time_limit_s,
        source=source,
        workspace_in_image=REPO_DIR,
        base_commit=instance["base_commit"],
        meta={k: instance[k] for k in (*REQUIRED, "version") if k in instance}
        | {"eval_type": instance.get("eval_type") or "pass_and_fail"},
    )


def make_spec(task: Task) -> Any:
    """swebench's TestSpec for a task (its eval script records the test exit code)."""
    from swebench.harness.utils import make_test_spec

    meta = task.meta
    return make_test_spec({**meta, "image": task.image, "version": meta.get("version", "")})


def judge_swebench(
    task: Task, patch: str, limits: Limits, backend: str = "docker",
    labels: dict[str, str] | None = None,
) -> tuple[Verdict, str]:  # fmt: skip
    spec = make_spec(task)
    with tempfile.TemporaryDirectory(prefix="dgm-judge-") as tmp:
        stage = Path(tmp)
        (stage / "patch.diff").write_text(patch)
        (stage / "eval.sh").write_text(spec.eval_script.replace(REPO_DIR, "/work"))
        script = (
            f"cp -a {REPO_DIR}/. /work/ && cd /work || exit 90\n"
            + (f"{{ {_APPLY}; }} || {{ echo '{_APPLY_FAILED}'; exit 1; }}\n" if patch else "")
            + "echo '>>>>> Applied Patch'\n/bin/bash /stage/eval.sh\n"
        )  # fmt: skip
        (stage / "judge.sh").write_text(script)
        readable_by_sandbox(stage)
        sandbox = SandboxSpec(
            image=task.judge_image,
            mounts=(Mount(stage, "/stage", read_only=True),),
            limits=limits,
            labels=labels or {},
        )
        result = run_command(sandbox, ["/bin/bash", "/stage/judge.sh"], task.time_limit_s, backend)
        log = result.output
        if result.timed_out:
            log += "\n>>>>> Tests Timed Out\n"
        log_path = stage / "test_output.txt"
        log_path.write_text(log)
        verdict = grade(task, spec, log_path)
    error = verdict.error
    if result.timed_out:
        error = f"the eval script was killed at the {task.time_limit_s} s limit"
    return (
        Verdict(
            resolved=verdict.resolved and not result.timed_out,
            tests=verdict.tests,
            exit_code=result.exit_code,
            timed_out=result.timed_out,
            error=error,
            seconds=result.duration_s,
            test_seconds=result.duration_s,
            details=verdict.details,
        ),
        log,
    )


def grade(task: Task, spec: Any, log_path: Path) -> Verdict:
    """swebench's grading of a test log: status map, F2P/P2P report, resolution."""
    from swebench.harness.constants import ResolvedStatus
    from swebench.harness.grading import (
        EvalType,
        get_eval_tests_report,
        get_logs_eval,
        get_resolution_status,
    )

    status_map, found = get_logs_eval(spec, str(log_path))
    if not found:
        return Verdict(False, error="no test results in the log (see test_output.txt)")
    gold = {"FAIL_TO_PASS": spec.FAIL_TO_PASS, "PASS_TO_PASS": spec.PASS_TO_PASS}
    report = get_eval_tests_report(status_map, gold, eval_type=EvalType(spec.eval_type))
    status = get_resolution_status(report)
    return Verdict(
        resolved=status == ResolvedStatus.FULL.value,
        tests=dict(status_map),
        details={"resolution": status, "report": report},
    )
