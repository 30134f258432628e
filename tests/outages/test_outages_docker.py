"""Outages under a real `dgm run --dry-run` (real sandboxes, real judge): the provider down
for a while (simulated in the scripted provider: DGM_FAULT_LLM_DOWN), then the Docker engine
unreachable for a while (dgm talks to it through a proxy socket this test cuts and restores;
the machine's daemon is never touched), in one run against an undisturbed one. The run
pauses for each, resumes by itself, records nothing from either outage against any node and
ends with the undisturbed run's lineage and results."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dgm.benchmarks.registry import BENCHMARKS
from dgm.store import Run
from tests.conftest import POLYGLOT_DIR
from tests.outages.docker_proxy import DockerProxy

pytestmark = [pytest.mark.docker, pytest.mark.slow]

CONFIG = "[llm]\nmax_retries = 1\n[limits]\nmax_evals = 6\n"
ARGS = ["--dry-run", "--workers", "1", "--strategy", "dgm",
        "--subset", BENCHMARKS["polyglot"].dry_run_subset]  # fmt: skip


def _dgm(run_dir: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    config = run_dir.parent / f"{run_dir.name}.toml"
    config.write_text(CONFIG)
    env = {**os.environ, "DGM_POLYGLOT_DIR": str(POLYGLOT_DIR), **(env or {})}
    return subprocess.Popen(
        [sys.executable, "-m", "dgm", "run", str(run_dir), "--config", str(config), *ARGS],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )  # fmt: skip


def _finished_jobs(run_dir: Path) -> int:
    try:
        with Run.open(run_dir) as run:
            return len(run.jobs(["done"]))
    except Exception:
        return 0


def _kinds(run_dir: Path) -> list[str]:
    with Run.open(run_dir) as run:
        return [e["kind"] for e in run.events(limit=None)]


def _outcome(run_dir: Path) -> tuple[list, list]:
    with Run.open(run_dir) as run:
        lineage = [(n.id, n.parent_id, n.status, run.diff(n.id) if n.parent_id is not None
                    else "") for n in run.nodes()]  # fmt: skip
        results = sorted((e.node_id, e.task_id, e.resolved) for e in run.evaluations())
        return lineage, results


Fault = tuple[int, Callable[[], None], Callable[[], None]]


def _disturbed(run_dir: Path, env: dict[str, str], faults: list[Fault]) -> str:
    """Run; after `at` finished jobs each fault starts, and ends once the run has paused
    for it (or after 300 s: a loaded machine takes ~40 s an attempt, and the breaker
    trips after 3)."""
    proc = _dgm(run_dir, env)
    for at, fail, recover in faults:
        deadline = time.monotonic() + 600
        while _finished_jobs(run_dir) < at and proc.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.5)
        pauses = _kinds(run_dir).count("paused")
        fail()
        started = time.monotonic()
        while time.monotonic() - started < 300 and proc.poll() is None:
            if _kinds(run_dir).count("paused") > pauses:
                time.sleep(3)  # a probe or two while it is down
                break
            time.sleep(0.5)
        recover()
    out, _ = proc.communicate(timeout=900)
    assert proc.returncode == 0, out
    return out


@pytest.fixture(scope="module")
def calm(tmp_path_factory: pytest.TempPathFactory) -> tuple[list, list]:
    run_dir = tmp_path_factory.mktemp("calm") / "run"
    proc = _dgm(run_dir)
    out, _ = proc.communicate(timeout=900)
    assert proc.returncode == 0, out
    return _outcome(run_dir)


@pytest.fixture
def proxy() -> Iterator[DockerProxy]:
    folder = Path(tempfile.mkdtemp(prefix="dgmpx", dir="/tmp"))
    server = DockerProxy(folder / "docker.sock").start()
    yield server
    server.stop()
    folder.rmdir()


def test_a_provider_outage_then_docker_unreachable_pause_the_run_and_change_nothing(
    calm, tmp_path: Path, proxy: DockerProxy
) -> None:
    import docker

    from dgm.sandbox.orphans import list_containers

    flag = tmp_path / "llm-down"
    run_dir = tmp_path / "run"
    env = {"DGM_FAULT_LLM_DOWN": str(flag), "DOCKER_HOST": proxy.url}
    out = _disturbed(run_dir, env, [(2, flag.touch, flag.unlink),
                                    (4, proxy.cut, proxy.restore)])  # fmt: skip
    assert "PAUSED: llm:scripted down since" in out and "PAUSED: docker down since" in out, out
    with Run.open(run_dir) as run:
        events = run.events(limit=None)
        down = [(e["kind"], e["dependency"]) for e in events if e["kind"] in ("paused", "resumed")]
        assert down == [("paused", "llm:scripted"), ("resumed", "llm:scripted"),
                        ("paused", "docker"), ("resumed", "docker")]  # fmt: skip
        infra = {e["dependency"] for e in events if e["kind"] == "job_infra"}
        assert infra == {"llm:scripted", "docker"}
        assert not any("gateway" in (e.error or "") for e in run.evaluations())
        name = run.config.name
    # Nothing from either outage against any node: the undisturbed run's lineage and results.
    assert _outcome(run_dir) == calm
    assert proxy.cuts == 1
    assert not list_containers(docker.from_env(), f"dgm.run={name}")  # none left behind
