"""Run (or resume) a loop with fake jobs in this process: `python driver.py RUN_DIR`."""

import sys

from dgm.loop.meta_loop import MetaLoop
from dgm.store import Run
from tests.loop.fake_jobs import FakeJobs

if __name__ == "__main__":
    run = Run.open(sys.argv[1])
    summary = MetaLoop(run, jobs=FakeJobs(run, delay=(0.05, 0.25))).run()
    print(summary.stop_reason, flush=True)
