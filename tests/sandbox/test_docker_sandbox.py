"""The Docker sandbox contains what an agent might do (real Docker, the runtime image)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import uuid

import pytest

from dgm.errors import SandboxError
from dgm.sandbox import Mount, ResourceLimits, SandboxSpec, open_sandbox, run_command
from dgm.sandbox.docker_client import docker_client
from dgm.sandbox.orphans import LABEL_JOB, list_containers, sweep

pytestmark = pytest.mark.docker

SMALL = ResourceLimits(memory="256m", pids=64, disk="32m")


def _spec(**changes) -> SandboxSpec:
    job = f"test-{uuid.uuid4().hex[:8]}"
    return SandboxSpec(limits=SMALL, labels={LABEL_JOB: job}).with_(**changes)


def _containers(job: str) -> list:
    return list_containers(docker_client(), f"{LABEL_JOB}={job}")


def _host_address() -> str:
    """The host's own non-loopback address (the route a container would take)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # no packet is sent for UDP connect
        return probe.getsockname()[0]


def test_no_network_not_even_the_host(runtime_image: str) -> None:
    server = socket.create_server(("0.0.0.0", 0))
    port = server.getsockname()[1]
    gateway = _host_address()
    socket.create_connection((gateway, port), timeout=5).close()  # reachable from outside
    probe = textwrap.dedent(f"""
        import socket
        for host, port in [("1.1.1.1", 443), ("{gateway}", {port})]:
            try:
                socket.create_connection((host, port), timeout=3)
                print("CONNECTED", host)
            except OSError as exc:
                print("blocked", host, type(exc).__name__)
    """)
    result = run_command(_spec(), ["python3", "-c", probe], timeout=30)
    server.close()
    assert result.exit_code == 0, result.output
    assert "CONNECTED" not in result.output
    assert result.output.count("blocked") == 2


def test_host_api_keys_do_not_reach_the_sandbox(runtime_image, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "fake-openai-key-must-not-leak")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "fake-anthropic-key-must-not-leak")
    result = run_command(_spec(env={"DGM_LLM_MODEL": "m"}), ["env"], timeout=30)
    assert "DGM_LLM_MODEL=m" in result.output
    assert "must-not-leak" not in result.output and "API_KEY" not in result.output


def test_fork_bomb_is_contained_reported_and_cleaned_up(runtime_image) -> None:
    with open_sandbox(_spec()) as box:
        bomb = box.exec(["bash", "-c", ":(){ :|:& };:; sleep 2"], timeout=20)
        assert bomb.pids_limited and "process limit (64)" in bomb.output
        after = box.exec("ps -e --no-headers | wc -l", timeout=10)
        assert after.exit_code == 0 and int(after.output.split()[0]) < 10


def test_memory_hog_is_killed_and_reported(runtime_image) -> None:
    with open_sandbox(_spec()) as box:
        result = box.exec(["python3", "-c", "x = bytearray(1024**3)"], timeout=60)
        assert result.oom_killed and result.exit_code == 137
        assert "out-of-memory" in result.output
        assert box.exec("echo still-usable", timeout=10).output.strip() == "still-usable"


def test_timeout_kills_the_command_and_removes_the_container(runtime_image) -> None:
    spec = _spec()
    started = time.monotonic()
    result = run_command(spec, "sleep 1000", timeout=2)
    assert result.timed_out and time.monotonic() - started < 15
    assert _containers(spec.labels[LABEL_JOB]) == []


def test_exec_timeout_kills_background_children_too(runtime_image) -> None:
    with open_sandbox(_spec()) as box:
        result = box.exec("setsid sleep 1000 & sleep 1000", timeout=2)
        assert result.timed_out and result.duration_s < 10
        left = box.exec("ps -u agent -o args --no-headers", timeout=10).output
        assert "sleep" not in left


