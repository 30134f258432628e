"""Copy-out extraction: nothing an archive says can write outside the target folder."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from dgm.errors import SandboxError
from dgm.sandbox import tarsafe


def _tar(*members: tuple[str, str, bytes | str]) -> io.BytesIO:
    """members: (kind, name, data-or-link-target)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for kind, name, payload in members:
            info = tarfile.TarInfo(name)
            if kind == "file":
                data = payload if isinstance(payload, bytes) else payload.encode()
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                info.type = tarfile.SYMTYPE if kind == "symlink" else tarfile.LNKTYPE
                info.linkname = str(payload)
                tar.addfile(info)
    buf.seek(0)
    return buf


@pytest.mark.parametrize(
    "members",
    [
        [("file", "../escape.txt", "x")],
        [("file", "/tmp/dgm-abs-escape.txt", "x")],
        [("symlink", "out", "/etc")],
        [("symlink", "up", "../.."), ("file", "up/escape.txt", "x")],
        [("symlink", "d", "."), ("file", "d/../../escape.txt", "x")],
        [("hardlink", "h", "/etc/passwd")],
    ],
    ids=["dotdot", "absolute", "abs-symlink", "symlink-then-write", "nested-dotdot", "hardlink"],
)
def test_escaping_entries_are_refused(tmp_path: Path, members) -> None:
    target = tmp_path / "target"
    with pytest.raises(SandboxError, match="unsafe entry"):
        tarsafe.safe_extract(_tar(*members), target)
    outside = {p for p in tmp_path.rglob("*") if not p.is_relative_to(target)}
    assert outside == set()
    assert not Path("/tmp/dgm-abs-escape.txt").exists()


def test_links_and_special_files_are_refused_even_inside(tmp_path: Path) -> None:
    for kind in ("symlink", "hardlink"):
        with pytest.raises(SandboxError, match="unsafe entry 'a/c'"):
            tarsafe.safe_extract(_tar(("file", "a/b.txt", "x"), (kind, "a/c", "b.txt")), tmp_path)
    for kind in (tarfile.FIFOTYPE, tarfile.CHRTYPE, tarfile.BLKTYPE):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            info = tarfile.TarInfo("dev")
            info.type = kind
            tar.addfile(info)
        buf.seek(0)
        with pytest.raises(SandboxError, match="unsafe entry 'dev'"):
            tarsafe.safe_extract(buf, tmp_path / "t")
    assert not (tmp_path / "t" / "dev").exists()


@pytest.mark.parametrize(
    "members",
    [
        [("symlink", "out", "/etc")],
        [("symlink", "up", "../.."), ("file", "up/escape.txt", "x")],
        [("file", "../escape.txt", "x")],
        [("hardlink", "h", "/etc/passwd")],
        [("symlink", "bad\nname PASSED x", "/etc")],
    ],
)
def test_skipping_leaves_out_each_unsafe_entry_with_a_note_and_keeps_the_rest(
    tmp_path: Path, members
) -> None:
    target = tmp_path / "target"
    kept = ("file", "trajectory.json", "{}")
    notes: list[str] = []
    written = tarsafe.safe_extract(_tar(kept, *members, kept), target, skipped=notes)
    assert (target / "trajectory.json").read_text() == "{}" and "trajectory.json" in written
    assert len(notes) >= 1 and repr(members[0][1]) in notes[0]
    assert "\n" not in "".join(notes)  # a hostile name is quoted, never a line of its own
    outside = {p for p in tmp_path.rglob("*") if not p.is_relative_to(target)}
    assert outside == set() and not any(p.is_symlink() for p in target.rglob("*"))
    with pytest.raises(SandboxError, match="size cap"):  # caps still refuse the whole copy
        tarsafe.safe_extract(
            _tar(("file", "big", "x" * 10), *members), tmp_path / "t2", 5, skipped=[]
        )


def test_plain_files_and_folders_extract(tmp_path: Path) -> None:
    names = tarsafe.safe_extract(
        _tar(("file", "./a/b.txt", "hello"), ("file", "a/b.txt", "again")), tmp_path
    )
    assert names == ["a/b.txt", "a/b.txt"]
    assert (tmp_path / "a" / "b.txt").read_text() == "again"


def test_a_link_already_in_the_target_is_never_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("host file")
    target = tmp_path / "target"
    (target / "d").mkdir(parents=True)
    (target / "d" / "f").symlink_to(victim)
    (target / "up").symlink_to(tmp_path)
    tarsafe.safe_extract(_tar(("file", "d/f", "overwritten?")), target)
    assert victim.read_text() == "host file" and (target / "d" / "f").read_text() == "overwritten?"
    with pytest.raises(SandboxError, match="not a plain folder"):
        tarsafe.safe_extract(_tar(("file", "up/victim.txt", "x")), target)
    assert victim.read_text() == "host file"


def test_size_cap_stops_a_tar_bomb(tmp_path: Path) -> None:
    big = _tar(("file", "big.bin", b"0" * 5000))
    with pytest.raises(SandboxError, match="size cap"):
        tarsafe.safe_extract(big, tmp_path, max_bytes=1000)
    with pytest.raises(SandboxError, match="size cap"):
        tarsafe.spool([b"0" * 600, b"0" * 600], max_bytes=1000)
