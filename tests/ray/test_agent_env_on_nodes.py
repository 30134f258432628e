"""Agent environments travel to Ray nodes the way images do: a node that cannot reach the
package index (pip there has no index and no wheel folder) runs an agent with an
environment it never built, received from the head, which built it once for the cluster."""

from __future__ import annotations

import json

import pytest

from tests.needs import image_or_missing, missing

pytestmark = [pytest.mark.ray, pytest.mark.docker, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def cut_off_cluster(tmp_path_factory):
    """`head` (no sandbox slots: every job goes to node-b) and `node-b`, whose pip has no
    index; each node keeps environments in its own folder."""
    try:
        import ray  # noqa: F401
    except ImportError as exc:
        missing("ray", f"the ray extra is not installed: {exc}")
    from tests.ray.cluster import LocalCluster

    roots = tmp_path_factory.mktemp("envs")
    nodes = LocalCluster()
    try:
        nodes.add("head", 0, {"DGM_AGENT_ENV_DIR": str(roots / "head")})
        nodes.wait_alive(1)
        nodes.add(
            "node-b",
            1,
            {
                "DGM_AGENT_ENV_DIR": str(roots / "node-b"),
                "PIP_NO_INDEX": "1",
                "PIP_FIND_LINKS": "",
                "PIP_INDEX_URL": "http://127.0.0.1:9/",
            },
        )
        nodes.wait_alive(2)
        yield nodes, roots
    finally:
        nodes.shutdown()


def test_a_node_without_the_index_runs_an_agent_with_its_environment(
    cut_off_cluster, tmp_path, monkeypatch
):
    from dgm.executors.distributed.ray_executor import RayExecutor
    from dgm.executors.protocol import Ticket, Work
    from dgm.sandbox.agent_env import env_key
    from dgm.sandbox.env_requirements import environment_of
    from tests.ray.env_jobs import AgentEnvJob, run_agent_env_job

    cluster, roots = cut_off_cluster
    image = image_or_missing("runtime")
    monkeypatch.setenv("DGM_AGENT_ENV_DIR", str(roots / "head"))
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "requirements.txt").write_text("tomli-w==1.0.0\n")
    (agent / "agent.py").write_text(
        'import tomli_w\nopen("/out/said.txt", "w").write(tomli_w.dumps({"ok": 1}))\n'
    )
    (agent / "agent.toml").write_text(
        '[commands]\nsolve = "{python} {agent_dir}/agent.py"\n'
        '[environment]\nrequirements = "requirements.txt"\n'
    )
    key = env_key(environment_of(agent))
    placed: list[dict] = []
    with RayExecutor(1, address=cluster.address,
                     on_placed=lambda job_id, returned, _s: placed.append(
                         {"node": returned.node["name"], "envs": returned.environments})
                     ) as executor:  # fmt: skip
        job = AgentEnvJob(str(agent), image, str(tmp_path / "log" / "job-1"))
        executor.submit(Ticket(1, None, Work(run_agent_env_job, job, lambda r, e: (r, e))))
        result, error = executor.next_completion().outcome
    assert error is None, error
    assert result["said"] == "ok = 1\n", result
    assert result["environment"]["key"] == key
    assert placed == [{"node": "node-b", "envs": {key: "loaded"}}], placed
    for node in ("head", "node-b"):  # built once, on the head; unpacked on the node
        record = json.loads((roots / node / key / "env.json").read_text())
        assert record["resolved"][0]["name"] == "tomli_w", record
