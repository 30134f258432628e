"""A stand-in LLM provider on 127.0.0.1 (OpenAI Chat Completions) that can be down: it
answers 503 while `down` is set (or for a window of time), 429 to calls over a rate, and
a plain text reply otherwise. Also `python -m tests.outages.standin PORT DOWN_FROM DOWN_S`
for tests that run dgm as a process."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections import deque

from aiohttp import web


class StandIn:
    def __init__(self, max_per_second: float | None = None) -> None:
        self.down = False
        self.down_window: tuple[float, float] | None = None
        """(from, until) in time.time(): answers 503 in between."""
        self.down_after_calls: tuple[int, float] | None = None
        """(n, seconds): goes down at the n-th call for that long."""
        self.max_per_second = max_per_second
        self.calls = 0
        self.failed = 0
        self._recent: deque[float] = deque()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def model(self) -> str:
        return f"openai-compatible/standin@{self.base_url}"

    def start(self, port: int = 0) -> StandIn:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(port), self._loop).result()
        return self

    async def _start(self, port: int) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.2)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def stop(self) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    def is_down(self) -> bool:
        now = time.time()
        if self.down_after_calls and self.calls >= self.down_after_calls[0]:
            self.down_window = (now, now + self.down_after_calls[1])
            self.down_after_calls = None
        window = self.down_window
        return self.down or (window is not None and window[0] <= now < window[1])

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.calls += 1
        now = time.time()
        if self.is_down():
            self.failed += 1
            return web.json_response({"error": {"message": "service unavailable"}}, status=503)
        if self.max_per_second is not None:
            self._recent.append(now)
            while self._recent and self._recent[0] < now - 1.0:
                self._recent.popleft()
            if len(self._recent) > self.max_per_second:
                self.failed += 1
                return web.json_response(
                    {"error": {"message": "rate limit", "type": "rate_limit"}}, status=429
                )
        text = "OK " + str(body.get("messages", [{}])[-1].get("content", ""))[:40]
        return web.json_response({
            "id": "c1", "object": "chat.completion", "created": int(now), "model": "standin",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
        })  # fmt: skip


if __name__ == "__main__":  # PORT [DOWN_FROM_S DOWN_S]: down for a window, then back
    port = int(sys.argv[1])
    standin = StandIn()
    if len(sys.argv) > 3:
        start = time.time() + float(sys.argv[2])
        standin.down_window = (start, start + float(sys.argv[3]))
    standin.start(port)
    print(f"listening {standin.port}", flush=True)
    while True:
        time.sleep(3600)
