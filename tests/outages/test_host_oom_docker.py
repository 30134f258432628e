"""A process killed by an OOM killer outside its sandbox's own memory limit is the world's
failure (the job is re-queued); one killed by its own limit stays the agent's.

Reproduced for real, without starving the machine: the sandbox is put (through
`DGM_SANDBOX_CGROUP_PARENT`) under the cgroup of another container whose limit is far
below the sandbox's own. When the agent's command grows past that outer limit the kernel's
OOM killer kills it from outside, which is what the host's OOM killer does: the
container's own counters show a kill with no own-limit event (v2) or a peak clearly below
its own limit (v1). The reading code is also fed states recorded on a cgroup v1 machine
(Docker 20.10, kernel 6.18) and the v2 signature.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dgm.errors import InfrastructureFailure
from dgm.sandbox import oom
from dgm.sandbox.docker_backend import DockerSandbox
from dgm.sandbox.spec import ResourceLimits, SandboxSpec
from tests.outages.shell_agents import eval_shell_agent

HOG = "dd if=/dev/zero of=/dev/null bs=300M count=1"
"""dd allocates its 300 MiB block and touches it: a memory hog without Python."""

V1_OWN = """oom_kill_disable 0
under_oom 0
oom_kill 1
memory/memory.max_usage_in_bytes 67108864
memory/memory.limit_in_bytes 67108864
"""
V1_OUTSIDE = """oom_kill_disable 0
under_oom 0
oom_kill 1
memory/memory.max_usage_in_bytes 100241408
memory/memory.limit_in_bytes 536870912
"""
V2_OWN = "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\nmemory.peak 67108864\nmemory.max 67108864\n"
V2_OUTSIDE = "low 0\nhigh 0\nmax 0\noom 0\noom_kill 1\nmemory.peak 99000000\nmemory.max 536870912\n"


def test_the_recorded_counters_tell_the_host_oom_killer_from_the_sandbox_limit() -> None:
    before_v1 = oom.parse("oom_kill 0\nmemory/memory.max_usage_in_bytes 4096\n")
    assert oom.outside_kill(before_v1, oom.parse(V1_OWN)) is None
    why = oom.outside_kill(before_v1, oom.parse(V1_OUTSIDE))
    assert why and "outside the sandbox's own memory limit" in why and "512 MiB" in why
    before_v2 = oom.parse("oom 0\noom_kill 0\n")
    assert oom.outside_kill(before_v2, oom.parse(V2_OWN)) is None
    assert "oom did not" in (oom.outside_kill(before_v2, oom.parse(V2_OUTSIDE)) or "")
    # No new kill, unreadable counters, or a peak near the limit: never the world's.
    assert oom.outside_kill(oom.parse(V1_OUTSIDE), oom.parse(V1_OUTSIDE)) is None
    assert oom.outside_kill({}, {"oom_kill": 1}) is None
    near = V1_OWN.replace("67108864\nmemory/memory.limit", "66060288\nmemory/memory.limit")
    assert oom.outside_kill(before_v1, oom.parse(near)) is None
    # A container that died under a command: only a SIGKILL nothing of its own sent counts.
    assert oom.killed_from_outside({"Running": False, "ExitCode": 137, "OOMKilled": False})
    assert oom.killed_from_outside({"Running": False, "ExitCode": 137, "OOMKilled": True}) is None
    assert oom.killed_from_outside({"Running": False, "ExitCode": 0, "OOMKilled": False}) is None


@pytest.fixture(scope="module")
def base_image() -> str:
    from dgm.sandbox import images

    return images.build("base", log=lambda line: None)


@pytest.fixture
def outer_cgroup(base_image: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A 96 MiB 'host': a container whose cgroup the sandboxes are made under."""
    import docker

    client = docker.from_env()
    host = client.containers.run(base_image, ["sleep", "600"], detach=True, mem_limit="96m",
                                 memswap_limit="96m", labels={"dgm.test": "host-oom"})  # fmt: skip
    monkeypatch.setenv("DGM_SANDBOX_CGROUP_PARENT", f"/docker/{host.id}")
    try:
        yield host.id
    finally:
        host.remove(force=True)
        client.close()


