"""Whether a child's agent environment differs from its parent's, said in one line for the
node's record (`dgm show`, the report): a changed environment is new code that runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dgm.errors import DgmError
from dgm.sandbox.agent_env import env_key, find_env
from dgm.sandbox.env_requirements import EnvironmentSpec, environment_of


def environment_change(parent: Path, child: Path) -> str | None:
    """'requirements +a==2 -a==1 (environment 1f2e..., 12 wheels)', or None if unchanged."""
    try:
        before, after = environment_of(parent), environment_of(child)
    except DgmError as exc:
        return f"CHANGED, and refused: {exc.message}"
    if before == after:
        return None
    added = [r for r in after.requirements if r not in before.requirements]
    added += [f"apt:{p}" for p in after.apt if p not in before.apt]
    removed = [r for r in before.requirements if r not in after.requirements]
    removed += [f"apt:{p}" for p in before.apt if p not in after.apt]
    built = find_env(after)
    where = f"environment {env_key(after)}" if not after.empty else "no environment"
    wheels = f", {len(built.resolved)} wheels" if built else ""
    change = " ".join([f"+{r}" for r in added] + [f"-{r}" for r in removed])
    return f"CHANGED: {change} ({where}{wheels})"


def spec_data(spec: EnvironmentSpec) -> dict[str, Any]:
    """An environment spec as job data (a frozen run's seed environment)."""
    return {"requirements": list(spec.requirements), "apt": list(spec.apt)}


def spec_of(data: dict[str, Any] | None) -> EnvironmentSpec | None:
    if data is None:
        return None
    return EnvironmentSpec(tuple(data.get("requirements", ())), tuple(data.get("apt", ())))
