"""Per-command sandbox overhead beside plain `docker run --rm IMAGE true`, in one run.

    python perf/bench_sandbox.py [--runs 50]

Measures, each N times: plain docker run (the CLI, no hardening); dgm's one-shot
`run_command` (create + start + exec `true` + read the memory counters + remove, all
limits on); and a sandbox session (open + exec `true` + close). Target: one-shot median
within 1.3x of plain docker and under 1 s.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
from collections.abc import Callable

from dgm.sandbox import SandboxSpec, images, open_sandbox, run_command


def measure(runs: int, action: Callable[[], None]) -> list[float]:
    action()  # warm-up: image metadata, connection pool
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return times


def summary(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[int(0.9 * (len(ordered) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    image = images.build("runtime", log=lambda line: None)
    spec = SandboxSpec(image=image)

    def plain() -> None:
        subprocess.run(["docker", "run", "--rm", image, "true"], check=True)

    def one_shot() -> None:
        assert run_command(spec, ["true"], timeout=60).exit_code == 0

    def session() -> None:
        with open_sandbox(spec) as box:
            assert box.exec(["true"], timeout=60).exit_code == 0

    rows = [
        ("plain docker run --rm IMAGE true", measure(args.runs, plain)),
        ("dgm run_command (hardened, one-shot)", measure(args.runs, one_shot)),
        ("dgm open_sandbox + exec + close", measure(args.runs, session)),
    ]
    base_median, _ = summary(rows[0][1])
    print(f"image {image}, {args.runs} runs each")
    print(f"{'':40} {'median':>8} {'p90':>8} {'x plain':>8}")
    for label, times in rows:
        median, p90 = summary(times)
        print(f"{label:40} {median:7.3f}s {p90:7.3f}s {median / base_median:7.2f}x")
    one_shot_median = summary(rows[1][1])[0]
    ok = one_shot_median <= 1.3 * base_median and one_shot_median < 1.0
    print(f"target (one-shot <= 1.3x plain and < 1 s): {'met' if ok else 'NOT met'}")


if __name__ == "__main__":
    main()
