"""Copy-out of a real container and a real expand job: links, hard links and FIFOs an
agent plants never reach the host as such, and a child whose code links out of its tree
is refused with the reason (never committed)."""

from __future__ import annotations

import uuid

import pytest

from dgm.errors import SandboxError
from dgm.jobs.diagnose import ImprovementTarget
from dgm.jobs.expand import ExpandJob, ExpandSettings, run_expand
from dgm.sandbox import ResourceLimits, SandboxSpec, open_sandbox
from dgm.sandbox.orphans import LABEL_JOB

from .conftest import FAKE_KEY

pytestmark = pytest.mark.docker

PLANTS = {
    "a symbolic link": "ln -s /proc/self/environ /work/out/env",
    "a hard link": "echo x > /work/out/a && ln /work/out/a /work/out/b",
    "a FIFO": "mkfifo /work/out/pipe",
}


def test_copy_out_refuses_links_hard_links_and_fifos(runtime_image, planted_key, tmp_path):
    spec = SandboxSpec(limits=ResourceLimits(memory="256m", pids=64, disk="32m"),
                       labels={LABEL_JOB: f"test-{uuid.uuid4().hex[:8]}"})  # fmt: skip
    with open_sandbox(spec) as box:
        for i, (kind, plant) in enumerate(PLANTS.items()):
            assert box.exec(f"rm -rf /work/out && mkdir -p /work/out && {plant}", timeout=10).ok
            target = tmp_path / f"t{i}"
            with pytest.raises(SandboxError, match=f"unsafe entry .*{kind}"):
                box.copy_out("/work/out", target)
            for path in target.rglob("*"):
                assert not path.is_symlink() and (path.is_dir() or path.is_file())
                assert path.is_dir() or FAKE_KEY not in path.read_text()


def test_a_child_linking_out_of_its_tree_is_refused(runtime_image, planted_key, tmp_path):
    parent = tmp_path / "parent"
    parent.mkdir()
    (parent / "agent.toml").write_text('[commands]\nsolve = "sh {agent_dir}/solve.sh"\n')
    (parent / "solve.sh").write_text(
        f"cd /work && ln -s /proc/self/environ notes.md && ln -s {planted_key} key.txt\n"
    )
    # The planted agent never calls the LLM, so the job needs no endpoint.
    settings = ExpandSettings(run="t", timeout_s=60, smoke_test=False)
    target = ImprovementTarget("empty_patches")
    job = ExpandJob("expand-unsafe", 0, str(parent), target, str(tmp_path / "log"), settings)
    result = run_expand(job)
    assert result.status == "unsafe_link" and result.diff == ""
    assert "notes.md -> /proc/self/environ" in result.reason and "key.txt" in result.reason
    assert "notes.md" in (tmp_path / "log" / "patch.diff").read_text()  # kept for the record
