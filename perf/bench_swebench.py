"""Real SWE-bench offline (issue 18): build the images, oracle and null through the harness.

    python perf/bench_swebench.py [--data ../shared/swe-bench] [--subset full] [--workers 2]

1. `dgm sandbox build swebench` for the subset (timed; a second run shows the reuse time),
   then the images' sizes per layer: the shared python layer, each environment, and what
   each instance adds on top of its environment.
2. The oracle (gold patch) and the null agent (no patch) on every instance, through the
   real harness: agent container, diff, fresh judge container with the official eval script.
   Expected: oracle resolves all, null none. Printed beside that baseline.
3. Per-task harness overhead: a job's wall time minus the agent's and the tests' own time
   (the judge's test time includes the eval script's reinstall of the package).
4. The seed agent's file tools (view, search_files as the dry run adds it, bash grep) inside
   the largest instance image (by repository size), run by the image's python3.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from dgm.benchmarks.swebench import images as swebench_images
from dgm.benchmarks.swebench.data import SweData
from dgm.benchmarks.swebench.loader import SweTasks
from dgm.benchmarks.task_images import pin_images
from dgm.evaluation.evaluate_agent import evaluate_agent
from dgm.jobs.evaluate import AgentRef
from dgm.paths import seed_agent_dir
from dgm.sandbox import Mount, SandboxSpec, run_command
from dgm.sandbox.docker_client import docker_client

TOOLS = """
import sys, time, types
sys.path.insert(0, "/agent")
from coder.tools import base, bash, view
m = types.ModuleType("coder.tools.search_files"); m.__package__ = "coder.tools"
exec(open("/tool/search_tool.py").read(), m.__dict__)
ctx = base.ToolContext("/testbed")
big = max((p for p in __import__("glob").glob("/testbed/**/*.py", recursive=True)),
          key=lambda p: __import__("os").path.getsize(p))
for name, fn, args in [("view .", view.run, {"path": "."}), ("view largest file", view.run,
        {"path": big}), ("search_files hit", m.run, {"pattern": "def __init__"}),
        ("search_files miss", m.run, {"pattern": "zz_no_such_text_qq"}),
        ("bash grep -rn", bash.run, {"command": "grep -rn zz_no_such_text_qq . | head"})]:
    t = time.perf_counter(); fn(args, ctx); print(f"    {name:<18} {time.perf_counter() - t:.2f} s")
"""


def _mb(tag: str) -> float:
    return docker_client().images.get(tag).attrs["Size"] / 1e6


def sizes(data: SweData, ids: list[str]) -> None:
    py = swebench_images.python_tag()
    print(f"python layer  {py}: {_mb(py):.0f} MB")
    envs: dict[str, str] = {}
    for iid in ids:
        inst = data.instance_env(iid)
        envs.setdefault(swebench_images.env_tag(inst.env), inst.env.slug)
    for tag, slug in envs.items():
        print(f"environment   {slug}: {_mb(tag):.0f} MB (+{_mb(tag) - _mb(py):.0f} MB)")
    adds = []
    for iid in ids:
        inst = data.instance_env(iid)
        tag = swebench_images.image_for(data, iid)
        adds.append(_mb(tag) - _mb(swebench_images.env_tag(inst.env)))
        print(f"instance      {iid}: +{adds[-1]:.0f} MB")
    unique = _mb(py) + sum(_mb(t) - _mb(py) for t in envs) + sum(adds)
    print(f"on disk (shared layers counted once): {unique / 1e3:.1f} GB for {len(ids)} instances")


def run(agent: str, tasks: list, workers: int) -> list:
    with tempfile.TemporaryDirectory(prefix="dgm-bench-swe-") as tmp:
        started = time.perf_counter()
        outcomes = evaluate_agent(AgentRef.reference(agent), tasks, Path(tmp), workers=workers)
        wall = time.perf_counter() - started
    resolved = sum(o.resolved for o in outcomes)
    tampered = sum(bool(getattr(o, "tampered", False)) for o in outcomes)
    overhead = [o.details["harness_seconds"] for o in outcomes]
    tests = [o.details["test_seconds"] for o in outcomes]
    expected = len(tasks) if agent == "oracle" else 0
    print(f"{agent:<7} resolved {resolved}/{len(tasks)} (baseline: {expected}/{len(tasks)}),"
          f" tampered {tampered}, {wall:.0f} s with {workers} worker(s)")  # fmt: skip
    print(f"        harness overhead per task: median {statistics.median(overhead):.1f} s,"
          f" max {max(overhead):.1f} s; judge eval script median"
          f" {statistics.median(tests):.1f} s")  # fmt: skip
    for o in outcomes:
        if o.resolved != (agent == "oracle"):
            print(f"        UNEXPECTED {o.task_id}: resolved={o.resolved} error={o.error}")
    return outcomes


def seed_tools(data: SweData, ids: list[str]) -> None:
    biggest = max(ids, key=lambda i: data.repo_tar(data.instances[i]["repo"]).stat().st_size)
    print(f"seed agent tools in {biggest}'s image:")
    with tempfile.TemporaryDirectory(prefix="dgm-bench-tools-") as tmp:
        tool = Path(tmp) / "search_tool.py"
        tool.write_text(
            (
                Path(__file__).resolve().parents[1] / "dgm/scripted/script_files/search_tool.py.txt"
            ).read_text()
        )
        Path(tmp).chmod(0o755)
        tool.chmod(0o644)
        spec = SandboxSpec(
            image=swebench_images.image_for(data, biggest),
            mounts=(Mount(seed_agent_dir(), "/agent"), Mount(Path(tmp), "/tool")),
        )
        print(run_command(spec, ["python3", "-c", TOOLS], 300).output.rstrip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(Path(__file__).parents[2] / "shared" / "swe-bench"))
    parser.add_argument("--subset", default="full")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    data = SweData(args.data)
    bench = SweTasks(args.data)
    ids = [t.id for t in bench.tasks(args.subset)]
    for attempt in ("build", "reuse"):
        started = time.perf_counter()
        swebench_images.build(data, ids, log=lambda line: print("   ", line) if "built" in line
                              else None)  # fmt: skip
        print(f"{attempt}: {len(ids)} instance image(s) in {time.perf_counter() - started:.1f} s")
    sizes(data, ids)
    seed_tools(data, ids)
    tasks = pin_images(bench.tasks(args.subset))
    for agent in ("oracle", "null"):
        run(agent, tasks, args.workers)


if __name__ == "__main__":
    main()
