"""What an agent environment costs to build and to reuse (issue 26).

    python perf/bench_agent_env.py [REQUIREMENT ...]   # default: mini-swe-agent==2.4.6

Builds the environment three ways in throwaway folders: cold (empty pip cache: every
wheel downloaded), warm (wheels in pip's cache, as on a second machine sharing it, or
after a requirements change that keeps most packages), and reused (the same content
hash: found, not built). Then the cost of mounting it: a container running the env's
python importing nothing, with and without the mount. Printed side by side.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from dgm.sandbox import Mount, SandboxSpec, run_command
from dgm.sandbox.agent_env import ENV_MOUNT, ENV_PYTHON, ensure_env
from dgm.sandbox.env_requirements import EnvironmentSpec, check_requirement


def _timed(fn):  # noqa: ANN001, ANN202
    started = time.monotonic()
    result = fn()
    return result, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("requirements", nargs="*", default=["mini-swe-agent==2.4.6"])
    args = parser.parse_args()
    spec = EnvironmentSpec(tuple(sorted(check_requirement(r) for r in args.requirements)))
    with tempfile.TemporaryDirectory(prefix="dgm-bench-env-") as tmp:
        root = Path(tmp)
        os.environ["PIP_CACHE_DIR"] = str(root / "pip-cache")
        cold, cold_s = _timed(lambda: ensure_env(spec, root=root / "cold"))
        warm, warm_s = _timed(lambda: ensure_env(spec, root=root / "warm"))
        _, reuse_s = _timed(lambda: ensure_env(spec, root=root / "warm"))
        assert cold is not None and warm is not None
        size = sum(p.stat().st_size for p in warm.path.rglob("*") if p.is_file()) / 2**20
        bare = SandboxSpec(image="runtime")
        mounted = bare.with_(mounts=(Mount(warm.path, ENV_MOUNT),))
        _, plain_s = _timed(lambda: run_command(bare, ["python3", "-c", "pass"], timeout=120))
        _, env_s = _timed(lambda: run_command(mounted, [ENV_PYTHON, "-c", "pass"], timeout=120))
    print(f"requirements        {', '.join(spec.requirements)}")
    print(f"resolved            {len(warm.resolved)} wheels, {size:.0f} MiB installed")
    print(f"build, cold cache   {cold_s:6.1f} s")
    print(f"build, warm cache   {warm_s:6.1f} s")
    print(f"reuse (same hash)   {reuse_s * 1000:6.1f} ms")
    print(f"container, no env   {plain_s:6.2f} s   (python3 -c pass)")
    print(f"container, env      {env_s:6.2f} s   (the env's python, mounted read-only)")


if __name__ == "__main__":
    main()
