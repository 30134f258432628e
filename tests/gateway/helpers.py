"""Helpers shared by the gateway tests."""

from __future__ import annotations

import json
import os

import openai

from dgm.gateway import CallContext, RetryPolicy, register_script

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


def shell_agent_script(request: dict, ctx: CallContext) -> dict:
    """Asks for `cat <file named in the task>`, then reports the tool's output."""
    last = request["messages"][-1]
    if last["role"] == "tool":
        return {
            "content": f"{ctx.binding.role} saw: {last['content']}",
            "usage": {"input_tokens": 50, "output_tokens": 7, "cached_tokens": 10},
        }
    filename = last["content"].split()[-1]
    return {
        "tool_calls": [{"name": "bash", "arguments": {"command": f"cat {filename}"}}],
        "usage": {"input_tokens": 40, "output_tokens": 12},
    }


register_script("shell-agent", shell_agent_script)


def run_agent(client: openai.OpenAI, filename: str) -> str:
    """Two turns of a tool-using agent, the way a real one talks to the gateway."""
    messages = [{"role": "user", "content": f"show the file {filename}"}]
    first = client.chat.completions.create(model="ignored", messages=messages, tools=[BASH_TOOL])
    call = first.choices[0].message.tool_calls[0]
    assert first.choices[0].finish_reason == "tool_calls"
    assert json.loads(call.function.arguments) == {"command": f"cat {filename}"}
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": f"contents of {filename}"},
    ]
    second = client.chat.completions.create(model="ignored", messages=messages, tools=[BASH_TOOL])
    assert second.usage.prompt_tokens == 50 and second.usage.completion_tokens == 7
    assert second.usage.prompt_tokens_details.cached_tokens == 10
    return second.choices[0].message.content
