"""Agent environments on every node, the way images travel (node_images.py): an
environment a job needs and this node lacks is asked of the head, which builds it if it
has to (the head has the package index; a node need not), and its folder comes through
Ray as a tar, unpacked here under the node's own environment root.

The worker registers the head as this process's remote source (`agent_env.set_remote_source`),
so every `ensure_env` of the job (its agent run, a child's smoke test) finds, receives or,
only if the head cannot give it, builds.
"""

from __future__ import annotations

from typing import Any

from dgm.jobs.agent_env_change import spec_data, spec_of
from dgm.sandbox.agent_env import RemoteSource, ensure_env, env_key, pack_env
from dgm.sandbox.env_requirements import EnvironmentSpec


def save_env(data: dict[str, Any]) -> bytes:
    """The environment named by `data` as a tar, built first if the head lacks it (runs on
    the head)."""
    spec = spec_of(data)
    env = ensure_env(spec) if spec is not None else None
    if env is None:
        raise ValueError("an empty environment is never shipped")
    return pack_env(env)


def head_source(head_node: str, received: dict[str, str]) -> RemoteSource:
    """Fetch from the head node through Ray; each key received is noted in `received`."""

    def fetch(spec: EnvironmentSpec) -> bytes:
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        on_head = NodeAffinitySchedulingStrategy(node_id=head_node, soft=False)
        remote = ray.remote(save_env).options(num_cpus=0, scheduling_strategy=on_head)
        data = ray.get(remote.remote(spec_data(spec)))
        received[env_key(spec)] = "loaded"
        return data

    return fetch
