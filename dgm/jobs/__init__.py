"""Expand and eval jobs: JSON data in, JSON data out.

`run_job(job)` runs either kind anywhere (a thread, a worker process); `job_to_dict` /
`job_from_dict` carry a job as JSON, its kind named in it.
"""

from __future__ import annotations

from typing import Any


def run_job(job: Any) -> Any:
    """An `EvalJob` -> `Evaluation` (the store's record), an `ExpandJob` -> `ExpandResult`."""
    from dgm.jobs.evaluate import EvalJob, evaluate_task
    from dgm.jobs.expand import ExpandJob, run_expand

    if isinstance(job, EvalJob):
        return evaluate_task(job)
    if isinstance(job, ExpandJob):
        return run_expand(job)
    raise TypeError(f"not a job: {job!r}")


def job_to_dict(job: Any) -> dict[str, Any]:
    from dgm.jobs.evaluate import EvalJob

    return {"kind": "eval" if isinstance(job, EvalJob) else "expand", **job.to_dict()}


def job_from_dict(data: dict[str, Any]) -> Any:
    from dgm.jobs.evaluate import EvalJob
    from dgm.jobs.expand import ExpandJob

    fields = {k: v for k, v in data.items() if k != "kind"}
    return (EvalJob if data["kind"] == "eval" else ExpandJob).from_dict(fields)
