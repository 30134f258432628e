"""The Polyglot test process cannot write its own memory through /proc (red team round
eight, M1 and R1: nospawn.py's Landlock ruleset), and a Rust solution crate is built
under `#![forbid(unsafe_code)]` (rust_prep.forbid_unsafe, build_scan.unsafe_lints).
Unit checks here; the Docker checks run the launcher in the judge's image."""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
from pathlib import Path
from types import ModuleType

import pytest

from dgm.benchmarks.polyglot import build_scan, nospawn
from dgm.benchmarks.polyglot import loader as polyglot
from dgm.benchmarks.polyglot.judge import JudgePlan, verdict_from
from dgm.sandbox import Mount, SandboxSpec, run_command
from dgm.sandbox.spec import ExecResult

HERE = Path(nospawn.__file__).parent
PROBE = """
import os
got = []
for path, mode in [("here.txt", "w"), ("/tmp/x.txt", "w"), ("/proc/self/maps", "r"),
                   ("/proc/self/mem", "r+b"), ("/proc/self/task/%d/mem" % os.getpid(), "wb")]:
    try:
        open(path, mode).close()
        got.append("ok")
    except PermissionError:
        got.append("denied")
os.makedirs("/tmp/d/sub")
os.rename("/tmp/x.txt", "/tmp/d/sub/x.txt")  # (into another folder: REFER must be allowed)
print(" ".join(got))
"""
EXPECTED = "ok ok ok denied denied"
# The forbid goes on the crate root's first line: before `//!` comments and inner
# attributes (both inner attributes, in any order), after a byte-order mark.
CRATE = "\ufeff//! A crate.\n#![allow(dead_code)]\n#![warn(missing_docs)]\n/// f.\npub fn f() {}\n"


def _prep() -> ModuleType:
    spec = importlib.util.spec_from_file_location("rust_prep", HERE / "rust_prep.py")
    prep = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(prep)  # type: ignore[union-attr]
    return prep


def test_the_ruleset_handles_writes_only_and_allows_them_beside_proc_and_sys(
    tmp_path: Path,
) -> None:
    read = 1 | 4 | 8  # EXECUTE, READ_FILE, READ_DIR: never handled, so never restricted
    assert nospawn.handled_rights(1) & read == 0 and nospawn.handled_rights(7) & read == 0
    assert nospawn.handled_rights(1) == 0b1_1111_1111_0010  # write, remove_*, make_*
    assert nospawn.handled_rights(3) == nospawn.handled_rights(1) | 1 << 13 | 1 << 14
    for name in ("proc", "sys", "tmp", "usr", "work"):
        (tmp_path / name).mkdir()
    (tmp_path / "bin").symlink_to("usr")
    (tmp_path / ".dockerenv").write_text("")
    tops = [Path(p).name for p in nospawn.writable_tops(str(tmp_path))]
    assert tops == ["tmp", "usr", "work"]


class _NoLandlock:
    def syscall(self, *_args: object) -> int:
        ctypes.set_errno(38)  # ENOSYS: a kernel built without Landlock
        return -1


def test_no_landlock_is_one_line_and_the_run_goes_on(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(nospawn, "_libc", _NoLandlock)
    assert nospawn.landlock() == "landlock_create_ruleset: Function not implemented"
    ran: list[list[str]] = []
    monkeypatch.setattr(nospawn, "install", lambda: None)
    monkeypatch.setattr(os, "execvp", lambda _prog, argv: ran.append(argv))
    nospawn.run(["true"])
    assert ran == [["true"]]
    line = f"{nospawn.UNAVAILABLE} (landlock_create_ruleset: Function not implemented)"
    assert capsys.readouterr().err == line + "\n"
    # ...which the judge records in the verdict's details.
    task = polyglot.Task("go__x", "polyglot", "go", "", "", "", "", 60, "/nowhere")
    out = f"{line}\n>>>>> dgm judge: tests exited 1 after 1.000 s\n"
    verdict = verdict_from(ExecResult(0, out + ">>>>> dgm judge: end of reports (0)\n"), task,
                           JudgePlan("go", expected=["TestX"]))  # fmt: skip
    assert verdict.details["landlock_unavailable"].endswith("Function not implemented")


def test_the_forbid_keeps_inner_attributes_first(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.rs").write_text(CRATE)
    _prep().forbid_unsafe(str(tmp_path))
    text = (tmp_path / "src" / "lib.rs").read_text()
    assert text == "\ufeff#![forbid(unsafe_code)] " + CRATE[1:]
    assert text.count("\n") == CRATE.count("\n")  # (the log's line numbers stay true)


def test_unsafe_lints_are_named_and_nothing_else() -> None:
    def message(code: str, text: str) -> str:
        span = {"is_primary": True, "file_name": "src/lib.rs", "line_start": 7}
        diag = {"code": {"code": code}, "message": text, "spans": [span]}
        return json.dumps({"reason": "compiler-message", "message": diag})

    lines = [message("unsafe_code", "usage of an `unsafe` block"),
             message("E0453", "allow(unsafe_code) incompatible with previous forbid"),
             message("E0425", "cannot find value `x` in this scope"), "not json", "3"]  # fmt: skip
    found = build_scan.unsafe_lints(lines)
    assert len(found) == 2 and all("src/lib.rs:7" in f for f in found), found


@pytest.mark.docker
def test_in_the_image_files_are_writable_but_not_the_process_memory(
    polyglot_image: str, tmp_path: Path
) -> None:
    """In the judge's image, as its sandbox user: under the launcher the test process
    writes its folder and /tmp and reads /proc/self/maps, but cannot open its own
    memory for writing; a crate root under the forbid, `//!` and `#![...]` first, builds."""
    stage = tmp_path / "stage"
    stage.mkdir()
    (stage / "nospawn.py").write_text((HERE / "nospawn.py").read_text())
    (stage / "probe.py").write_text(PROBE)
    (stage / "rust_prep.py").write_text((HERE / "rust_prep.py").read_text())
    (stage / "lib.rs").write_text(CRATE)
    for path in (stage, *stage.iterdir()):
        path.chmod(0o755)
    script = ("mkdir -p /work/t/src && cd /work/t && cp /stage/lib.rs src/lib.rs"
              " && python3 -c 'import sys; sys.path.insert(0, \"/stage\");"
              " import rust_prep; rust_prep.forbid_unsafe(\".\")'"
              " && rustc --edition 2021 --crate-type lib -o /tmp/t.rlib src/lib.rs"
              " && echo built"
              " && python3 -I -S /stage/nospawn.py python3 /stage/probe.py")  # fmt: skip
    spec = SandboxSpec(image=polyglot_image, mounts=(Mount(stage, "/stage", read_only=True),))
    result = run_command(spec, ["sh", "-c", script], 300)
    assert result.exit_code == 0, result.output
    assert "built" in result.output and EXPECTED in result.output, result.output
    assert nospawn.UNAVAILABLE not in result.output
