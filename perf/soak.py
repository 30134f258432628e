"""Soak: a few hundred jobs with the world failing under them on a schedule, against the
same run undisturbed.

    python perf/soak.py [--evals 150] [--outage-s 4] [--containers 3]

Both runs are a `dgm` meta loop (greedy strategy, one worker) whose jobs are the tests'
deterministic fake jobs, made real where the faults bite: each job calls the LLM through a
real gateway bound to a stand-in provider on 127.0.0.1, talks to the Docker engine
through a proxy socket, and writes to the run's disk. With `--containers K` about one job
in K (by job id, the same in both runs) starts a real hardened sandbox container (dgm's
DockerSandbox, the base image) through the proxy and runs a command in it; the others
ping the engine. Faults, by jobs finished: the provider down, the Docker proxy cut (the
machine's daemon is never touched), the disk "full" (the job's write fails with ENOSPC
while the host's free-space check reads full), with containers the kernel's OOM killer
acting from outside two container attempts (an outer 64 MiB cgroup, see
tests/outages/test_host_oom_docker.py), and the dgm process killed with SIGKILL (sandbox
containers of it may be running) and resumed with `dgm resume`'s code path. At the end:
the same lineage and per-task results as the undisturbed run, no orphan container, and
the dgm process's memory, open files and the run's disk at start and end of each session,
and the time lost to pauses.
"""

from __future__ import annotations

import argparse
import errno
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FLAGS = "SOAK_FLAGS"
"""Folder of fault flags the parent sets: `disk-full` (the LLM and Docker faults are the
stand-in's and the proxy's own)."""


# -- the child: one dgm session ----------------------------------------------------------
def _metrics(run_dir: Path) -> dict[str, float]:
    rss = 0.0
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) / 1024
    disk = sum(p.stat().st_size for p in run_dir.rglob("*") if p.is_file())
    return {"rss_mb": round(rss, 1), "open_files": len(os.listdir("/proc/self/fd")),
            "disk_mb": round(disk / 2**20, 2), "ts": time.time()}  # fmt: skip


CONTAINER_EVERY = "SOAK_CONTAINER_EVERY"
"""With `--containers K`: about one job in K (by its id, the same in both runs) starts a
real sandbox container through the proxy socket and runs a command in it."""


def _starts_container(job_id: str) -> bool:
    every = int(os.environ.get(CONTAINER_EVERY) or 0)
    return every > 0 and int(hashlib.sha256(job_id.encode()).hexdigest(), 16) % every == 0


def _run_container(job: Any, flags: Path) -> None:
    """A hardened sandbox on the base image (dgm's own DockerSandbox, through the proxy):
    `dd` takes 16 MiB. Under the `host-oom` fault the sandbox is made under a 64 MiB outer
    cgroup (a container's) and `dd` takes 128 MiB, within its own 256 MiB limit: the
    kernel's OOM killer kills it from outside, as the host's would."""
    from dgm.sandbox.docker_backend import DockerSandbox
    from dgm.sandbox.spec import ResourceLimits, SandboxSpec

    oom = flags / "host-oom"
    outer = oom.read_text().strip() if oom.exists() else ""
    size = "16M"
    if outer:
        os.environ["DGM_SANDBOX_CGROUP_PARENT"], size = f"/docker/{outer}", "128M"
        hits = flags / "host-oom-hits"
        left = int(hits.read_text()) - 1 if hits.exists() else 0
        hits.write_text(str(left))
    else:
        os.environ.pop("DGM_SANDBOX_CGROUP_PARENT", None)
    spec = SandboxSpec(image=os.environ["SOAK_IMAGE"],
                       limits=ResourceLimits(memory="256m", disk="16m", cpus=0.5),
                       labels={"dgm.run": "soak", "dgm.job": job.job_id})  # fmt: skip
    with (flags / "containers").open("a") as log:
        log.write(job.job_id + "\n")
    try:
        box = DockerSandbox(spec)
        try:
            result = box.exec(f"dd if=/dev/zero of=/dev/null bs={size} count=1", timeout=60)
            if not result.ok:
                raise RuntimeError(f"the soak's container command failed: {result.output[-300:]}")
        finally:
            box.close()
    finally:
        if outer and int((flags / "host-oom-hits").read_text()) <= 0:
            oom.unlink(missing_ok=True)  # the fault lasted this many container attempts