def _sandbox(image: str, memory: str) -> DockerSandbox:
    spec = SandboxSpec(image=image, limits=ResourceLimits(memory=memory, disk="16m"),
                       labels={"dgm.test": "host-oom"})  # fmt: skip
    return DockerSandbox(spec)


@pytest.mark.docker
def test_a_command_killed_by_an_oom_killer_outside_its_limit_is_an_outage(
    base_image: str, outer_cgroup: str
) -> None:
    box = _sandbox(base_image, "512m")
    try:
        assert box.exec("echo fine", timeout=30).ok  # the sandbox itself works
        with pytest.raises(InfrastructureFailure) as caught:
            box.exec(HOG, timeout=60)
        assert caught.value.dependency == "memory"
        assert "the host ran out of memory" in caught.value.message
        assert "own limit 512 MiB" in caught.value.message
    finally:
        box.close()


@pytest.mark.docker
def test_a_command_that_exhausts_its_own_limit_stays_the_agents(base_image: str) -> None:
    box = _sandbox(base_image, "64m")
    try:
        result = box.exec(HOG, timeout=60)  # no exception: an ordinary result
        assert result.oom_killed and result.exit_code == 137
        assert "killed by the out-of-memory killer" in result.output
        again = box.exec("echo still here", timeout=30)  # and the counters moved on
        assert again.ok and not again.oom_killed
    finally:
        box.close()


@pytest.mark.docker
def test_a_sandbox_killed_from_outside_under_a_command_is_an_outage(base_image: str) -> None:
    """SIGKILL to the whole container from outside (as an operator or the host's OOM
    killer on cgroup v1 sends it; Docker does not call it OOMKilled): the world's."""
    box = _sandbox(base_image, "256m")
    try:
        killer = threading.Thread(target=lambda: (time.sleep(2), box.container.kill()))
        killer.start()
        with pytest.raises(InfrastructureFailure) as caught:
            box.exec("sleep 30", timeout=60)
        killer.join()
        assert caught.value.dependency == "memory"
        assert "killed from outside" in caught.value.message
    finally:
        box.close()


@pytest.mark.docker
def test_dgm_eval_does_not_score_a_task_whose_agent_the_host_oom_killer_killed(
    tmp_path: Path, outer_cgroup: str
) -> None:
    """The whole path: `dgm eval` of an agent taking 300 MiB, within its own 512 MiB but
    past the 96 MiB outer cgroup: the task is not scored, with the reason, exit 1."""
    code, said = eval_shell_agent(
        tmp_path, "big", "python3 -c 'b = [bytearray(2**20) for _ in range(300)]'", "512m"
    )
    assert code == 1, said
    assert "not scored (" in said and "outside the sandbox's own memory limit" in said, said
    assert "1 of 1 task(s) not scored" in said


@pytest.mark.docker
def test_a_one_shot_command_tells_the_host_oom_killer_from_its_own_limit(
    base_image: str, outer_cgroup: str
) -> None:
    """`run_command`, which the judge's test runs use: the same reading as a long sandbox."""
    from dgm.sandbox.session import run_command

    spec = lambda memory: SandboxSpec(  # noqa: E731
        image=base_image, limits=ResourceLimits(memory=memory, disk="16m"),
        labels={"dgm.test": "host-oom"},
    )  # fmt: skip
    with pytest.raises(InfrastructureFailure) as caught:
        run_command(spec("512m"), HOG, timeout=60)
    assert caught.value.dependency == "memory" and "own limit 512 MiB" in caught.value.message
    own = run_command(spec("64m"), HOG, timeout=60)  # under the 96 MiB 'host', its own limit
    assert own.oom_killed and own.exit_code == 137
