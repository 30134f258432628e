"""Shared by the serve tests: servers on free ports, a small run with agent-written HTML."""

from __future__ import annotations

import asyncio
import socket
import threading
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from dgm.config import RunConfig
from dgm.serve.app import Server
from dgm.store import Evaluation, Run

SCRIPT_DIFF = '<script>document.title="pwned"</script><img src=x onerror="alert(1)">'
"""A line an agent wrote into its code: the page must show it as text, never run it."""


@dataclass
class Served:
    url: str
    token: str
    server: Server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(paths: list[Path], stops: list) -> Served:
    """A server on a free port in a thread; `stops` gets the function that stops it."""
    port = _free_port()
    server = Server(paths, port=port)
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(server.app())
    loop.run_until_complete(runner.setup())
    loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    def stop() -> None:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)

    stops.append(stop)
    return Served(f"http://127.0.0.1:{port}", server.token, server)


def make_small_run(tmp_path: Path) -> Path:
    """A seed and two children; child 2's diff was written by an agent and holds HTML."""
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "agent.toml").write_text('[agent]\nname = "tiny"\n[commands]\nsolve = "true"\n')
    (seed / "agent.py").write_text("print('hi')\n")
    path = tmp_path / "runs" / "alpha"
    with Run.create(path, RunConfig(name="alpha"), seed) as run:
        one = run.add_node(0, diff=_diff("agent.py", "print('hi')", "print('hello')"),
                           origin="say hello")  # fmt: skip
        run.add_node(one.id, diff=_diff("agent.py", "print('hello')", SCRIPT_DIFF),
                     origin="<b>bold</b> origin")  # fmt: skip
        for node, task, ok in [(0, "t1", True), (0, "t2", False), (1, "t1", True), (1, "t2", True)]:
            run.record_evaluation(Evaluation(node, task, "polyglot", resolved=ok))
    return path


def _diff(name: str, old: str, new: str) -> str:
    return (f"diff --git a/{name} b/{name}\n--- a/{name}\n+++ b/{name}\n@@ -1 +1 @@\n"
            f"-{old}\n+{new}\n")  # fmt: skip
