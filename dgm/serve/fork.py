"""A new run with any node of a run as its seed (`dgm steer RUN fork NODE`, the page's
"new run from here"). It reads the source run only; the new run is a folder of its own,
started by `dgm resume` like any run."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from dgm.errors import DgmError
from dgm.serve.runs import RunView
from dgm.store import Run


def fork_run(source: Path, node_id: int, dest: Path | None, who: str) -> Path:
    """Create a run at `dest` (default: beside the source, `<name>-from-<node>`) whose
    seed is node `node_id`'s code, with the source's configuration."""
    view = RunView(Path(source).name, Path(source).resolve())
    run = view.fresh()
    node = run.node(node_id)
    dest = Path(dest) if dest else view.path.parent / f"{view.path.name}-from-{node.id}"
    if dest.exists() and any(dest.iterdir()):
        raise DgmError(f"{dest} already exists and is not empty", "choose another folder (--to)")
    config = run.config.with_overrides({"name": dest.name})
    with tempfile.TemporaryDirectory(prefix="dgm-fork-") as tmp:
        seed = run.archive.materialize(node.commit, Path(tmp) / "seed")
        with Run.create(dest, config, seed) as new:
            new.event("forked", source=str(view.path), node=node.id, commit=node.commit, who=who)
    run.db.close()
    return dest


def start_run(run_dir: Path) -> int:
    """Start `dgm resume RUN_DIR` in the background (its output in logs/serve-start.log);
    the process id."""
    log = open(Path(run_dir) / "logs" / "serve-start.log", "ab")  # noqa: SIM115 (child keeps it)
    proc = subprocess.Popen([sys.executable, "-m", "dgm", "resume", str(run_dir)], stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    log.close()
    return proc.pid
