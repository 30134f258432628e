"""Client for the dgm LLM gateway: OpenAI Chat Completions over a unix socket or HTTP(S).

The gateway is the agent's only way out of its sandbox. Its address comes from the
environment: DGM_LLM_URL (unix:///path/to.sock or http://host:port/v1), DGM_LLM_TOKEN
(bearer token, may be empty) and DGM_LLM_MODEL.
"""

from __future__ import annotations

import http.client
import json
import re
import socket
import time
from typing import Dict, List, Mapping, Tuple
from urllib.parse import urlparse

RETRY_DELAYS_S = (1.0, 3.0, 8.0)  # waits before retrying a transient error (5xx, 429, reset)
REQUEST_TIMEOUT_S = 600.0
# How providers word "the prompt is longer than the model's window" (Anthropic, OpenAI,
# vLLM, llama.cpp, ...), as relayed by the gateway.
CONTEXT_ERROR = re.compile(
    r"context[ _-]?(length|window)|prompt is too long|maximum context|too many (input )?tokens"
    r"|exceeds? the (model's )?(context|maximum)|reduce the length",
    re.IGNORECASE,
)


class LLMError(Exception):
    """A call that failed for good. `status` becomes the run's exit status."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        # "budget_exceeded", "context_exceeded", "gateway_error", "time_limit", "config_error"
        self.status = status


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over a unix domain socket (the gateway socket mounted into the sandbox)."""

    def __init__(self, socket_path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.socket_path = socket_path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(self.timeout)
            sock.connect(self.socket_path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


class LLMClient:
    def __init__(self, url: str, token: str = "", model: str = "default") -> None:
        parsed = urlparse(url)
        self.url, self.token, self.model = url, token, model
        if parsed.scheme == "unix":
            self.socket_path, self.path = parsed.path, "/v1/chat/completions"
        elif parsed.scheme in ("http", "https") and parsed.hostname:
            self.socket_path, self.path = "", parsed.path.rstrip("/") + "/chat/completions"
        else:
            raise LLMError("config_error", f"DGM_LLM_URL {url!r} is not unix:// or http(s)://")
        self.parsed = parsed
        self.retry_delays = RETRY_DELAYS_S

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> LLMClient:
        url = env.get("DGM_LLM_URL", "")
        if not url:
            raise LLMError("config_error", "DGM_LLM_URL is not set: no way to reach the LLM")
        return cls(url, env.get("DGM_LLM_TOKEN", ""), env.get("DGM_LLM_MODEL") or "default")

    def chat(self, messages: List[Dict], tools: List[Dict], deadline: float) -> Dict:
        """One completion; retries transient errors until `deadline` (a time.monotonic() value)."""
        request = {"model": self.model, "messages": messages}
        if tools:  # a plain question (the diagnosis) sends none: some APIs refuse `[]`
            request["tools"] = tools
        body = json.dumps(request)
        for attempt in range(len(self.retry_delays) + 1):
            left = deadline - time.monotonic()
            if left <= 0:
                raise LLMError("time_limit", "the time limit was reached waiting for the LLM")
            try:
                status, payload = self._post(body, min(left, REQUEST_TIMEOUT_S))
            except (OSError, http.client.HTTPException) as exc:
                error, retry = LLMError("gateway_error", f"gateway unreachable: {exc!r}"), True
            else:
                if status == 200:
                    return _parse_completion(payload)
                error, retry = _http_error(status, payload), status == 429 or status >= 500
            if not retry or attempt == len(self.retry_delays):
                raise error
            time.sleep(min(self.retry_delays[attempt], max(0.0, deadline - time.monotonic())))
        raise AssertionError("unreachable")

    def _post(self, body: str, timeout: float) -> Tuple[int, bytes]:
        if self.socket_path:
            conn: http.client.HTTPConnection = UnixHTTPConnection(self.socket_path, timeout)
        elif self.parsed.scheme == "https":
            conn = http.client.HTTPSConnection(self.parsed.netloc, timeout=timeout)
        else:
            conn = http.client.HTTPConnection(self.parsed.netloc, timeout=timeout)
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        try:
            conn.request("POST", self.path, body=body.encode("utf-8"), headers=headers)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()


def _error_fields(payload: bytes) -> Tuple[str, str]:
    """(type, message) of an OpenAI-style error body, tolerating any other body."""
    try:
        error = json.loads(payload.decode("utf-8")).get("error") or {}
        if isinstance(error, dict):
            return str(error.get("type") or ""), str(error.get("message") or "")
        return "", str(error)
    except (ValueError, AttributeError):
        return "", payload[:500].decode("utf-8", errors="replace")


def _http_error(status: int, payload: bytes) -> LLMError:
    kind, message = _error_fields(payload)
    if status == 402 or kind == "budget_exceeded":
        return LLMError("budget_exceeded", message or "the gateway refused the call: budget spent")
    if status in (400, 413) and CONTEXT_ERROR.search(message):
        return LLMError("context_exceeded", f"HTTP {status}: {message}")
    return LLMError("gateway_error", f"HTTP {status} {kind}: {message}".strip())


def _parse_completion(payload: bytes) -> Dict:
    try:
        data = json.loads(payload.decode("utf-8"))
        message = data["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise LLMError(
            "gateway_error", f"malformed completion ({exc!r}): {payload[:300]!r}"
        ) from None
    if not isinstance(message, dict):
        raise LLMError("gateway_error", f"malformed completion message: {message!r}")
    return data
