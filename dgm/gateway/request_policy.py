"""What of an agent's request may reach the upstream provider.

The agent picks every field of its request. Fields that only shape the model's answer
go upstream; anything else is dropped and named in the answer (`dgm_dropped_fields`)
and the exchange log, never forwarded. The dangerous ones are SDK arguments an OpenAI
client would honour: `extra_headers`, `extra_query`, `extra_body`, `timeout`,
`base_url`, `api_key`; and billing or retention switches such as `service_tier` and
`store`. The output cap is clamped to the model's own limit (from the price table), so
the budget reserves what the provider could really bill.
"""

from __future__ import annotations

from typing import Any

ALLOWED_FIELDS = frozenset(
    {
        "model",
        "messages",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "max_tokens",
        "max_completion_tokens",
        "temperature",
        "top_p",
        "stop",
        "seed",
        "response_format",
        "presence_penalty",
        "frequency_penalty",
        "reasoning_effort",
        "n",
        "stream",
        "stream_options",
    }
)
OUTPUT_FIELDS = ("max_tokens", "max_completion_tokens")


def upstream_request(raw: dict[str, Any], max_output: int) -> tuple[dict[str, Any], list[str]]:
    """The request as it may go upstream, and the names of the fields dropped.

    `max_output` is the call's clamped output cap: a larger value the agent asked for
    is lowered to it."""
    kept = {k: v for k, v in raw.items() if k in ALLOWED_FIELDS}
    dropped = sorted(k for k in raw if k not in ALLOWED_FIELDS)
    for name in OUTPUT_FIELDS:
        if isinstance(kept.get(name), int) and kept[name] > max_output:
            kept[name] = max_output
    return kept, dropped


def output_limit(requested: int, model_limit: int | None) -> int:
    """The output cap a call may use: what it asked for, at most the model's limit."""
    return requested if model_limit is None else min(requested, model_limit)
