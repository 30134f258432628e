"""`dgm serve`: one local web app over run folders, live while their runs go on.

aiohttp (already a dependency of the gateway): JSON over HTTP, server-sent events for
changes, and the bundled static page (dgm/serve/static/, no CDN: it works offline).

Safety: the page and every GET are read-only. A state-changing request (POST) must carry
the token printed at start in the `X-DGM-Token` header; a cookie is never accepted, no
CORS header is ever sent (another site's page cannot read or send one), and the `Host`
header must name this server (DNS rebinding). Only JSON built from the given runs and the
bundled static files are served: no path on disk is ever taken from a request.
"""

from __future__ import annotations

import asyncio
import getpass
import hmac
import json
import secrets
import sqlite3
import time
from pathlib import Path
from typing import Any

from aiohttp import web

from dgm.errors import DgmError
from dgm.serve import views
from dgm.serve.fork import fork_run, start_run
from dgm.serve.runs import RunView, find_runs
from dgm.store.db import Database
from dgm.store.live import change_token
from dgm.store.run import DB_FILE
from dgm.store.steering import add_request

STATIC = Path(__file__).resolve().parent / "static"
STATIC_FILES = {"app.js": "text/javascript", "app.css": "text/css", "tree.js": "text/javascript",
                "chart.js": "text/javascript"}  # fmt: skip
