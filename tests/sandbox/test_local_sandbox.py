"""The local fallback (no Docker): weaker, but timeouts, env and copy-out still hold."""

from __future__ import annotations

import time

import pytest

from dgm.errors import SandboxError
from dgm.sandbox import Mount, ResourceLimits, SandboxSpec, open_sandbox, run_command
from dgm.sandbox.local_backend import bwrap_path

needs_bwrap = pytest.mark.needs("bwrap", bwrap_path() is None and "bubblewrap is not installed")
SPEC = SandboxSpec(limits=ResourceLimits(memory="1g", pids=256, disk="16m"))


def test_runs_in_a_clean_environment(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "fake-openai-key-must-not-leak")
    result = run_command(SPEC.with_(env={"DGM_LLM_MODEL": "m"}), "env", 30, backend="local")
    assert result.exit_code == 0
    assert "DGM_LLM_MODEL=m" in result.output and "must-not-leak" not in result.output


def test_timeout_kills_the_process_tree() -> None:
    with open_sandbox(SPEC, "local") as box:
        started = time.monotonic()
        result = box.exec("sleep 1000 & sleep 1000", timeout=1)
        assert result.timed_out and time.monotonic() - started < 10
        assert "sleep 1000" not in box.exec("ps -eo args", timeout=10).output


def test_file_size_is_capped() -> None:
    with open_sandbox(SPEC, "local") as box:
        result = box.exec("dd if=/dev/zero of=big bs=1M count=64", timeout=30)
        assert result.exit_code != 0


@needs_bwrap
def test_bubblewrap_hides_network_home_and_makes_mounts_read_only(tmp_path) -> None:
    (tmp_path / "code.py").write_text("print('agent')\n")
    spec = SPEC.with_(mounts=(Mount(tmp_path, "/agent", read_only=True),))
    probe = (
        "import socket\ntry:\n socket.create_connection(('1.1.1.1', 443), timeout=3)\n"
        " print('CONNECTED')\nexcept OSError:\n print('blocked')\n"
    )
    with open_sandbox(spec, "local") as box:
        assert box.exec("python3 /agent/code.py", timeout=30).output == "agent\n"
        assert box.exec(["python3", "-c", probe], timeout=30).output.strip() == "blocked"
        assert box.exec("touch /agent/evil", timeout=10).exit_code != 0
        assert box.exec("ls /root | wc -l", timeout=10).output.strip() == "0"
        assert box.exec("id -u", timeout=10).output.strip() == "1000"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["code.py"]


@needs_bwrap
def test_copy_out_refuses_planted_links(tmp_path) -> None:
    with open_sandbox(SPEC, "local") as box:
        assert box.exec("mkdir -p /work/out && ln -s /etc /work/out/etc", timeout=10).ok
        with pytest.raises(SandboxError, match="unsafe entry"):
            box.copy_out("/work/out", tmp_path / "target")
    assert not (tmp_path / "target" / "out" / "etc").exists()


def test_unknown_backend_is_an_error_with_the_choices() -> None:
    with pytest.raises(SandboxError, match="docker, local, auto"):
        run_command(SPEC, "true", 5, backend="podman")