def run_soak_job(job: Any) -> Any:
    """A fake job that needs the Docker engine and the disk as a real one does."""
    import docker

    from tests.loop.fake_jobs import run_fake_job

    result = run_fake_job(job)  # its LLM calls first: an outage after them loses money
    flags = Path(os.environ[FLAGS])
    if _starts_container(job.job_id):
        _run_container(job, flags)
    else:
        client = docker.from_env(timeout=5)
        try:
            client.ping()  # the harness talks to the engine (through the proxy)
        finally:
            client.close()
    if (flags / "disk-full").exists():
        raise OSError(errno.ENOSPC, "No space left on device", job.log_dir)
    Path(job.log_dir).mkdir(parents=True, exist_ok=True)
    (Path(job.log_dir) / "result.txt").write_text(job.job_id)
    return result


def _watch_disk_flag(flags: Path) -> None:
    """While `disk-full` is set, the host's free-space check reads the disk as full (the
    parent cannot fill the machine's real disk)."""
    import dgm.loop.failures as failures

    measured = failures.disk_usage
    failures.disk_usage = lambda path: (  # type: ignore[assignment]
        (0, measured(path)[1]) if (flags / "disk-full").exists() else measured(path)
    )


def child(run_dir: Path, model: str, evals: int, metrics_out: Path, resume: bool) -> None:
    from dgm.config import Price, RunConfig
    from dgm.gateway import Gateway, RetryPolicy
    from dgm.loop.meta_loop import MetaLoop
    from dgm.store import Run
    from tests.loop.fake_jobs import FakeJobs

    class SoakJobs(FakeJobs):
        run_job = staticmethod(run_soak_job)

    _watch_disk_flag(Path(os.environ[FLAGS]))
    if resume:
        run = Run.open(run_dir)
    else:
        overrides = {"workers": 1, "strategy.name": "greedy", "limits.max_evals": evals,
                     "llm.model": model, "sandbox.backend": "local"}  # fmt: skip
        config = RunConfig(name="soak").with_overrides(overrides)
        config = config.with_price(model, Price(input=1.0, output=1.0))
        seed = Path(tempfile.mkdtemp()) / "seed"
        seed.mkdir()
        (seed / "agent.toml").write_text('[agent]\nname = "soak"\n[commands]\nsolve = "true"\n')
        run = Run.create(run_dir, config, seed)
    gateway = Gateway.from_config(run.config, run="soak", log_dir=None,
                                  on_usage=run.record_usage, spent_usd=run.spend_usd())  # fmt: skip
    gateway.retry = gateway._calls.retry = RetryPolicy(max_retries=1, base_s=0.05, timeout_s=5)
    gateway.start().watch_outages()
    jobs = SoakJobs(run, gateway=gateway, gives_up=True, delay=(0.02, 0.05), calls=2)
    loop = MetaLoop(run, jobs=jobs)
    started = _metrics(run_dir)  # with the gateway and the loop built: what a run holds
    metrics_out.write_text(json.dumps({"start": started}))  # a killed session leaves this
    samples: list[float] = []

    fds: list[int] = []

    def sample() -> None:  # memory through the session, to tell a leak from a warm-up
        while True:
            now = _metrics(run_dir)
            samples.append(now["rss_mb"])
            fds.append(int(now["open_files"]))
            time.sleep(2.0)

    threading.Thread(target=sample, daemon=True).start()
    loop.breakers.first_probe_s, loop.breakers.max_probe_s = 0.5, 2.0
    try:
        summary = loop.run()
    finally:
        gateway.stop()
    metrics_out.write_text(json.dumps({"start": started, "end": _metrics(run_dir),
                                       "stop": summary.stop_reason, "rss": samples,
                                       "fds": fds}))  # fmt: skip


# -- the parent: the schedule of faults --------------------------------------------------
def _done(run_dir: Path) -> int:
    import sqlite3

    try:
        with sqlite3.connect(f"file:{run_dir / 'run.sqlite'}?mode=ro", uri=True) as db:
            return db.execute("SELECT COUNT(*) FROM jobs WHERE state='done'").fetchone()[0]
    except sqlite3.Error:
        return 0


def _session(run_dir: Path, model: str, evals: int, env: dict[str, str], n: int,
             resume: bool = False) -> tuple[subprocess.Popen, Path]:  # fmt: skip
    out = run_dir.parent / f"{run_dir.name}-metrics-{n}.json"
    args = [sys.executable, __file__, "--child", str(run_dir), "--model", model,
            "--evals", str(evals), "--metrics", str(out)]  # fmt: skip
    args += ["--resume"] if resume else []
    return subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True), out  # fmt: skip