TOKEN_HEADER = "X-DGM-Token"
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
CURVES_EVERY_S = 1.0
WATCH_INTERVAL_S = 0.25
"""How often the stream looks for changes (one cheap query per run)."""
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class Server:
    def __init__(self, paths: list[Path], token: str | None = None, host: str = "127.0.0.1",
                 port: int = 8765) -> None:  # fmt: skip
        self.paths = paths
        self.runs: dict[str, RunView] = {}
        self.token = token or secrets.token_urlsafe(24)
        self.host, self.port = host, port
        self.closing = False
        self.refresh_runs()

    def refresh_runs(self) -> None:
        for name, path in find_runs(self.paths).items():
            if name not in self.runs:
                self.runs[name] = RunView(name, path)

    def view(self, request: web.Request) -> RunView:
        name = request.match_info["run"]
        if name not in self.runs:
            raise web.HTTPNotFound(text=f"no run named {name!r} here")
        return self.runs[name]

    # -- the app ------------------------------------------------------------------------
    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._guard])
        app.add_routes([
            web.get("/", self.index),
            web.get("/static/{name}", self.static),
            web.get("/api/runs", self.list_runs),
            web.get("/api/stream", self.stream),
            web.get("/api/runs/{run}/tree", self.tree),
            web.get("/api/runs/{run}/progress", self.progress),
            web.get("/api/runs/{run}/nodes/{node}", self.node),
            web.get("/api/runs/{run}/nodes/{node}/trajectory", self.trajectory),
            web.post("/api/runs/{run}/steer", self.steer),
            web.post("/api/runs/{run}/fork", self.fork),
        ])  # fmt: skip
        app.on_shutdown.append(self._end_streams)
        return app

    async def _end_streams(self, app: web.Application) -> None:
        self.closing = True  # open event streams end, so shutdown does not wait on them

    @web.middleware
    async def _guard(self, request: web.Request, handler: Any) -> web.StreamResponse:
        host = (request.host or "").rsplit(":", 1)[0].strip("[]")
        if self.host in LOOPBACK and host not in LOOPBACK:
            return web.Response(status=421, text=f"unexpected Host header {host!r}")
        if request.method not in ("GET", "HEAD"):
            given = request.headers.get(TOKEN_HEADER, "")
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                return web.json_response(
                    {"error": f"a state-changing request needs the {TOKEN_HEADER} header "
                              "(the token `dgm serve` printed at start)"}, status=403)  # fmt: skip
        try:
            response = await handler(request)
        except DgmError as exc:
            response = web.json_response({"error": str(exc)}, status=400)
        response.headers.update(SECURITY_HEADERS)
        return response

    async def index(self, request: web.Request) -> web.StreamResponse:
        return web.FileResponse(STATIC / "index.html", headers={"Content-Type": "text/html"})

    async def static(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        if name not in STATIC_FILES:
            raise web.HTTPNotFound()
        return web.FileResponse(STATIC / name, headers={"Content-Type": STATIC_FILES[name]})

    async def list_runs(self, request: web.Request) -> web.Response:
        self.refresh_runs()
        return web.json_response({"runs": [
            {"name": v.name, "path": str(v.path), "token": change_token(v.run.db)}
            for v in self.runs.values()]})  # fmt: skip

    async def tree(self, request: web.Request) -> web.Response:
        view = self.view(request)
        run = view.fresh()
        token = change_token(run.db)
        if view.cached.get("tree", ("",))[0] != token:  # many tabs, one build per change
            tree = await asyncio.to_thread(views.tree, run)
            view.cached["tree"] = (token, json.dumps({"token": token, **tree}))
        return web.Response(text=view.cached["tree"][1], content_type="application/json")

    async def progress(self, request: web.Request) -> web.Response:
        since = _int(request.query.get("events_since") or 0, "events_since")
        view = self.view(request)
        return _json(await asyncio.to_thread(self._progress, view, since))

    def _progress(self, view: RunView, since: int) -> dict[str, Any]:
        """The curves cost O(evaluations): rebuilt at most every CURVES_EVERY_S, or five
        times as long as the last build took, so a huge live run is not rebuilt nonstop."""
        run, now = view.fresh(), time.monotonic()
        built_at, cost, data = view.curves or (0.0, 0.0, None)
        if data is None or now - built_at > max(CURVES_EVERY_S, 5 * cost):
            data = views.curves(run)
            view.curves = (now, time.monotonic() - now, data)
        return views.progress_page(run, since, data)

    async def node(self, request: web.Request) -> web.Response:
        run = self.view(request).fresh()
        against = request.query.get("against")
        node = _int(request.match_info["node"], "node")
        other = _int(against, "against") if against else None
        return _json(await asyncio.to_thread(views.node_page, run, node, other))

    async def trajectory(self, request: web.Request) -> web.Response:
        run = self.view(request).fresh()
        node = _int(request.match_info["node"], "node")
        task = request.query.get("task", "")
        return _json(await asyncio.to_thread(views.trajectory_page, run, node, task))

    async def stream(self, request: web.Request) -> web.StreamResponse:
        """Server-sent events: `change` with the run's name whenever its token moves."""
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                               **SECURITY_HEADERS})  # fmt: skip
        await response.prepare(request)
        seen: dict[str, str] = {}
        beat = 0
        try:
            while not self.closing:
                for name, view in list(self.runs.items()):
                    try:
                        token = change_token(view.run.db)
                    except (sqlite3.Error, OSError):  # moved or mid-creation: next time
                        continue
                    if seen.get(name) != token:
                        seen[name] = token
                        data = json.dumps({"run": name, "token": token})
                        await response.write(f"event: change\ndata: {data}\n\n".encode())
                beat += 1
                if beat % 8 == 0:  # runs started in a watched folder since
                    self.refresh_runs()
                if beat % 60 == 0:  # a comment line keeps proxies and tunnels from closing it
                    await response.write(b": keep-alive\n\n")
                await asyncio.sleep(WATCH_INTERVAL_S)
        except ConnectionError:  # the page went away
            pass
        return response

    async def steer(self, request: web.Request) -> web.Response:
        view = self.view(request)
        body = await _body(request)
        who = f"web {request.remote or 'local'} ({getpass.getuser()})"
        db = Database.open(view.path / DB_FILE)  # migrates an older run's schema, if needed
        try:
            args = body.get("args") or {}
            if not isinstance(args, dict):
                raise DgmError("`args` must be a JSON object", 'e.g. {"node": 12}')
            row = add_request(db, str(body.get("action", "")), args, who)
        finally:
            db.close()
        return web.json_response(row.as_dict())

    async def fork(self, request: web.Request) -> web.Response:
        view = self.view(request)
        body = await _body(request)
        dest = fork_run(view.path, _int(body.get("node"), "node"), None,
                        f"web {request.remote or 'local'}")  # fmt: skip
        name = next((n for n, p in find_runs([dest]).items()), dest.name)
        self.runs.setdefault(name, RunView(name, dest))
        pid = start_run(dest) if body.get("start") else None
        return web.json_response({"run": name, "path": str(dest), "pid": pid,
                                  "start": f"dgm resume {dest}"})  # fmt: skip


def _json(data: dict[str, Any]) -> web.Response:
    return web.Response(text=json.dumps(data, default=str), content_type="application/json")


async def _body(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        raise DgmError("the request body is not JSON", 'send {"action": ..., "args": {}}') from None
    if not isinstance(body, dict):
        raise DgmError("the request body must be a JSON object", 'send {"action": ...}')
    return body


def _int(value: Any, what: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise DgmError(f"{what} must be a whole number, not {value!r}") from None
