"""SWE-bench-format tasks, graded with the `swebench` package (5.x API).

A 5.x instance names its image, its eval script and its log parser. The agent runs in
a container of that image with the repository (/testbed, at the base commit) copied
into its /work; the judge is a fresh container of the same image that copies /testbed
into its own /work, applies the patch, and runs the instance's eval script there
(`/testbed` rewritten to `/work`: dgm's containers have a read-only root file system).
The log is graded by swebench's `get_logs_eval`, `get_eval_tests_report` and
`get_resolution_status`, exactly as `swebench.harness` grades it.

Sources: `swebench` alone is dgm's own suite (eval/swe-dgm-suite); a folder laid out
like ../shared/swe-bench (instances.jsonl, repos/, offline_env.json: images built by
`dgm sandbox build swebench --data DIR`); `swebench:FILE` a JSON or JSONL file of
instances; `swebench:NAME` a Hugging Face dataset (needs network). The judge is
`judge.py`.
"""

from __future__ import annotations

import difflib
import json
from functools import cached_property
from pathlib import Path
from typing import Any

from dgm.benchmarks import subsets
from dgm.benchmarks.swebench import suite_image
from dgm.benchmarks.swebench.data import SweData, is_data_dir
from dgm.benchmarks.swebench.judge import make_spec
from dgm.benchmarks.task import Task
from dgm.errors import DgmError, NotFoundError

__all__ = ["SweTasks", "make_spec", "read_instances"]

NAME = "swebench"
REPO_DIR = "/testbed"
SUBSETS = {"small": "swe_bench_small.json", "medium": "swe_bench_medium.json",
           "big": "swe_bench_big.json"}  # fmt: skip
"""Named subsets of SWE-bench Verified (DGM's id lists, in eval/subsets)."""
OFFLINE_SUBSETS = {"small": "swe_offline_small.json", "medium": "swe_offline_medium.json",
                   "ci": "swe_ci.txt", "dry-run": "swe_dry_run.txt"}  # fmt: skip
"""Real instances that run offline (a folder like ../shared/swe-bench): their own lists."""
REQUIRED = (
    "instance_id", "repo", "base_commit", "problem_statement", "patch", "test_patch",
    "FAIL_TO_PASS", "PASS_TO_PASS", "image", "eval_script", "log_parser",
)  # fmt: skip


def read_instances(source: str) -> list[dict[str, Any]]:
    path = Path(source)
    if is_data_dir(path):
        return list(SweData(path).instances.values())
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


class SweTasks:
    name = NAME

    def __init__(self, source: str | None = None, test_timeout_s: int = 300) -> None:
        self.source = source or str(suite_image.instances_file())
        self.test_timeout_s = test_timeout_s

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
        image = suite_image.image_for(str(instance["image"]))
        if is_data_dir(self.source):
            from dgm.benchmarks.swebench import images as swebench_images

            image = swebench_images.image_for(self._data, task_id)
        return make_task(instance, image, self.source, self.test_timeout_s)

    @cached_property
    def _data(self) -> SweData:
        return SweData(self.source)

    def tasks(self, subset: str) -> list[Task]:
        offline = is_data_dir(self.source)
        kind, lists = ("swebench-offline", OFFLINE_SUBSETS) if offline else (NAME, SUBSETS)
        ids = subsets.resolve(subset, kind, self.task_ids(), self.languages(), lists)
        return [self.task(i) for i in ids]


def make_task(instance: dict[str, Any], image: str, source: str, test_timeout_s: int) -> Task:
    return Task(
        id=instance["instance_id"],
        benchmark=NAME,
        language=str(instance.get("language", "python")),
        problem_statement=instance["problem_statement"],
        image=image,
        judge_image=image,
        test_command=str(instance["eval_script"]),
        test_timeout_s=test_timeout_s,
        source=source,
        workspace_in_image=REPO_DIR,
        base_commit=instance["base_commit"],
        meta={k: instance[k] for k in (*REQUIRED, "version") if k in instance}
        | {"eval_type": instance.get("eval_type") or "pass_and_fail"},
    )
