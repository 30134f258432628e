"""Report benchmarks (issue 9): a synthetic 1,000-node run through `dgm report`,
headless Chromium, `dgm plot` and `dgm export`.

    python perf/bench_report.py [--nodes 1000]

Prints: the time to build the report data and write the page, the page's size, the
page's load time in headless Chromium (navigate -> drawn and ready; target < 3 s), the
time from a click on a node to its details, and the plot and export times.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "report"))  # the synthetic run builder, the browser

from browser import Chromium, chromium_path  # noqa: E402
from runs import make_big_run  # noqa: E402

from dgm.report.export import export  # noqa: E402
from dgm.report.html import write_report  # noqa: E402


def _timed(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        seconds, run = _timed(lambda: make_big_run(tmp / "run", n=args.nodes))
        evals = len(run.evaluations())
        run.close()
        print(f"synthetic run: {args.nodes} nodes, {evals} evaluations (built in {seconds:.1f} s)")
        samples = [_timed(lambda: write_report(tmp / "run", tmp / "r.html"))[0] for _ in range(3)]
        size = (tmp / "r.html").stat().st_size
        print(
            f"dgm report (data + HTML): {statistics.median(samples):.2f} s median of 3, "
            f"page {size / 1e6:.2f} MB"
        )
        if chromium_path() is None:
            print("headless chromium: not installed, load time not measured")
        else:
            with Chromium() as browser:
                loads = [browser.open((tmp / "r.html").as_uri()) for _ in range(3)]
                in_page = browser.evaluate("window.dgmReady") / 1000
                click_s, _ = _timed(
                    lambda: (
                        browser.click('#tree circle[data-id="500"]'),
                        browser.evaluate("document.getElementById('details').dataset.node"),
                    )
                )
            print(
                f"load in headless chromium: {statistics.median(loads):.2f} s median of 3 "
                f"(navigate -> ready; in-page {in_page:.2f} s) [target < 3 s]"
            )
            print(f"click on a node -> details shown: {click_s * 1000:.0f} ms")
        try:
            from dgm.report.plot import write_plots

            seconds, files = _timed(lambda: write_plots(tmp / "run", tmp / "plots", ["png", "svg"]))
            print(f"dgm plot (png + svg, 3 figures): {seconds:.2f} s")
        except Exception as exc:  # matplotlib missing
            print(f"dgm plot: skipped ({exc})")
        seconds, _ = _timed(lambda: export(tmp / "run", "best", tmp / "agent", "dir"))
        print(f"dgm export best --format dir: {seconds:.2f} s")
        seconds, _ = _timed(lambda: export(tmp / "run", "best", tmp / "b.bundle", "bundle"))
        print(f"dgm export best --format bundle: {seconds:.2f} s")


if __name__ == "__main__":
    main()
