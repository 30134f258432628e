"""kill -9 in the middle of recording leaves a run that opens, with every committed
result intact and no half-written node."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from dgm.report import lineage
from dgm.store import Run

WRITER = textwrap.dedent(
    """
    import sys
    from dgm.store import Evaluation, Run

    run = Run.open(sys.argv[1])
    parent, value = 0, 1
    for i in range(10_000):
        diff = (f"--- a/agent.py\\n+++ b/agent.py\\n@@ -1 +1 @@\\n"
                f"-VALUE = {value}\\n+VALUE = {value + 1}\\n")
        job = f"expand-{i}"
        run.queue_job(job, "expand", {"parent": parent})
        node = run.add_node(parent, diff=diff, origin=f"step {i}", job_id=job)
        print(f"node {node.id}", flush=True)
        for t in range(3):
            ev = run.record_evaluation(Evaluation(
                node_id=node.id, task_id=f"t{t}", benchmark="b", resolved=bool((i + t) % 2),
                job_id=f"eval-{node.id}-{t}", details={"blob": "x" * 2000}))
            print(f"eval {ev.id}", flush=True)
        parent, value = node.id, value + 1
    """
)


def test_sigkill_while_recording_loses_nothing_committed(run: Run, tmp_path: Path) -> None:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    run.close()
    rng = random.Random(1234)
    for trial in range(4):
        proc = subprocess.Popen(
            [sys.executable, str(script), str(run.path)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(Path.cwd())},
        )
        first = proc.stdout.readline()  # wait until it is really recording (slow starts)
        assert first.startswith("node"), first
        time.sleep(rng.random() * 1.5)
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
        out = first + out
        reported_nodes = {int(line.split()[1]) for line in out.splitlines() if line[:4] == "node"}
        reported_evals = {int(line.split()[1]) for line in out.splitlines() if line[:4] == "eval"}
        assert reported_nodes, f"trial {trial}: the writer recorded nothing before the kill"

        reopened = Run.open(run.path)
        nodes = {n.id: n for n in reopened.nodes()}
        # every result the writer saw committed is there
        assert reported_nodes <= set(nodes)
        assert reported_evals <= {e.id for e in reopened.evaluations()}
        # no half-written node: every row has its commit and ref, with the right parent
        refs = reopened.archive.refs()
        for node in nodes.values():
            assert refs[node.id] == node.commit
            if node.parent_id is not None:
                parent_commit = reopened.archive.repo.git.rev_parse(f"{node.commit}^")
                assert parent_commit == nodes[node.parent_id].commit
            assert reopened.job(node.job_id).state == "done" if node.job_id else True
        assert len(refs) == len(nodes)
        for evaluation in reopened.evaluations():
            assert evaluation.details == {"blob": "x" * 2000}
        lineage.build_lineage(reopened)
        reopened.close()
