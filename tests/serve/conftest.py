"""Servers over runs for the serve tests: started in a thread on a free port, stopped after."""

from __future__ import annotations

import asyncio
import socket
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiohttp import web

from dgm.config import RunConfig
from dgm.serve.app import Server
from dgm.store import Evaluation, Run

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))  # browser.py, runs.py

from tests.serve.helpers import SCRIPT_DIFF


@dataclass
class Served:
    url: str
    token: str
    server: Server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def serve() -> Iterator:
    """serve(paths) -> Served; every server started is stopped at the end of the test."""
    stops = []

    def start(paths: list[Path]) -> Served:
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

    yield start
    for stop in stops:
        stop()


@pytest.fixture
def small_run(tmp_path: Path) -> Path:
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
