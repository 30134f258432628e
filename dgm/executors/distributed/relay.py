"""The per-job relay on a worker node: the job's unix socket, forwarded to the head's gateway.

Sandboxes keep `--network none`; on the head the gateway serves each job's socket itself.
On another node the socket is served by this relay instead: it is mounted into the sandbox
exactly like the gateway's, and forwards each request over TCP to the head's gateway with
the job's bearer token. A request carrying another token (or none) is refused here, never
forwarded, so a socket leaked to another sandbox opens nothing; budgets and accounting
stay at the gateway, which checks the token again.
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

from aiohttp import ClientSession, ClientTimeout, web

from dgm.gateway.socket_dir import prepare_socket_folder

FORWARD_TIMEOUT_S = 900
_HOP_HEADERS = {"host", "content-length", "transfer-encoding", "connection", "keep-alive"}


def _refusal(message: str) -> web.Response:
    body = {"error": {"message": message, "type": "authentication_error", "code": "invalid_token"}}
    return web.json_response(body, status=401)


class JobRelay:
    """Serves `socket_path` for one job, forwarding to `upstream` (`http://HEAD:PORT`)."""

    def __init__(self, socket_path: Path, upstream: str, token: str) -> None:
        self.socket_path = Path(socket_path)
        self.upstream = upstream.rstrip("/").removesuffix("/v1")
        self.token = token
        self.refused = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._session: ClientSession | None = None

    def start(self) -> JobRelay:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="dgm-relay", daemon=True
        )
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=30)
        return self

    async def _start(self) -> None:
        prepare_socket_folder(self.socket_path.parent)
        self.socket_path.unlink(missing_ok=True)
        self._session = ClientSession(timeout=ClientTimeout(total=FORWARD_TIMEOUT_S))
        app = web.Application(client_max_size=8 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._forward)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.UnixSite(self._runner, str(self.socket_path)).start()
        # Only this user, as the gateway's own sockets; the sandbox grants its uid access.
        os.chmod(self.socket_path, 0o600)

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or token.strip() != self.token:
            self.refused += 1
            return _refusal("wrong or missing token for this job's relay")
        assert self._session is not None
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_HEADERS}
        body = await request.read()
        url = self.upstream + request.rel_url.path_qs
        try:
            upstream = await self._session.request(request.method, url, data=body, headers=headers)
        except OSError as exc:
            body = {"error": {"message": f"the head's gateway did not answer: {exc}",
                              "type": "gateway_unreachable"}}  # fmt: skip
            return web.json_response(body, status=502)
        async with upstream:
            response = web.StreamResponse(status=upstream.status)
            for key, value in upstream.headers.items():
                if key.lower() not in _HOP_HEADERS and key.lower() != "content-encoding":
                    response.headers[key] = value
            await response.prepare(request)
            async for chunk in upstream.content.iter_any():
                await response.write(chunk)
            await response.write_eof()
            return response

    def stop(self) -> None:
        loop, self._loop = self._loop, None
        if loop is None:
            return
        asyncio.run_coroutine_threadsafe(self._stop(), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=30)
        loop.close()

    async def _stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()
        self.socket_path.unlink(missing_ok=True)

    def __enter__(self) -> JobRelay:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
