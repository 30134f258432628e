"""What `dgm eval` needs before its jobs run: the agent (a folder, a run's node checked
out, or a reference agent) and a gateway for agents that call an LLM."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from dgm.errors import DgmError, NotFoundError
from dgm.jobs.evaluate import BUILTINS, AgentRef


def resolve_agent(agent: str, tmp: Path) -> tuple[AgentRef, str | None]:
    """AGENT -> (AgentRef, the run's model if it came from a run); a run's node is
    checked out under `tmp`."""
    if agent in BUILTINS:
        return AgentRef.reference(agent), None
    path = Path(agent)
    if path.is_dir():
        if not (path / "agent.toml").is_file():
            raise DgmError(f"{path} has no agent.toml", "AGENT is a folder with agent.toml")
        return AgentRef(str(path.resolve())), None
    run_dir, sep, node = agent.rpartition(":")
    if sep and Path(run_dir).is_dir():
        from dgm.store import Run

        with Run.open(run_dir) as run:
            record = run.node(node)
            dest = run.checkout(record.id, tmp / f"node-{record.id}")
            return AgentRef(str(dest), commit=record.commit), run.config.llm.model
    raise NotFoundError(
        f"agent {agent!r} is not a folder, RUN_DIR:NODE, oracle or null",
        "give an agent folder (with agent.toml), RUN_DIR:NODE, `oracle` or `null`",
    )


def start_gateway(
    model: str, out: Path, task_lookup: Callable[[str], Any], price: Any = None,
    max_retries: int = 6,
) -> Any:  # fmt: skip
    """A started gateway for `dgm eval`'s agent (the dry run's scripted model registered
    when that is the model); `price` ($/Mtok in, out) for a model the table lacks."""
    from dgm.gateway import Gateway, GatewaySettings, RetryPolicy
    from dgm.scripted.worlds import is_world_model, register

    if is_world_model(model):  # a dry run's scripted model
        register(task_lookup)
    prices = {model: price} if price else None
    retry = RetryPolicy(max_retries=max_retries)
    settings = GatewaySettings(
        model, run="eval", log_dir=out / "logs", port=None, prices=prices, retry=retry
    )
    return Gateway(settings).start().watch_outages()
