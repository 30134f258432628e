"""A local fake of the providers' HTTP APIs: Anthropic `POST /v1/messages` (and its
`count_tokens`, always 4242) and OpenAI `POST /v1/chat/completions`, in a background
thread, answering from a queue of steps.

With the queue empty it answers a plain text reply in the API's own format. Each
received request (path, headers, JSON body, and for Anthropic where its `cache_control`
breakpoints were) is kept in `requests` for assertions. `reply(..., cache=model)` reports
cache reads and writes the way Anthropic does (`fake_prompt_cache.py`).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from .fake_prompt_cache import PromptCacheModel, request_blocks

Step = Callable[[str, dict[str, Any]], Awaitable[web.Response]]


class FakeUpstream:
    def __init__(self) -> None:
        self.steps: deque[Step] = deque()
        self.requests: list[dict[str, Any]] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None
        self.port = 0

    def push(self, *steps: Step) -> None:
        self.steps.extend(steps)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeUpstream:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result()
        return self

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/messages", self._handle)
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_post("/v1/messages/count_tokens", self._count)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.2)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    async def _stop(self) -> None:
        await self._runner.cleanup()
        hanging = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in hanging:
            task.cancel()
        await asyncio.gather(*hanging, return_exceptions=True)

    async def _handle(self, request: web.Request) -> web.Response:
        api = "anthropic" if request.path == "/v1/messages" else "openai"
        body = await request.json()
        seen = {"api": api, "headers": dict(request.headers), "body": body}
        if api == "anthropic":
            seen["breakpoints"] = [b.where for b in request_blocks(body) if b.marked]
        self.requests.append(seen)
        step = self.steps.popleft() if self.steps else reply("fine")
        return await step(api, body)

    async def _count(self, request: web.Request) -> web.Response:
        """Anthropic's count_tokens: 4242, whatever was sent (kept in `requests`)."""
        body = await request.json()
        self.requests.append({"api": "anthropic_count", "headers": dict(request.headers),
                              "body": body})  # fmt: skip
        return web.json_response({"input_tokens": 4242})


# -- steps -----------------------------------------------------------------------------
def reply(
    text: str | None = None,
    tool: tuple[str, dict[str, Any]] | None = None,
    usage: tuple[int, int, int] = (100, 20, 0),
    stop: str | None = None,
    cache: PromptCacheModel | None = None,
) -> Step:
    """A successful answer: text and/or one tool call; usage = (input, output, cached).
    With `cache`, an Anthropic answer's input usage comes from that prompt-cache model."""

    async def step(api: str, body: dict[str, Any]) -> web.Response:
        inp, out, cached = usage
        if api == "anthropic":
            tokens = {
                "input_tokens": inp - cached,
                "output_tokens": out,
                "cache_read_input_tokens": cached,
                "cache_creation_input_tokens": 0,
            }
            if cache is not None:
                tokens = cache.answer(body).usage(out)
            content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
            if tool:
                content.append(
                    {"type": "tool_use", "id": "toolu_01", "name": tool[0], "input": tool[1]}
                )
            return web.json_response(
                {
                    "id": "msg_01",
                    "type": "message",
                    "role": "assistant",
                    "model": body["model"],
                    "content": content,
                    "stop_reason": stop or ("tool_use" if tool else "end_turn"),
                    "stop_sequence": None,
                    "usage": tokens,
                }
            )
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if tool:
            message["tool_calls"] = [
                {
                    "id": "call_01",
                    "type": "function",
                    "function": {"name": tool[0], "arguments": json.dumps(tool[1])},
                }
            ]
        return web.json_response(
            {
                "id": "chatcmpl-01",
                "object": "chat.completion",
                "created": 1,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": stop or ("tool_calls" if tool else "stop"),
                    }
                ],
                "usage": {
                    "prompt_tokens": inp,
                    "completion_tokens": out,
                    "total_tokens": inp + out,
                    "prompt_tokens_details": {"cached_tokens": cached},
                },
            }
        )

    return step


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Step:
    """An error in the provider's format (both use `{"error": {"message": ...}}`)."""

    async def step(api: str, body: dict[str, Any]) -> web.Response:
        if api == "anthropic":
            payload = {"type": "error", "error": {"type": "api_error", "message": message}}
        else:
            payload = {"error": {"message": message, "type": "api_error", "code": None}}
        return web.json_response(payload, status=status, headers=headers)

    return step


def hang(seconds: float) -> Step:
    """Say nothing for a long time, then a reply nobody should wait for."""

    async def step(api: str, body: dict[str, Any]) -> web.Response:
        await asyncio.sleep(seconds)
        return await reply("too late")(api, body)

    return step
