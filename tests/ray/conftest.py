from __future__ import annotations

import pytest

from tests.needs import missing


@pytest.fixture(scope="module")
def cluster():
    """Two nodes, one sandbox slot each: `head` (where this process connects) and `node-b`."""
    try:
        import ray  # noqa: F401
    except ImportError as exc:
        missing("ray", f"the ray extra is not installed: {exc}")
    from tests.ray.cluster import LocalCluster

    nodes = LocalCluster()
    try:
        nodes.add("head", 1)
        nodes.wait_alive(1)
        nodes.add("node-b", 1)
        nodes.wait_alive(2)
        yield nodes
    finally:
        nodes.shutdown()


@pytest.fixture
def tiny_seed(tmp_path):
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "agent.toml").write_text('[agent]\nname = "tiny"\n[commands]\nsolve = "true"\n')
    (seed / "agent.py").write_text("print('hi')\n")
    return seed
