"""The Ray cluster as dgm sees it: joining it, its nodes and their sandbox slots, and the
per-node checks of `dgm sandbox doctor --executor ray`.

Ray is an optional dependency (`pip install 'dgm[ray]'`); nothing imports it at module
level, so dgm without it runs as before and `--executor ray` says how to install it.
"""

from __future__ import annotations

import logging
from typing import Any

from dgm.errors import DgmError

SLOT_RESOURCE = "dgm_slot"
"""The custom resource a node offers per sandbox it may run at once; one per job."""
INSTALL = "pip install 'dgm[ray]'"
START_HINT = "start one: ray start --head --resources '{\"dgm_slot\": 4}' (see README: Ray)"


def ray_installed() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def require_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise DgmError("the ray executor needs Ray, which is not installed", INSTALL) from None
    return ray


def connect(address: str | None) -> bool:
    """Join the cluster at `address` (default: the one `ray start` left on this machine);
    True when this call connected (and so should disconnect)."""
    ray = require_ray()
    if ray.is_initialized():
        return False
    try:
        ray.init(
            address=address or "auto",
            include_dashboard=False,
            logging_level=logging.WARNING,
            log_to_driver=False,
            configure_logging=False,
        )
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise DgmError(f"no Ray cluster at {address or 'auto'}: {exc}", START_HINT) from None
    return True


def alive_nodes(slot_resource: str = SLOT_RESOURCE) -> list[dict[str, Any]]:
    """Alive nodes with their slot count, the head's first."""
    import ray

    nodes = []
    for node in ray.nodes():
        if node.get("Alive"):
            slots = int(node.get("Resources", {}).get(slot_resource, 0))
            nodes.append({"id": node["NodeID"], "ip": node["NodeManagerAddress"], "slots": slots})
    return nodes


def total_slots(slot_resource: str = SLOT_RESOURCE) -> int:
    return sum(n["slots"] for n in alive_nodes(slot_resource))


def node_report(required: tuple[str, ...]) -> dict[str, Any]:
    """On one node: its name, whether Docker answers, which of `required` images it has."""
    from dgm.executors.distributed.node_images import has_image
    from dgm.executors.distributed.worker import node_identity
    from dgm.sandbox.docker_client import docker_available

    report: dict[str, Any] = {**node_identity(), "docker": docker_available(), "images": {}}
    if report["docker"] is None:
        report["images"] = {tag: has_image(tag) for tag in required}
    return report


def node_reports(required: tuple[str, ...], slot_resource: str = SLOT_RESOURCE) -> list[dict]:
    """`node_report` run on every alive node (pinned there), with its slots."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    refs, slots = [], []
    for node in alive_nodes(slot_resource):
        pin = NodeAffinitySchedulingStrategy(node_id=node["id"], soft=False)
        task = ray.remote(node_report).options(num_cpus=0, scheduling_strategy=pin)
        refs.append(task.remote(required))
        slots.append(node["slots"])
    return [{**r, "slots": s} for r, s in zip(ray.get(refs, timeout=300), slots, strict=True)]


def doctor_checks(address: str | None, slot_resource: str = SLOT_RESOURCE) -> list[Any]:
    """Every node of the cluster: Docker reachable, the head's sandbox images, its slots."""
    from dgm.sandbox import images
    from dgm.sandbox.doctor import Check

    owns = connect(address)
    try:
        try:
            required = tuple(st.tag for st in images.status())
        except DgmError as exc:
            return [Check("images", False, exc.message, exc.hint)]
        checks = []
        for node in node_reports(required, slot_resource):
            checks += _node_checks(node, slot_resource)
        return checks
    finally:
        if owns:
            require_ray().shutdown()


def _node_checks(node: dict[str, Any], slot_resource: str) -> list[Any]:
    from dgm.sandbox.doctor import Check

    where, docker = f"node {node['name']} ({node['ip']})", node["docker"]
    fix_docker = None if docker is None else "start Docker on that node"
    checks = [Check(f"{where} docker", docker is None, docker or "reachable", fix_docker)]
    if docker is None:
        missing = [tag for tag, ok in node["images"].items() if not ok]
        detail = f"missing {', '.join(missing)}" if missing else "all present"
        fix = "jobs load them from the head, or run `dgm sandbox build` there"
        checks.append(Check(f"{where} images", not missing, detail, fix if missing else None))
    slots = node["slots"]
    fix_slots = None if slots else f"ray start ... --resources '{{\"{slot_resource}\": 2}}'"
    checks.append(Check(f"{where} slots", slots > 0, f"{slots} {slot_resource}", fix_slots))
    return checks
