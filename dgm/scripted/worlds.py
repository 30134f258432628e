"""The dry run's scripted worlds: `dgm run --dry-run --dry-run-world NAME`.

Each world is a scripted model (`scripted/<name>` behind the gateway) that plays every
role of a run so that one mechanism shows what it is for, judged by the real hidden
tests. A factory takes the benchmark's task lookup and returns the (stateless) script.
The default is `hyperagent` with `--self-improve agent`, else `capability`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dgm.errors import DgmError
from dgm.scripted.dry_run import DryRunScript
from dgm.scripted.hyperagent import HyperagentScript
from dgm.scripted.shell_world import ShellWorldScript
from dgm.scripted.toolmaker import ToolmakerScript

WORLDS: dict[str, Callable[[Any], Any]] = {
    "capability": DryRunScript,  # self-improvement adds a search tool (dry_run.py)
    "toolmaker": ToolmakerScript,  # runtime tools, kept by a harvest (toolmaker.py)
    "hyperagent": HyperagentScript,  # the agent's own improve procedure (hyperagent.py)
    "shell": ShellWorldScript,  # any agent with a shell, e.g. third-party ones (shell_world.py)
}
DEFAULT_WORLD = "capability"


def world_model(name: str | None, self_improve_mode: str = "dgm") -> str:
    """The model string of world `name` (default: hyperagent in agent mode, else
    capability)."""
    name = name or ("hyperagent" if self_improve_mode == "agent" else DEFAULT_WORLD)
    if name not in WORLDS:
        raise DgmError(f"no dry-run world named {name!r}", f"choose one of: {', '.join(WORLDS)}")
    return f"scripted/{name}"


def is_world_model(model: str | None) -> bool:
    return bool(model) and str(model).startswith("scripted/") and str(model)[9:] in WORLDS


def register(task_lookup: Any) -> None:
    """Register every world as `scripted/<name>` for this process."""
    from dgm.gateway import register_script

    for name, factory in WORLDS.items():
        register_script(name, factory(task_lookup))
