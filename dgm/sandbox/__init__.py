"""Sandboxes: hardened Docker containers, offline images, a local fallback.

from dgm.sandbox import ResourceLimits, Mount, SandboxSpec, open_sandbox, run_command

spec = SandboxSpec(image="runtime", mounts=(Mount(agent_dir, "/agent"),))
with open_sandbox(spec) as box:
    box.copy_in(task_dir, "/work")
    result = box.exec(["python3", "-m", "pytest"], timeout=300)
"""

from dgm.sandbox.images import resolve
from dgm.sandbox.session import Sandbox, choose_backend, create_sandbox, open_sandbox, run_command
from dgm.sandbox.spec import ExecResult, Mount, ResourceLimits, SandboxSpec

__all__ = [
    "ExecResult",
    "Mount",
    "ResourceLimits",
    "Sandbox",
    "SandboxSpec",
    "choose_backend",
    "create_sandbox",
    "open_sandbox",
    "resolve",
    "run_command",
]
