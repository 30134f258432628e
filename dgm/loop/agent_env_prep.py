"""An agent's environment, made ready before any job runs or any LLM call is paid: says
what it will build, builds it once (progress line by line), or says it is reused."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dgm.sandbox.agent_env import AgentEnv, ensure_env, env_key, find_env
from dgm.sandbox.env_requirements import environment_of


def prepare_agent_env(agent_dir: Path, echo: Callable[[str], None]) -> AgentEnv | None:
    """The agent's `[environment]` built (or found); None when it declares none. A bad or
    unresolvable requirement raises here, naming it, before anything is spent."""
    spec = environment_of(Path(agent_dir))
    if spec.empty:
        return None
    found = find_env(spec)
    if found is not None:
        echo(f"agent environment {found.key}: reused ({len(found.resolved)} wheels)")
        return found
    shown = ", ".join(spec.requirements[:6]) + (" ..." if len(spec.requirements) > 6 else "")
    echo(f"agent environment {env_key(spec)}: will build {len(spec.requirements)} "
         f"requirement(s) from binary wheels: {shown}")  # fmt: skip
    return ensure_env(spec, progress=echo)