def test_read_only_mounts_and_root_fs_refuse_writes(runtime_image, tmp_path) -> None:
    (tmp_path / "code.py").write_text("print('agent')\n")
    with open_sandbox(_spec(mounts=(Mount(tmp_path, "/agent", read_only=True),))) as box:
        assert box.exec("python3 /agent/code.py", timeout=10).output == "agent\n"
        for path in ("/agent/evil", "/usr/evil", "/etc/evil"):
            result = box.exec(["touch", path], timeout=10)
            assert result.exit_code != 0 and "Read-only file system" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["code.py"]


def test_disk_writes_are_capped(runtime_image) -> None:
    with open_sandbox(_spec()) as box:
        for folder in ("/work", "/tmp"):
            result = box.exec(f"dd if=/dev/zero of={folder}/big bs=1M count=100", timeout=30)
            assert result.exit_code != 0 and "No space left on device" in result.output


def test_copy_in_and_out_round_trip(runtime_image, tmp_path) -> None:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "a.txt").write_text("hello")
    with open_sandbox(_spec()) as box:
        box.copy_in(tmp_path / "src", "/work")
        assert box.exec(
            "cat pkg/a.txt && echo more > pkg/b.txt", timeout=10, workdir="/work/src"
        ).ok
        names = box.copy_out("/work/src", tmp_path / "out")
    assert "src/pkg/b.txt" in names
    assert (tmp_path / "out" / "src" / "pkg" / "b.txt").read_text() == "more\n"


def test_copy_out_refuses_planted_links(runtime_image, tmp_path) -> None:
    plant = "mkdir -p /work/out/d && ln -s /etc /work/out/etc && ln -s ../../.. /work/out/d/up"
    target = tmp_path / "target"
    with open_sandbox(_spec()) as box:
        assert box.exec(plant, timeout=10).ok
        with pytest.raises(SandboxError, match="unsafe entry"):
            box.copy_out("/work/out", target)
    outside = [p for p in tmp_path.rglob("*") if not p.is_relative_to(target)]
    assert outside == []
    assert not any(p.is_symlink() for p in target.rglob("*"))


def test_cleanup_on_error_and_ctrl_c(runtime_image) -> None:
    spec = _spec()
    for exc in (RuntimeError, KeyboardInterrupt):
        with pytest.raises(exc), open_sandbox(spec) as box:
            box.exec("true", timeout=10)
            raise exc()
    assert _containers(spec.labels[LABEL_JOB]) == []


def test_orphans_of_a_killed_process_are_swept_live_ones_kept(runtime_image) -> None:
    job = f"orphan-{uuid.uuid4().hex[:8]}"
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time\nfrom dgm.sandbox import *\n"
            f"box = create_sandbox(SandboxSpec(labels={{'dgm.job': '{job}'}}))\n"
            "print('ready', flush=True)\ntime.sleep(600)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert len(_containers(job)) == 1  # left behind by the killed process
    with open_sandbox(_spec()) as live:
        result = sweep(docker_client())
        assert live.name in result.kept
        assert _containers(job) == []


def test_non_root_user_reaches_a_mounted_gateway_socket(runtime_image, tmp_path) -> None:
    sock_dir = tmp_path / "gw"
    sock_dir.mkdir(mode=0o700)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock_dir / "llm.sock"))
    server.listen()

    def echo() -> None:
        conn, _ = server.accept()
        conn.sendall(b"echo:" + conn.recv(100))
        conn.close()

    threading.Thread(target=echo, daemon=True).start()
    client = (
        "import socket; s = socket.socket(socket.AF_UNIX); s.connect('/run/dgm/llm.sock');"
        " s.sendall(b'hi'); print(s.recv(100).decode())"
    )
    spec = _spec(mounts=(Mount(sock_dir, "/run/dgm", read_only=True),))
    result = run_command(spec, ["python3", "-c", client], timeout=30)
    server.close()
    assert result.output.strip() == "echo:hi", result.output
