"""A real Ray cluster of several nodes on this machine: each node is its own `ray start
--block` process group (head first, then `--address`), with its own name and sandbox
slots, small (1 CPU, 100 MB object store, no dashboard). `kill(name)` kills a node's
whole process group with SIGKILL, as a machine that dies would."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
RAY = Path(sys.executable).parent / "ray"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalCluster:
    def __init__(self) -> None:
        self.temp = Path(tempfile.mkdtemp(prefix="dgr-", dir="/tmp"))  # short: socket paths
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.nodes: dict[str, subprocess.Popen] = {}

    def add(self, name: str, slots: int, env: dict[str, str] | None = None) -> None:
        """Start node `name` offering `slots` sandbox slots; `env`: variables of its own."""
        head = not self.nodes
        args = [str(RAY), "start", "--block", "--num-cpus=1", "--object-store-memory=100000000",
                "--disable-usage-stats", f"--dashboard-agent-listen-port={free_port()}",
                f"--resources={json.dumps({'dgm_slot': slots})}"]  # fmt: skip
        if head:
            client_port = f"--ray-client-server-port={free_port()}"
            args += ["--head", f"--port={self.port}", "--include-dashboard=false", client_port,
                     f"--temp-dir={self.temp}"]  # fmt: skip
        else:
            args += [f"--address={self.address}"]
        path = os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))
        env = {**os.environ, "DGM_NODE_NAME": name, "RAY_USAGE_STATS_ENABLED": "0",
               "DGM_TEST_NODE": f"{self.temp}:{name}", "PYTHONPATH": path,
               **(env or {})}  # fmt: skip
        log = open(self.temp / f"node-{name}.log", "w")  # noqa: SIM115
        self.nodes[name] = subprocess.Popen(
            args, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def wait_alive(self, count: int, timeout: float = 120) -> None:
        import ray

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if not ray.is_initialized():
                    ray.init(address=self.address, include_dashboard=False, log_to_driver=False)
                if len([n for n in ray.nodes() if n["Alive"]]) >= count:
                    return
            except Exception:  # noqa: BLE001 - the head is still starting
                pass
            time.sleep(1)
        raise TimeoutError(f"{count} Ray nodes did not come up in {timeout} s")

    def kill(self, name: str) -> None:
        """SIGKILL to the node's process group and to every process it started elsewhere
        (Ray's workers leave the group): found by the environment they inherited."""
        proc = self.nodes.pop(name)
        os.killpg(proc.pid, signal.SIGKILL)
        for pid in self._processes(f"DGM_TEST_NODE={self.temp}:{name}", "environ"):
            _kill(pid)
        proc.wait(timeout=30)

    def shutdown(self) -> None:
        import ray

        if ray.is_initialized():
            ray.shutdown()
        for name in list(reversed(self.nodes)):
            self.kill(name)
        for pid in self._processes(f"DGM_TEST_NODE={self.temp}:", "environ"):
            _kill(pid)  # daemons of our nodes that left their process group
        shutil.rmtree(self.temp, ignore_errors=True)

    @staticmethod
    def _processes(needle: str, where: str) -> list[int]:
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and int(entry.name) != os.getpid():
                try:
                    text = (entry / where).read_bytes().decode(errors="replace")
                except OSError:
                    continue
                if needle in text:
                    found.append(int(entry.name))
        return found


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
