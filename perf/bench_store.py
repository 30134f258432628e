"""Store benchmarks (issue 2): depth-independence, 10k-node tree, bytes per node.

    python perf/bench_store.py

Prints, side by side: adding a node and materialising a node at depth 1 vs depth 100
(the baseline is the same operation at depth 1: a patch-chain replay like DGM's grows
linearly); `dgm tree` and lineage build on a synthetic 10,000-node run; bytes on disk
per node after git packs, beside the diff size and the codebase size.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dgm.commands.inspect import tree as tree_command
from dgm.config import RunConfig
from dgm.report import lineage
from dgm.store import Run


def _timed(fn, repeat: int = 15) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def _append_diff(path: str, i: int) -> str:
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -0,0 +1 @@\n+# step {i}\n"
        if i == 0
        else f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -{i} +{i},2 @@\n # step {i - 1}\n+# step {i}\n"
    )


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def depth_independence(work: Path) -> None:
    seed = work / "seed"
    # A realistic codebase: dgm's own source (~0.2 MB) with a manifest.
    shutil.copytree(
        Path(lineage.__file__).parent, seed, ignore=shutil.ignore_patterns("__pycache__")
    )
    (seed / "agent.toml").write_text('[agent]\nname = "bench"\n')
    (seed / "NOTES.md").write_text("")
    run = Run.create(work / "chain", RunConfig(), seed)
    git_dir = run.path / "archive.git"
    run.archive.pack()
    seed_only = _du(git_dir)
    chain = [0]
    for i in range(100):
        chain.append(run.add_node(chain[-1], diff=_append_diff("NOTES.md", i), origin=f"{i}").id)
    counter = iter(range(10**6))

    def materialize(node: int) -> None:
        dest = work / f"m{next(counter)}"
        run.checkout(node, dest)
        shutil.rmtree(dest)

    def add_child(node: int) -> None:
        run.add_node(node, diff="", origin="bench", status="rejected")

    m1, m100 = _timed(lambda: materialize(chain[1])), _timed(lambda: materialize(chain[100]))
    a1, a100 = _timed(lambda: add_child(chain[1])), _timed(lambda: add_child(chain[100]))
    print("depth independence (median of 15)")
    print(
        f"  materialise node   depth 1: {m1 * 1e3:7.1f} ms   depth 100: {m100 * 1e3:7.1f} ms"
        f"   ratio {m100 / m1:.2f}x (target <= 2x)"
    )
    print(
        f"  add child node     depth 1: {a1 * 1e3:7.1f} ms   depth 100: {a100 * 1e3:7.1f} ms"
        f"   ratio {a100 / a1:.2f}x (target <= 2x)"
    )

    # bytes per node: pack the archive, compare with the codebase and the diffs
    run.archive.pack()
    nodes = len(run.nodes())
    per_node = (_du(git_dir) - seed_only) / (nodes - 1)
    codebase = sum(f.stat().st_size for f in seed.rglob("*") if f.is_file())
    diff_bytes = statistics.mean(len(run.diff(n)) for n in chain[1:])
    print("bytes on disk (archive.git after git gc)")
    print(
        f"  {per_node:8.0f} B per added node over {nodes - 1} nodes; codebase {codebase} B, "
        f"mean diff {diff_bytes:.0f} B (a full copy per node would be {codebase} B)"
    )
    run.close()


def big_tree(work: Path, n: int = 10_000) -> None:
    seed = work / "seed-small"
    seed.mkdir()
    (seed / "agent.toml").write_text('[agent]\nname = "x"\n')
    run = Run.create(work / "big", RunConfig(), seed)
    commit = run.node(0).commit
    import random

    rng = random.Random(0)
    now = time.time()
    with run.db.transaction() as conn:
        conn.executemany(
            "INSERT INTO nodes(id, parent_id, commit_sha, depth, created_at, status, origin,"
            " meta) VALUES (?,?,?,?,?,'active','synthetic','{}')",
            [(i, rng.randrange(max(0, i - 50), i), commit, 0, now) for i in range(1, n)],
        )
        conn.executemany(
            "INSERT INTO evaluations(node_id, task_id, benchmark, resolved, created_at)"
            " VALUES (?,?,?,?,?)",
            [(i % n, f"t{i % 50}", "b", rng.random() < 0.4, now) for i in range(5 * n)],
        )
    run.archive.set_refs({i: commit for i in range(n)})
    run.close()

    start = time.perf_counter()
    with Run.open(work / "big") as reopened:
        graph = lineage.build_lineage(reopened)
    build = time.perf_counter() - start
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "dgm", "tree", str(work / "big")], capture_output=True, text=True
    )
    cli = time.perf_counter() - start
    start = time.perf_counter()
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        tree_command(work / "big")
    in_process = time.perf_counter() - start
    assert proc.returncode == 0 and graph.number_of_nodes() == n
    print(f"{n}-node run, {5 * n} evaluations")
    print(
        f"  build lineage graph: {build:.2f} s   `dgm tree` in process: {in_process:.2f} s   "
        f"`dgm tree` as a command (incl. interpreter start): {cli:.2f} s   (target < 2 s)"
    )


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="dgm-bench-store-"))
    try:
        depth_independence(work)
        big_tree(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
