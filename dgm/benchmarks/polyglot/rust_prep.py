"""Rust's part of judge_prep.py, staged beside it (python3 of the toolchain image, never
the host): the Cargo.toml the judge builds with, the crate under `#![forbid(unsafe_code)]`,
and the build's outputs carried over to the run container."""

import json
import os
import re
import shutil
import subprocess

_DEP_KEYS = {"version", "features", "default-features", "default_features", "optional"}


def cargo_toml(pristine, agent):
    """The pristine Cargo.toml with the agent's [dependencies] (plain registry ones only)."""
    import tomllib

    try:
        deps = tomllib.loads(agent.decode()).get("dependencies", {})
        base = tomllib.loads(pristine)
    except (ValueError, UnicodeDecodeError):
        return pristine, "unreadable Cargo.toml"
    merged, bad = dict(base.get("dependencies", {})), []
    for name, spec in deps.items():
        ok = isinstance(spec, str) or (isinstance(spec, dict) and set(spec) <= _DEP_KEYS)
        if ok and re.fullmatch(r"[A-Za-z0-9_-]+", name):
            merged[name] = spec
        else:
            bad.append(name)
    lines, skip = [], False
    for line in pristine.splitlines():
        if line.strip().startswith("["):
            skip = line.strip() == "[dependencies]"
        if not skip:
            lines.append(line)
    lines.append("\n[dependencies]")
    for name, spec in merged.items():
        if isinstance(spec, str):
            lines.append(f"{name} = {json.dumps(spec)}")
        else:
            lines.append(
                f"{name} = {{ "
                + ", ".join(f"{k} = {json.dumps(v)}" for k, v in spec.items())
                + " }"
            )
    return "\n".join(lines) + "\n", ("dependencies dropped: " + ", ".join(bad)) if bad else None


FORBID_UNSAFE = b"#![forbid(unsafe_code)] "


def forbid_unsafe(work):
    """The crate root under `#![forbid(unsafe_code)]` (no `#[allow]` lifts it, it covers
    the crate's own macro expansions): the attribute on the root's first line, so that
    the other lines keep their numbers and the file's own inner attributes and `//!`
    comments (inner attributes too) still follow it."""
    root = os.path.join(work, "src", "lib.rs")
    if not os.path.isfile(root):
        return
    with open(root, "rb") as fh:
        data = fh.read()
    bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
    with open(root, "wb") as fh:
        fh.write(bom + FORBID_UNSAFE + data[len(bom) :])


def copy_rust_fixtures(work):
    """Rust tests that build fixture crates at run time (macros' compile-fail cases in
    `tests/invalid/`) need the crate and those fixtures: the tree goes over without
    `target/` and without the test sources (`tests/*.rs`), which are all the answers."""
    tests = os.path.join(work, "tests")
    if not os.path.isdir(tests) or not any(
        os.path.isdir(os.path.join(tests, n)) for n in os.listdir(tests)
    ):
        return

    def skip(folder, names):
        top = os.path.abspath(folder)
        return [n for n in names
                if (top == work and n == "target")
                or (top == tests and n.endswith(".rs"))]  # fmt: skip

    shutil.copytree(work, "/out/tree", symlinks=False, ignore=skip)


def copy_rust_tests(work):
    """The test executables cargo reported (its JSON messages) into /out/rust, their
    symbol tables stripped: red team round nine F1 found the running test's function by
    name there and told a must-fail copy from its original by its code's length (libtest
    needs no symbols; this raises the cost, the copies stay the defence)."""
    os.makedirs("/out/rust", exist_ok=True)
    count = 0
    with open("/out/cargo.json", "rb") as fh:
        for raw in fh:
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            exe = msg.get("executable") if isinstance(msg, dict) else None
            if not exe or not (msg.get("profile") or {}).get("test"):
                continue
            real = os.path.realpath(exe)
            if not real.startswith(os.path.join(work, "target") + "/"):
                continue
            count += 1
            shutil.copyfile(real, f"/out/rust/t{count}")
            os.chmod(f"/out/rust/t{count}", 0o755)
            strip = shutil.which("strip")
            if strip:  # (binutils, beside the image's C compiler)
                subprocess.run([strip, "--strip-all", f"/out/rust/t{count}"],
                               stdin=subprocess.DEVNULL, capture_output=True)  # fmt: skip
    os.unlink("/out/cargo.json")
    return 0 if count else 1
