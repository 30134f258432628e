"""`dgm sandbox doctor`: what is present, what is missing, and the command that fixes it."""

from __future__ import annotations

import shutil
from dataclasses import dataclass

from dgm.errors import DgmError
from dgm.sandbox.docker_client import docker_available
from dgm.sandbox.local_backend import bwrap_path


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str | None = None


def run_checks() -> list[Check]:
    checks = []
    reason = docker_available()
    checks.append(
        Check(
            "docker engine",
            reason is None,
            "reachable: the strong sandbox backend is available" if reason is None else reason,
            None if reason is None else "start Docker, or run with sandbox.backend = 'local'",
        )
    )
    bwrap = bwrap_path()
    checks.append(
        Check(
            "local backend",
            True,
            f"WEAKER than docker; bubblewrap at {bwrap} (namespaces, no network)"
            if bwrap
            else "WEAKEST: no bubblewrap, plain subprocesses with rlimits (network reachable)",
            None if bwrap else "apt-get install -y bubblewrap",
        )
    )
    has_mmdebstrap = shutil.which("mmdebstrap") is not None
    checks.append(
        Check(
            "mmdebstrap",
            has_mmdebstrap,
            "installed (offline image builds)" if has_mmdebstrap else "missing",
            None if has_mmdebstrap else "apt-get install -y mmdebstrap",
        )
    )
    if reason is None:
        checks += _image_checks()
    return checks + _env_checks()


def _env_checks() -> list[Check]:
    """Agent environments built so far (agent.toml `[environment]`), one line each."""
    from dgm.sandbox.agent_env import env_root, list_envs

    envs = list_envs()
    if not envs:
        return [Check("agent environments", True, f"none built yet in {env_root()} (built on "
                      "first use of an agent whose agent.toml has [environment])")]  # fmt: skip
    checks = []
    for env in envs:
        wanted = ", ".join(env.get("requirements", [])[:4])
        more = " ..." if len(env.get("requirements", [])) > 4 else ""
        detail = (f"{wanted}{more}: {len(env.get('resolved', []))} wheels, "
                  f"{env.get('size_mib', '?')} MiB, built in {env.get('build_s', '?')}s "
                  f"at {env['path']}")  # fmt: skip
        checks.append(Check(f"agent env {env.get('key')}", True, detail))
    return checks


def _image_checks() -> list[Check]:
    from dgm.sandbox import images

    try:
        statuses = images.status()
    except DgmError as exc:
        return [Check("images", False, exc.message, exc.hint)]
    checks = []
    for st in statuses:
        stale = f"; {len(st.stale)} older tag(s): {', '.join(st.stale)}" if st.stale else ""
        checks.append(
            Check(
                f"image {st.name}",
                st.present,
                (f"{st.tag} present" if st.present else f"{st.tag} missing") + stale,
                None if st.present else f"dgm sandbox build {st.name}",
            )
        )
    return checks
