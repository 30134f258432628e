"""Runs inside the fresh judge container (python3 of the toolchain image), never on the host.

    python3 /stage/judge_prep.py      reads /stage/plan.json

1. The patch is applied to a scratch copy of the workspace as the agent was given it.
2. /work/<exercise> = the judge's pristine exercise (hidden tests un-skipped, canaries
   added). Only files the plan allows come over from the scratch copy: the exercise's
   solution files, and new files only where the language's rule allows them (regular
   files only, never links; Go/Java files must keep the stub's package). Rust's
   Cargo.toml is the pristine one plus the agent's plain `[dependencies]`.
3. A fresh report folder is made, the test command runs (stderr into stdout).
4. Every process left of the sandbox user is killed, then the exit status, the time
   and each report file (base64) are printed as the last lines. This script exits 0
   only when it got that far: any other end of the container is an abnormal end.
"""

import base64
import json
import os
import re
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import time

STAGE, SCRATCH = "/stage", "/tmp/dgm-agent"
PATCH_FAILED = 91
MAX_REPORT = 8 * 1024 * 1024
_PACKAGE = {"go": r"^\s*package\s+(\w+)", "java": r"^\s*package\s+([\w.]+)\s*;"}
_DEP_KEYS = {"version", "features", "default-features", "default_features", "optional"}


def note(text):
    print(f">>>>> dgm judge: {text}", flush=True)


def package_of(language, data):
    pattern = _PACKAGE.get(language)
    if not pattern:
        return None
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", data.decode("utf-8", "replace"), flags=re.DOTALL)
    match = re.search(pattern, text, re.MULTILINE)
    return match.group(1) if match else ""


def allowed(plan, rel, work):
    """Why the agent's `rel` does not reach the judge, or None when it does."""
    if rel in plan["solution"]:
        return None
    if os.path.lexists(os.path.join(work, rel)):
        return "the judge's own file"
    if any(re.fullmatch(p, rel) for p in plan["new_files"]):
        return None
    return "not a solution file"


def read_regular(path):
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        return None
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


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


def bring_over(plan, work):
    language = plan["language"]
    stubs = {
        rel: package_of(language, open(os.path.join(work, rel), "rb").read())
        for rel in plan["solution"]
        if os.path.isfile(os.path.join(work, rel))
    }
    packages = {p for p in stubs.values() if p is not None}
    for top, dirs, files in os.walk(SCRATCH):
        dirs[:] = [d for d in dirs if not (top == SCRATCH and d == ".git")]
        for name in files + [d for d in dirs if os.path.islink(os.path.join(top, d))]:
            rel = os.path.relpath(os.path.join(top, name), SCRATCH)
            if rel == "Cargo.toml" and language == "rust":
                data = read_regular(os.path.join(top, name))
                if data is not None:
                    with open(os.path.join(work, rel)) as fh:
                        text, why = cargo_toml(fh.read(), data)
                    with open(os.path.join(work, rel), "w") as fh:
                        fh.write(text)
                    if why:
                        note(f"Cargo.toml: {why}")
                continue
            why = allowed(plan, rel, work)
            data = read_regular(os.path.join(top, name)) if why is None else None
            if why is None and data is None:
                why = "not a regular file"
            if why is None and packages and package_of(language, data) not in packages:
                why = "declares another package"
            if why:
                note(f"ignored agent file {rel} ({why})")
                continue
            target = os.path.join(work, rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if os.path.lexists(target):
                os.unlink(target)
            with open(target, "wb") as fh:
                fh.write(data)


def main():
    with open(os.path.join(STAGE, "plan.json")) as fh:
        plan = json.load(fh)
    shutil.copytree(os.path.join(STAGE, "work"), SCRATCH, symlinks=True)
    patch = os.path.join(STAGE, "patch.diff")
    if os.path.getsize(patch):
        cmd = ["git", "apply", "--binary", "--whitespace=nowarn", patch]
        proc = subprocess.run(cmd, cwd=SCRATCH, capture_output=True, text=True)
        if proc.returncode != 0:
            note("the patch does not apply\n" + proc.stderr)
            sys.exit(PATCH_FAILED)
    # Some build files derive names from their folder (C++'s CMakeLists).
    work = os.path.join("/work", plan["folder"])
    shutil.copytree(os.path.join(STAGE, "judge"), work, symlinks=False)
    bring_over(plan, work)
    report = f"/tmp/dgm-{secrets.token_hex(8)}"
    os.mkdir(report, 0o700)
    env = dict(os.environ, DGM_REPORT=report, DGM_EXERCISE=plan["folder"])
    note("running the tests")
    started = time.monotonic()
    proc = subprocess.run(
        ["/bin/sh", "-c", plan["command"]],
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    took = time.monotonic() - started
    try:
        os.kill(-1, signal.SIGKILL)  # everything the tests left running (not this process)
    except OSError:
        pass
    sys.stdout.flush()
    print(f"\n>>>>> dgm judge: tests exited {proc.returncode} after {took:.3f} s", flush=True)
    for name in sorted(os.listdir(report)):
        path = os.path.join(report, name)
        st = os.lstat(path)
        if stat.S_ISREG(st.st_mode) and st.st_size <= MAX_REPORT:
            data = base64.b64encode(read_regular(path)).decode()
            print(f">>>>> dgm judge report {name} {data}", flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
