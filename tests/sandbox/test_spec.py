"""The sandbox spec refuses bad input with a fix, and caps output sensibly."""

from __future__ import annotations

import pytest

from dgm.errors import SandboxError
from dgm.sandbox.spec import Mount, OutputBuffer, ResourceLimits, SandboxSpec, parse_size


def test_sizes_parse_with_units() -> None:
    assert parse_size("512m") == 512 * 1024**2
    assert parse_size("4g") == 4 * 1024**3
    assert parse_size("1.5G") == int(1.5 * 1024**3)
    with pytest.raises(SandboxError, match="invalid memory limit"):
        _ = ResourceLimits(memory="lots").memory_bytes


def test_mount_parse_reads_mode_and_rejects_relative_target(tmp_path) -> None:
    mount = Mount.parse(f"{tmp_path}:/agent:ro")
    assert (mount.target, mount.read_only) == ("/agent", True)
    assert Mount.parse(f"{tmp_path}:/work").read_only is False
    with pytest.raises(SandboxError, match="SRC:DST"):
        Mount.parse(f"{tmp_path}:relative")
    with pytest.raises(SandboxError, match="mode"):
        Mount.parse(f"{tmp_path}:/x:rx")


def test_credentials_never_enter_a_sandbox_spec() -> None:
    with pytest.raises(SandboxError, match="ANTHROPIC_API_KEY"):
        SandboxSpec(env={"ANTHROPIC_API_KEY": "sk-test"})
    with pytest.raises(SandboxError, match="GITHUB_TOKEN"):
        SandboxSpec(env={"GITHUB_TOKEN": "x"})
    assert SandboxSpec(env={"DGM_LLM_TOKEN": "job-token"}).env["DGM_LLM_TOKEN"] == "job-token"


def test_output_keeps_head_and_tail_and_says_what_was_dropped() -> None:
    buffer = OutputBuffer(cap=20)
    for i in range(100):
        buffer.write(f"{i:03d}\n".encode())
    text = buffer.text()
    assert text.startswith("000\n001\n")
    assert text.endswith("098\n099\n")
    assert buffer.truncated and "bytes of output dropped" in text


def test_limits_come_from_the_run_config() -> None:
    from dgm.config import RunConfig

    config = RunConfig.from_dict({"sandbox": {"memory": "2g", "pids": 100, "disk": "1g"}})
    limits = ResourceLimits.from_config(config.sandbox)
    assert (limits.memory_bytes, limits.pids, limits.disk_bytes) == (2 * 1024**3, 100, 1024**3)
