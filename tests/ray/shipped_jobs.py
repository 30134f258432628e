"""`FakeJobs` whose jobs name the folder they read (`ship_paths`), so the Ray executor
ships the node's code with them: a worker node sees none of the head's files."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

from tests.loop.fake_jobs import FakeJob, FakeJobs


@dataclass(frozen=True)
class ShippedFakeJob(FakeJob):
    ship_paths: ClassVar[tuple[str, ...]] = ("code",)


class ShippedFakeJobs(FakeJobs):
    def _job(self, *args: Any, **kw: Any) -> ShippedFakeJob:
        job = super()._job(*args, **kw)
        return ShippedFakeJob(**{f.name: getattr(job, f.name) for f in fields(job)})
