"""`dgm serve` at scale (issue 28): a synthetic 10,000-node run in headless Chromium.

    python perf/bench_serve.py [--nodes 10000] [--shots docs/serve]

Prints: the time to build the synthetic run; the tree API (JSON size, time cold and
cached); the page's first paint and load (navigate -> tree drawn) over 3 loads; the
time from a node recorded in the store to the page showing it (5 times, the page open,
nothing reloaded); the server's resident memory after all that. With --shots, writes
screenshots of the main views (PNG) into that folder.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "report"))  # the synthetic run builder, the browser

from browser import Chromium  # noqa: E402
from runs import make_big_run  # noqa: E402

from dgm.store import Run  # noqa: E402


def _rss_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) / 1024  # type: ignore[union-attr]


def _get(url: str) -> tuple[float, int]:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as resp:
        size = len(resp.read())
    return time.perf_counter() - start, size


def _serve(run_dir: Path, port: int) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "dgm", "serve", str(run_dir), "--port",
                             str(port)], stdout=subprocess.PIPE, text=True)  # fmt: skip
    for line in proc.stdout:  # type: ignore[union-attr]
        if line.startswith("token"):
            return proc, line.split()[1]
    raise RuntimeError(f"dgm serve printed no token (port {port} taken? --port)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--port", type=int, default=8799)
    parser.add_argument("--shots", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "big"
        start = time.perf_counter()
        make_big_run(run_dir, n=args.nodes).close()
        print(f"synthetic run: {args.nodes} nodes built in {time.perf_counter() - start:.1f} s")
        proc, token = _serve(run_dir, args.port)
        url = f"http://127.0.0.1:{args.port}"
        try:
            time.sleep(0.5)
            cold, size = _get(f"{url}/api/runs/big/tree")
            warm, _ = _get(f"{url}/api/runs/big/tree")
            print(f"tree API: {size / 1e6:.2f} MB JSON, {cold:.2f} s cold, {warm * 1000:.0f} ms"
                  " cached")  # fmt: skip
            node_s, _ = _get(f"{url}/api/runs/big/nodes/{args.nodes // 2}")
            prog_s, psize = _get(f"{url}/api/runs/big/progress")
            print(f"node page API: {node_s * 1000:.0f} ms; progress API: {prog_s:.2f} s"
                  f" ({psize / 1e6:.2f} MB)")  # fmt: skip
            with Chromium(width=1400, height=860) as page:
                loads, paints = [], []
                for _ in range(3):
                    page.call("Page.navigate", url="about:blank")  # a real load each time
                    time.sleep(0.3)
                    loads.append(page.open(f"{url}/#token={token}", timeout=120))
                    paint = page.evaluate(
                        "(performance.getEntriesByName('first-contentful-paint')[0] || {})"
                        ".startTime"
                    )
                    paints.append((paint or 0) / 1000)
                print(f"page ({args.nodes} nodes): first paint {statistics.median(paints):.2f} s,"
                      f" tree drawn (load) {statistics.median(loads):.2f} s"
                      f" (median of 3; {', '.join(f'{x:.2f}' for x in loads)})")  # fmt: skip
                shown = _event_to_page(page, run_dir, args.nodes)
                print(
                    f"recorded node -> on the page: median {statistics.median(shown):.2f} s,"
                    f" max {max(shown):.2f} s (5 nodes; stream checks every 0.25 s)"
                )
                print(f"server memory: {_rss_mib(proc.pid):.0f} MiB resident")
                if args.shots:
                    _screenshots(page, args.shots, args.nodes)
        finally:
            proc.terminate()
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()


def _event_to_page(page: Chromium, run_dir: Path, nodes: int) -> list[float]:
    shown = []
    with Run.open(run_dir) as run:
        for k in range(5):
            before = page.evaluate("window.dgmShown.nodes")
            recorded = time.perf_counter()
            run.add_node(k + 1, diff="", origin=f"live node {k}")
            while page.evaluate("window.dgmShown.nodes") == before:
                if time.perf_counter() - recorded > 30:
                    raise TimeoutError("the page did not show the new node")
                time.sleep(0.01)
            shown.append(time.perf_counter() - recorded)
            time.sleep(0.5)
    return shown


def _screenshots(page: Chromium, folder: Path, nodes: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    page.evaluate("dgmTree.fit()")
    time.sleep(0.5)
    page.screenshot(folder / "tree-10k.png")
    page.evaluate("document.getElementById('find').value = '412';"
                  " document.getElementById('find-go').click()")  # fmt: skip
    time.sleep(1.0)
    page.screenshot(folder / "node.png")
    page.click('nav button[data-tab="progress"]')
    deadline = time.monotonic() + 300
    while not page.evaluate("document.getElementById('run-facts').textContent"):
        assert time.monotonic() < deadline, "the progress view did not load"
        time.sleep(0.5)
    time.sleep(0.5)
    page.screenshot(folder / "progress.png")
    print(f"screenshots: {', '.join(p.name for p in sorted(folder.glob('*.png')))} in {folder}")
    print(json.dumps({"nodes": nodes}))


if __name__ == "__main__":
    main()
