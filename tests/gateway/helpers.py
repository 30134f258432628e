"""Helpers shared by the gateway tests."""

from __future__ import annotations

import os

import openai

from dgm.gateway import RetryPolicy

FAST_RETRY = RetryPolicy(max_retries=3, base_s=0.01, max_backoff_s=0.05, timeout_s=5.0)
BASH_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a shell command.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
    },
}


def openai_client(url: str, token: str) -> openai.OpenAI:
    """The official client over TCP (`url` http://...) or a unix socket (`url` a path)."""
    if url.startswith("http"):
        return openai.OpenAI(api_key=token, base_url=url, max_retries=0)
    import httpx2

    transport = httpx2.HTTPTransport(uds=url)
    return openai.OpenAI(
        api_key=token or "unused",
        base_url="http://gateway/v1",
        http_client=httpx2.Client(transport=transport),
        max_retries=0,
    )


def is_root() -> bool:
    return os.geteuid() == 0
