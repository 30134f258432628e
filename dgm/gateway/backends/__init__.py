"""Backend selection by model string.

| model string | backend |
| --- | --- |
| `anthropic/<model>` | Anthropic Messages API via the `anthropic` SDK (`ANTHROPIC_API_KEY`) |
| `openai/<model>` | OpenAI Chat Completions via the `openai` SDK (`OPENAI_API_KEY`) |
| `openai-compatible/<model>@<base_url>` | any OpenAI-compatible server (vLLM, Ollama, ...) |
| `scripted/<name>` or `scripted/@rules.json` | deterministic test double |
| `replay/<run dir, log dir or .jsonl>` | answers recorded by an earlier run |

Keys are read from the dgm process's environment only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from dgm.errors import ConfigError
from dgm.gateway.backends.base import Backend, BackendResult, CallContext
from dgm.gateway.backends.scripted import register_script, registered_scripts
from dgm.key_redaction import KEY_VARIABLES

__all__ = [
    "Backend",
    "BackendResult",
    "CallContext",
    "KEY_VARIABLES",
    "make_backend",
    "provider_of",
    "register_script",
    "registered_scripts",
]

PROVIDERS = ("anthropic", "openai", "openai-compatible", "scripted", "replay")


def provider_of(model: str) -> tuple[str, str]:
    """Split `provider/rest`, or raise a ConfigError that lists the forms allowed."""
    provider, _, rest = model.partition("/")
    if provider not in PROVIDERS or not rest:
        raise ConfigError(
            f"unknown model string {model!r}",
            "use anthropic/<model>, openai/<model>, openai-compatible/<model>@<base_url>, "
            "scripted/<script> or replay/<run dir>",
        )
    return provider, rest


def make_backend(model: str, timeout_s: float, env: Mapping[str, str] | None = None) -> Backend:
    """The backend for a model string; fails early on a bad string or a missing key."""
    env = os.environ if env is None else env
    provider, rest = provider_of(model)
    if provider == "scripted":
        from dgm.gateway.backends.scripted import ScriptedBackend

        return ScriptedBackend.from_spec(rest)
    if provider == "replay":
        from dgm.gateway.backends.replay import ReplayBackend

        return ReplayBackend(Path(rest))
    if provider == "anthropic":
        from dgm.gateway.backends.anthropic_backend import AnthropicBackend

        return AnthropicBackend(
            rest, _key(env, "ANTHROPIC_API_KEY", model), env.get("ANTHROPIC_BASE_URL"), timeout_s
        )
    from dgm.gateway.backends.openai_backend import OpenAIBackend

    if provider == "openai":
        return OpenAIBackend(
            rest,
            _key(env, "OPENAI_API_KEY", model),
            env.get("OPENAI_BASE_URL"),
            timeout_s,
            official=True,
        )
    name, _, base_url = rest.rpartition("@")
    if not name or not base_url.startswith(("http://", "https://")):
        raise ConfigError(
            f"model string {model!r} needs a base URL",
            "write openai-compatible/<model>@<base_url>, "
            "e.g. openai-compatible/qwen2.5-coder@http://localhost:11434/v1",
        )
    # Local servers need no key; hosted ones (OpenRouter, ...) read OPENAI_COMPATIBLE_API_KEY.
    key = env.get("OPENAI_COMPATIBLE_API_KEY") or "no-key"
    return OpenAIBackend(name, key, base_url, timeout_s, official=False)


def _key(env: Mapping[str, str], variable: str, model: str) -> str:
    key = env.get(variable, "").strip()
    if not key:
        raise ConfigError(
            f"{variable} is not set, and model {model!r} needs it",
            f"export {variable}=... in the shell that runs dgm (the key stays in the dgm "
            "process: it never reaches a sandbox, a log or the store)",
        )
    return key
