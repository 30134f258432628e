"""The HTTP face of the gateway (aiohttp) over unix sockets and TCP: OpenAI Chat
Completions, the OpenAI Responses API (responses_dialect.py), the Anthropic Messages API
(anthropic_dialect.py) and its count_tokens (token_count.py), streaming on all three, and
`GET /v1/models` in the shape the asking SDK expects.

One aiohttp application per listener: the TCP one finds the job by bearer token; each
job's unix socket has its own application that knows its job, so a call on a job's
socket is that job's whatever the caller claims.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web

from dgm.gateway import anthropic_dialect, responses_dialect
from dgm.gateway.protocol import stream_chunks
from dgm.gateway.types import LLMCallError, Usage

if TYPE_CHECKING:
    from dgm.gateway.calls import BoundJob

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 4 * 1024 * 1024
"""A request body cap (HTTP 413): 4 MiB of JSON is over a million tokens, more than any
context window, and a bigger body is parsed by no one."""

JobResolver = Callable[[web.Request], "BoundJob | None"]
CallHandler = Callable[["BoundJob", Any], Awaitable[tuple[dict[str, Any], Usage]]]
CountHandler = Callable[["BoundJob", Any], Awaitable[dict[str, Any]]]

_RESOLVE = web.AppKey("resolve_job", JobResolver)
_CALL = web.AppKey("call", CallHandler)
_COUNT = web.AppKey("count", CountHandler)


def build_app(
    resolve_job: JobResolver, call: CallHandler, count: CountHandler | None = None
) -> web.Application:
    app = web.Application(client_max_size=MAX_REQUEST_BYTES, middlewares=[_errors_as_json])
    app[_RESOLVE] = resolve_job
    app[_CALL] = call
    if count is not None:
        app[_COUNT] = count
    for prefix in ("/v1", ""):  # DGM_LLM_URL may or may not end in /v1
        app.router.add_post(f"{prefix}/chat/completions", _chat_completions)
        app.router.add_post(f"{prefix}/responses", _responses)
        app.router.add_get(f"{prefix}/models", _models)
        app.router.add_post(f"{prefix}/messages", _messages)
        app.router.add_post(f"{prefix}/messages/count_tokens", _count_tokens)
    app.router.add_get("/health", _health)
    return app


def error_response(error: LLMCallError) -> web.Response:
    return web.json_response(error.body(), status=error.status)


@web.middleware
async def _errors_as_json(request: web.Request, handler: Any) -> web.StreamResponse:
    """Every failure an OpenAI client can parse; nothing here stops the server."""
    try:
        return await handler(request)
    except LLMCallError as exc:
        return error_response(exc)
    except web.HTTPRequestEntityTooLarge:
        return error_response(
            LLMCallError(
                f"request body larger than {MAX_REQUEST_BYTES // 2**20} MiB",
                status=413,
                code="request_too_large",
            )
        )
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        kind = "not_found_error" if exc.status == 404 else "invalid_request_error"
        return error_response(LLMCallError(exc.reason, status=exc.status, type=kind))
    except Exception as exc:
        log.exception("gateway handler failed")
        return error_response(
            LLMCallError(f"gateway internal error: {exc!r}", status=500, type="server_error")
        )


def _job(request: web.Request) -> BoundJob:
    job = request.app[_RESOLVE](request)
    if job is None:
        raise LLMCallError(
            "no job is bound to this token (missing `Authorization: Bearer <DGM_LLM_TOKEN>`,"
            " or the job has ended)",
            status=401,
            type="authentication_error",
            code="invalid_token",
        )
    return job


async def _chat_completions(request: web.Request) -> web.StreamResponse:
    return await _served(request, _answer)


async def _messages(request: web.Request) -> web.StreamResponse:
    return await _served_anthropic(request, _answer_messages)


async def _responses(request: web.Request) -> web.StreamResponse:
    return await _served(request, _answer_responses)


async def _count_tokens(request: web.Request) -> web.StreamResponse:
    return await _served_anthropic(request, _answer_count)


Answerer = Callable[[web.Request, "BoundJob"], Awaitable[web.StreamResponse]]


async def _served_anthropic(request: web.Request, answer: Answerer) -> web.StreamResponse:
    """The Anthropic dialect: its own error shape, so the `anthropic` SDK reads the reason."""
    try:
        return await _served(request, answer)
    except LLMCallError as exc:
        return web.json_response(anthropic_dialect.error_body(exc), status=exc.status)


async def _served(request: web.Request, answer: Answerer) -> web.StreamResponse:
    job = _job(request)
    if request.content_length is not None and request.content_length > MAX_REQUEST_BYTES:
        raise web.HTTPRequestEntityTooLarge(MAX_REQUEST_BYTES, request.content_length)
    # Counted before the body is read: a job cannot make the gateway hold many bodies.
    if job.in_flight >= job.max_concurrent:
        raise LLMCallError(
            f"job {job.binding.job_id} already has {job.in_flight} calls in flight "
            f"(the cap is {job.max_concurrent}); wait for one to finish",
            status=429,
            type="rate_limit_exceeded",
            code="too_many_concurrent_calls",
        )
    job.in_flight += 1
    try:
        return await answer(request, job)
    finally:
        job.in_flight -= 1


async def _body(request: web.Request) -> Any:
    try:
        return json.loads(await request.read())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise LLMCallError(f"request body is not valid JSON: {exc}") from None


async def _answer(request: web.Request, job: BoundJob) -> web.StreamResponse:
    raw = await _body(request)
    answer, _ = await request.app[_CALL](job, raw)
    if not (isinstance(raw, dict) and raw.get("stream")):
        return web.json_response(answer)
    include_usage = bool((raw.get("stream_options") or {}).get("include_usage"))
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    for chunk in stream_chunks(answer, include_usage):
        await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response


async def _answer_messages(request: web.Request, job: BoundJob) -> web.StreamResponse:
    raw = await _body(request)
    answer, usage = await request.app[_CALL](job, anthropic_dialect.to_chat_request(raw))
    message = anthropic_dialect.to_message(answer, usage)
    if not raw.get("stream"):
        return web.json_response(message)
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    for event, data in anthropic_dialect.stream_events(message):
        await response.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
    await response.write_eof()
    return response


async def _answer_responses(request: web.Request, job: BoundJob) -> web.StreamResponse:
    raw = await _body(request)
    answer, usage = await request.app[_CALL](job, responses_dialect.to_chat_request(raw))
    response_object = responses_dialect.to_response(answer, usage, raw)
    if not raw.get("stream"):
        return web.json_response(response_object)
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    for event, data in responses_dialect.stream_events(response_object):
        await response.write(responses_dialect.event_bytes(event, data))
    await response.write_eof()
    return response


async def _answer_count(request: web.Request, job: BoundJob) -> web.StreamResponse:
    if _COUNT not in request.app:
        raise LLMCallError("count_tokens is not served here", status=404, type="not_found_error")
    return web.json_response(await request.app[_COUNT](job, await _body(request)))


async def _models(request: web.Request) -> web.Response:
    """The run's model, whatever the client asks for (the run decides): the Anthropic
    shape for a client that sends `anthropic-version` (the `anthropic` SDK always does),
    else OpenAI's."""
    job = _job(request)
    if "anthropic-version" in request.headers:
        entry = {"type": "model", "id": job.model, "display_name": job.model,
                 "created_at": "1970-01-01T00:00:00Z"}  # fmt: skip
        return web.json_response({"data": [entry], "has_more": False,
                                  "first_id": job.model, "last_id": job.model})  # fmt: skip
    entry = {"id": job.model, "object": "model", "created": 0, "owned_by": "dgm-gateway"}
    return web.json_response({"object": "list", "data": [entry]})


async def _health(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})
