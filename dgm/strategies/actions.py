"""The four answers a strategy can give when asked what to do next."""

from __future__ import annotations

from dataclasses import dataclass

from dgm.strategies.state import NodeId


@dataclass(frozen=True)
class Expand:
    """Ask agent `parent` to improve its own code, making a child. `group`: the other
    parents improved alongside it (GEA), whose experience its improvement step sees."""

    parent: NodeId
    group: tuple[NodeId, ...] = ()


@dataclass(frozen=True)
class Evaluate:
    """Run agent `node` on benchmark task `task`."""

    node: NodeId
    task: str


@dataclass(frozen=True)
class Wait:
    """Nothing to start now; ask again when a running job finishes."""


@dataclass(frozen=True)
class Stop:
    """The strategy is done: start nothing more, let running jobs finish."""

    reason: str = "strategy finished"


Job = Expand | Evaluate
"""An action that becomes a job on a worker."""

Action = Expand | Evaluate | Wait | Stop

WAIT = Wait()
