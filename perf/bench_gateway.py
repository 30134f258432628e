"""Gateway overhead over the scripted backend, beside a direct in-process call.

    python perf/bench_gateway.py [--calls 2000] [--clients 16]

Clients are separate processes speaking HTTP with the stdlib (as the seed agent does: a
new connection per call) over the job's unix socket and over TCP; each client is its own
job (as real agents are), so the per-job concurrency cap never refuses a call. Every call goes the
full way: validation, budget reservation, backend, settlement, exchange log line and
usage record. Target: overhead under 5 ms p50 (single client). "CPU ms/call" is the
gateway process's CPU time per call: the part of the latency that is ours, whatever
else the machine is doing.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import multiprocessing
import os
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dgm.config import Price  # noqa: E402
from dgm.gateway import CallContext, Gateway, GatewaySettings, JobBinding, register_script  # noqa: E402
from dgm.gateway.backends import make_backend  # noqa: E402

BODY = {
    "messages": [
        {"role": "system", "content": "You are a coding agent. " * 40},
        {"role": "user", "content": "Fix the failing test in parser.py. " * 20},
    ],
    "tools": [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}],
    "max_tokens": 1024,
}


def bench_script(request: dict, ctx: CallContext) -> dict:
    return {
        "tool_calls": [{"name": "bash", "arguments": {"command": "pytest -x"}}],
        "usage": {"input_tokens": 900, "output_tokens": 30},
    }


register_script("bench", bench_script)


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str) -> None:
        super().__init__("localhost", timeout=30)
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.path)


Target = tuple[str, str, str]  # ("unix" | "tcp", address, token)


def client(target: Target, calls: int, start_at: float) -> tuple[list[float], float]:
    """One agent process: `calls` sequential requests; returns the latencies in seconds
    and when it finished."""
    kind, address, token = target
    body = json.dumps(BODY).encode()
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
    time.sleep(max(0.0, start_at - time.time()))
    latencies = []
    for _ in range(calls):
        started = time.perf_counter()
        if kind == "unix":
            conn: http.client.HTTPConnection = UnixConnection(address)
        else:
            conn = http.client.HTTPConnection(address, timeout=30)
        conn.request("POST", "/v1/chat/completions", body=body, headers=headers)
        response = conn.getresponse()
        payload = response.read()
        conn.close()
        if response.status != 200:
            raise RuntimeError(payload[:300])
        latencies.append(time.perf_counter() - started)
    return latencies, time.time()


def run_clients(targets: list[Target], calls: int) -> tuple[list[float], float, float]:
    """One client per target (a job each); latencies, wall seconds, and the gateway
    process's CPU seconds per call."""
    clients = len(targets)
    per_client = max(1, calls // clients)
    context = multiprocessing.get_context("spawn")  # no fork of the gateway's threads
    with context.Pool(clients) as pool:
        start_at = time.time() + 1.0 + 0.1 * clients  # let every process start first
        jobs = [pool.apply_async(client, (target, per_client, start_at)) for target in targets]
        time.sleep(max(0.0, start_at - time.time()))
        cpu_before = time.process_time()  # this process is the gateway (all its threads)
        results = [job.get() for job in jobs]
        cpu = time.process_time() - cpu_before
    latencies = [x for lat, _ in results for x in lat]
    return latencies, max(end for _, end in results) - start_at, cpu / len(latencies)


def direct(calls: int) -> tuple[list[float], float, float]:
    """The same backend called in-process: the floor the gateway adds to."""
    backend = make_backend("scripted/bench", timeout_s=30)
    ctx = CallContext(JobBinding("bench", "direct"), "scripted/bench", 0, 1024)

    async def loop() -> list[float]:
        latencies = []
        for _ in range(calls):
            started = time.perf_counter()
            await backend.complete(BODY, ctx)
            latencies.append(time.perf_counter() - started)
        return latencies

    started, cpu_before = time.perf_counter(), time.process_time()
    latencies = asyncio.run(loop())
    return latencies, time.perf_counter() - started, (time.process_time() - cpu_before) / calls


def row(name: str, latencies: list[float], wall: float, cpu: float) -> str:
    ms = sorted(x * 1000 for x in latencies)
    p50 = statistics.median(ms)
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    return f"{name:<34} {p50:>9.3f} {p99:>9.3f} {len(ms) / wall:>10.0f} {cpu * 1000:>10.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=16)
    args = parser.parse_args()

    records: list = []
    with tempfile.TemporaryDirectory(prefix="dgmgw-") as tmp:
        gw = Gateway(
            GatewaySettings(
                "scripted/bench",
                run="bench",
                log_dir=Path(tmp) / "logs",
                prices={"scripted/bench": Price(input=3.0, output=15.0)},
                run_budget_usd=1e6,
            ),
            on_usage=records.append,
        ).start()
        try:

            def jobs(kind: str, n: int) -> list[Target]:
                """`n` jobs of the run, each with its own socket (unix) or token (TCP)."""
                found: list[Target] = []
                for i in range(n):
                    binding = JobBinding("bench", f"{kind}-{n}-{i}")
                    if kind == "unix":
                        path = Path(tmp) / f"{n}-{i}.sock"
                        end = gw.bind_job(binding, socket_path=path, container_socket_path=None)
                        found.append(("unix", str(end.socket_path), ""))
                    else:
                        found.append(("tcp", f"127.0.0.1:{gw.port}", gw.bind_job(binding).token))
                return found

            one = max(200, args.calls // 4)
            results = [
                ("direct in-process backend call", *direct(args.calls)),
                ("gateway, unix socket, 1 client", *run_clients(jobs("unix", 1), one)),
                ("gateway, TCP, 1 client", *run_clients(jobs("tcp", 1), one)),
                (
                    f"gateway, unix socket, {args.clients} clients",
                    *run_clients(jobs("unix", args.clients), args.calls),
                ),
                (
                    f"gateway, TCP, {args.clients} clients",
                    *run_clients(jobs("tcp", args.clients), args.calls),
                ),
            ]
        finally:
            gw.stop()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"machine: {os.cpu_count()} CPUs, load average {load} (other load skews latency)")
    print(f"{'':<34} {'p50 ms':>9} {'p99 ms':>9} {'calls/s':>10} {'CPU ms/call':>10}")
    for result in results:
        print(row(*result))
    floor = statistics.median(results[0][1]) * 1000
    for name, latencies, *_ in results[1:3]:
        overhead = statistics.median(latencies) * 1000 - floor
        verdict = "ok" if overhead < 5 else "OVER TARGET"
        where = name.split(", ", 1)[1]
        print(f"overhead p50, {where}: {overhead:.3f} ms (target < 5 ms: {verdict})")
    print(f"calls recorded by the gateway: {len(records)}")


if __name__ == "__main__":
    main()
