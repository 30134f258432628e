"""A tiny stand-in for the dgm LLM gateway, so the agent's tests need no network or API.

`script(request) -> (http_status, body)` decides each answer; the server records requests.
Serves on a unix socket (as in a sandbox) or on 127.0.0.1 TCP.
"""

from __future__ import annotations

import json
import os
import shutil
import socketserver
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Callable, Dict, List, Tuple

Script = Callable[[Dict], Tuple[int, Dict]]


def completion(content=None, tool_calls=None) -> Tuple[int, Dict]:
    """An HTTP 200 chat completion whose message has `content` and/or `tool_calls`."""
    message = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body = {
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    return 200, body


def tool_call(name: str, call_id: str = "call_1", **arguments) -> Tuple[int, Dict]:
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    return completion(tool_calls=[call])


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length).decode("utf-8"))
        gateway = self.server.gateway  # type: ignore[attr-defined]
        gateway.requests.append({"path": self.path, "headers": dict(self.headers), "body": request})
        status, body = gateway.script(request)
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:  # keep test output quiet
        pass


class _UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self):
        conn, _ = super().get_request()
        return conn, ("local", 0)  # BaseHTTPRequestHandler expects a (host, port) address


class _TCPServer(socketserver.ThreadingMixIn, HTTPServer):
    daemon_threads = True


class FakeGateway:
    def __init__(self, script: Script, unix: bool = True) -> None:
        self.script = script
        self.requests: List[Dict] = []
        self._dir = tempfile.mkdtemp(prefix="fakegw-")
        if unix:
            path = os.path.join(self._dir, "llm.sock")
            self.server = _UnixHTTPServer(path, _Handler)
            self.url = "unix://" + path
        else:
            self.server = _TCPServer(("127.0.0.1", 0), _Handler)
            self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.server.gateway = self  # type: ignore[attr-defined]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def env(self) -> Dict[str, str]:
        return {"DGM_LLM_URL": self.url, "DGM_LLM_TOKEN": "test-token", "DGM_LLM_MODEL": "fake"}

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> FakeGateway:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