def _outcome(run_dir: Path) -> tuple[list, list]:
    from dgm.store import Run

    with Run.open(run_dir) as run:
        lineage = [(n.id, n.parent_id, run.diff(n.id) if n.parent_id is not None else "")
                   for n in run.nodes()]  # fmt: skip
        results = sorted((e.node_id, e.task_id, e.resolved) for e in run.evaluations())
    return lineage, results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--evals", type=int, default=150)
    parser.add_argument("--outage-s", type=float, default=4.0)
    parser.add_argument(
        "--containers",
        type=int,
        default=0,
        metavar="K",
        help="about one job in K starts a real sandbox container (0: none)",
    )
    parser.add_argument("--child")
    parser.add_argument("--model")
    parser.add_argument("--metrics")
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    if args.child:
        child(Path(args.child), args.model, args.evals, Path(args.metrics), args.resume)
        return

    from tests.outages.docker_proxy import DockerProxy
    from tests.outages.standin import StandIn

    work = Path(tempfile.mkdtemp(prefix="dgmsoak", dir="/tmp"))
    flags = work / "flags"
    flags.mkdir()
    standin = StandIn().start()
    proxy = DockerProxy(work / "docker.sock").start()
    env = {**os.environ, FLAGS: str(flags), "DOCKER_HOST": proxy.url,
           "PYTHONPATH": str(ROOT), CONTAINER_EVERY: str(args.containers)}  # fmt: skip
    if args.containers:
        from dgm.sandbox import images

        env["SOAK_IMAGE"] = images.build("base", log=lambda line: None)  # built: a no-op
    t0 = time.monotonic()
    proc, _ = _session(work / "calm", standin.model, args.evals, env, 0)
    assert proc.wait() == 0, proc.stderr.read()[-2000:] if proc.stderr else ""
    calm_s = time.monotonic() - t0
    total = _done(work / "calm")

    soak = work / "soak"
    faults: list[str] = []
    cut = lambda on: proxy.cut() if on else proxy.restore()  # noqa: E731
    stops = [(total * 1 // 6, "provider down", lambda on: setattr(standin, "down", on)),
             (total * 2 // 6, "Docker proxy cut", cut),
             (total * 3 // 6, "disk full", lambda on: (flags / "disk-full").touch() if on
              else (flags / "disk-full").unlink())]  # fmt: skip
    t0 = time.monotonic()
    proc, metrics_a = _session(soak, standin.model, args.evals, env, 1)
    for at, name, switch in stops:
        while _done(soak) < at and proc.poll() is None:
            time.sleep(0.05)
        switch(True)
        time.sleep(args.outage_s)
        switch(False)
        faults.append(f"{name} for {args.outage_s:g} s after {at} jobs")
    kill_at = total * 4 // 6
    if args.containers:
        faults.append(_host_oom(soak, proc, flags, total * 7 // 12))
    while _done(soak) < kill_at and proc.poll() is None:
        time.sleep(0.05)
    waited = time.monotonic() + (30 if args.containers else 0)
    while _orphans() == 0 and time.monotonic() < waited and proc.poll() is None:
        time.sleep(0.05)  # kill it with a sandbox container running: it is left behind
    running = _orphans()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    faults.append(f"dgm process killed (SIGKILL) after {kill_at} jobs ({running} sandbox "
                  "container(s) running then), then resumed")  # fmt: skip
    proc, metrics_b = _session(soak, standin.model, args.evals, env, 2, resume=True)
    assert proc.wait() == 0, proc.stderr.read()[-2000:] if proc.stderr else ""
    soak_s = time.monotonic() - t0
    standin.stop()
    proxy.stop()

    from dgm.store import Run

    same = _outcome(soak) == _outcome(work / "calm")
    with Run.open(soak) as run:
        events = run.events(limit=None)
        infra = [e for e in events if e["kind"] == "job_infra"]
        lost = run.lost_to_outages_usd()
        spent = run.spend_usd()
        jobs = len(run.jobs(["done"]))
    pauses = [e for e in events if e["kind"] == "paused"]
    paused_s = sum(e.get("down_s", 0) for e in events if e["kind"] == "resumed")
    by_dep: dict[str, int] = {}
    for e in infra:
        by_dep[e["dependency"]] = by_dep.get(e["dependency"], 0) + 1
    orphans = _orphans()
    sessions = [json.loads(p.read_text()) for p in (metrics_a, metrics_b) if p.exists()]
    print(f"jobs: {jobs} (undisturbed run: {total}, {calm_s:.1f} s; soak {soak_s:.1f} s)")
    print("faults: " + "; ".join(faults))
    print(
        f"re-queued for outages: {len(infra)} ({', '.join(f'{k} {v}' for k, v in by_dep.items())})"
    )
    print(f"pauses: {len(pauses)} ({', '.join(sorted({e['dependency'] for e in pauses}))}), "
          f"{paused_s:.1f} s paused in all; lost to outages ${lost:.6f} "
          f"(of ${spent:.6f} spent)")  # fmt: skip
    print(f"same lineage and per-task results as the undisturbed run: {same}")
    print(f"orphan containers: {orphans}")
    if args.containers:
        started = (
            (flags / "containers").read_text().split() if (flags / "containers").exists() else []
        )
        print(f"sandbox containers started: {len(started)} (both runs; one job in about "
              f"{args.containers})")  # fmt: skip
    for i, m in enumerate(sessions, 1):
        s, e = m["start"], m.get("end")
        if e is None:
            print(
                f"session {i}: rss {s['rss_mb']} MB, open files {s['open_files']} at start; "
                "killed before its end figures"
            )
            continue
        print(f"session {i}: rss {s['rss_mb']} -> {e['rss_mb']} MB, open files "
              f"{s['open_files']} -> {e['open_files']}, run disk {s['disk_mb']} -> "
              f"{e['disk_mb']} MB ({m['stop']})")  # fmt: skip
        rss = m.get("rss") or []
        if len(rss) >= 4:
            q = len(rss) // 4
            print(f"  rss every 2 s: {rss[:3]} ... {rss[-3:]}; quarters' means "
                  f"{[round(sum(rss[i * q:(i + 1) * q]) / q, 1) for i in range(4)]}")  # fmt: skip
        fds = m.get("fds") or []
        if len(fds) >= 4:
            q = len(fds) // 4
            print(f"  open files every 2 s: {fds[:3]} ... {fds[-3:]}; quarters' max "
                  f"{[max(fds[i * q:(i + 1) * q]) for i in range(4)]}")  # fmt: skip
    if not same:
        sys.exit(1)


def _host_oom(soak: Path, proc: subprocess.Popen, flags: Path, at: int) -> str:
    """From `at` jobs on, the next 2 container attempts run under a 64 MiB outer cgroup
    (an idle container's, made on the machine's daemon, not through the proxy)."""
    import docker

    while _done(soak) < at and proc.poll() is None:
        time.sleep(0.05)
    client = docker.from_env()
    outer = client.containers.run(os.environ.get("SOAK_OUTER_IMAGE") or _base_image(),
                                  ["sleep", "3600"], detach=True, mem_limit="64m",
                                  memswap_limit="64m", labels={"dgm.soak": "outer"})  # fmt: skip
    try:
        (flags / "host-oom-hits").write_text("2")
        (flags / "host-oom").write_text(outer.id)
        deadline = time.monotonic() + 600
        while (flags / "host-oom").exists() and proc.poll() is None:
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        parent = f"/docker/{outer.id}"
        while time.monotonic() < deadline:  # its last sandbox gone before the outer cgroup
            listed = client.api.containers(filters={"label": "dgm.run=soak"})
            if not any(_cgroup_parent(client, c["Id"]) == parent for c in listed):
                break
            time.sleep(0.1)
    finally:
        outer.remove(force=True)
        client.close()
    return f"host OOM killer (an outer 64 MiB cgroup) on the next 2 container jobs after {at}"


def _cgroup_parent(client: Any, container: str) -> str:
    import docker

    try:
        return client.api.inspect_container(container)["HostConfig"].get("CgroupParent") or ""
    except docker.errors.NotFound:  # removed since it was listed
        return ""


def _base_image() -> str:
    from dgm.sandbox import images

    return images.build("base", log=lambda line: None)


def _orphans() -> int:
    try:
        import docker

        from dgm.sandbox.orphans import list_containers

        return len(list_containers(docker.from_env(), "dgm.run=soak"))
    except Exception as exc:
        return -1 if exc else 0


if __name__ == "__main__":
    main()
