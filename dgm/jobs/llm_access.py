"""How a job reaches the LLM: an endpoint description (plain data), never a live gateway.

The loop's process binds each job to its gateway (`Gateway.bind_job`) and hands the job an
`LLMAccess`: the job's URL (a unix socket the gateway serves for that job alone, or the
gateway's TCP URL) and its bearer token. A sandbox mounts the socket; a step that calls
the LLM from the job itself (the diagnosis) speaks HTTP to it with `chat`, from a thread
of the loop's process or from a worker process alike.
"""

from __future__ import annotations

import http.client
import json
import socket
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlparse

from dgm.gateway import BudgetRefused, LLMCallError

CHAT_TIMEOUT_S = 900


@dataclass(frozen=True)
class LLMAccess:
    url: str
    """`unix:///path/to/job.sock` or `http://127.0.0.1:PORT/v1` (as seen by the job)."""
    token: str
    model: str
    env: dict[str, str] = field(default_factory=dict)
    """DGM_LLM_URL, DGM_LLM_TOKEN, DGM_LLM_MODEL for an agent's environment."""
    socket_path: str | None = None
    """Host path of the job's socket, mounted into the agent's container; None for TCP."""
    container_socket_path: str | None = None
    """Where the socket appears inside the container."""

    @classmethod
    def of(cls, endpoint: Any) -> LLMAccess:
        """The description of a bound gateway `Endpoint`."""
        return cls(
            url=endpoint.env["DGM_LLM_URL"],
            token=endpoint.token,
            model=endpoint.model,
            env=dict(endpoint.env),
            socket_path=str(endpoint.socket_path) if endpoint.socket_path else None,
            container_socket_path=endpoint.container_socket_path,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> LLMAccess | None:
        return None if data is None else cls(**data)


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


def chat(access: LLMAccess, request: dict[str, Any]) -> dict[str, Any]:
    """POST a Chat Completions request; the answer body, or `LLMCallError` (`BudgetRefused`
    when the gateway refused the call for a budget) with the gateway's message."""
    parsed = urlparse(access.url)
    if parsed.scheme == "unix":
        conn: http.client.HTTPConnection = _UnixConnection(parsed.path, CHAT_TIMEOUT_S)
        path = "/v1/chat/completions"
    else:
        conn = http.client.HTTPConnection(parsed.netloc, timeout=CHAT_TIMEOUT_S)
        path = parsed.path.rstrip("/") + "/chat/completions"
    body = json.dumps({**request, "model": request.get("model", access.model)})
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {access.token}"}
    try:
        conn.request("POST", path, body=body, headers=headers)
        response = conn.getresponse()
        text = response.read().decode("utf-8", errors="replace")
    except OSError as exc:
        raise LLMCallError(
            f"the gateway at {access.url} did not answer: {exc}", status=502
        ) from None
    finally:
        conn.close()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise LLMCallError(f"the gateway answered HTTP {response.status}: {text[:300]}") from None
    if response.status >= 400 or "error" in data:
        error = data.get("error") or {}
        message = str(error.get("message") or text[:300])
        if error.get("type") == "budget_exceeded":
            raise BudgetRefused(message)
        raise LLMCallError(message, status=response.status, type=str(error.get("type")))
    return data
