"""Runs inside the fresh judge container (python3 of the toolchain image), never on the host.

    python3 /stage/judge_prep.py      reads /stage/plan.json, then becomes the test command

1. /work/<exercise> = the workspace as the agent was given it (/stage/work), plus the patch.
2. Files the agent added that look like tests or test-runner configuration are deleted.
3. Every pristine non-solution file (tests, test data, build files) is restored over
   whatever the agent left there, symlinks and all, so edits to them cannot count.
4. The test command runs; its exit status becomes the container's.
"""

import fnmatch
import json
import os
import shutil
import subprocess
import sys
import time

STAGE, WORK = "/stage", "/work"
PATCH_FAILED = 91


def matches(rel, patterns):
    name = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(name, p) for p in patterns)


def remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def real_parents(rel):
    """Make every folder above WORK/rel a real folder (the agent may have left links)."""
    current = WORK
    for part in rel.split("/")[:-1]:
        current = os.path.join(current, part)
        if os.path.islink(current) or (os.path.lexists(current) and not os.path.isdir(current)):
            remove(current)
        os.makedirs(current, exist_ok=True)


def main():
    global WORK
    with open(os.path.join(STAGE, "plan.json")) as fh:
        plan = json.load(fh)
    # Some build files derive names from their folder (C++'s CMakeLists): keep the
    # exercise's own folder name.
    WORK = os.path.join(WORK, plan["folder"])
    shutil.copytree(os.path.join(STAGE, "work"), WORK, symlinks=True, dirs_exist_ok=True)
    patch = os.path.join(STAGE, "patch.diff")
    if os.path.getsize(patch):
        cmd = ["git", "apply", "--binary", "--whitespace=nowarn", patch]
        proc = subprocess.run(cmd, cwd=WORK, capture_output=True, text=True)
        if proc.returncode != 0:
            print(">>>>> dgm judge: the patch does not apply\n" + proc.stderr, flush=True)
            sys.exit(PATCH_FAILED)
    pristine = set(plan["pristine"])
    for top, dirs, files in os.walk(WORK):
        dirs[:] = [d for d in dirs if not (top == WORK and d == ".git")]
        for name in files + [d for d in dirs if os.path.islink(os.path.join(top, d))]:
            rel = os.path.relpath(os.path.join(top, name), WORK)
            if rel not in pristine and matches(rel, plan["forbidden"]):
                print(f">>>>> dgm judge: removed agent-added {rel}", flush=True)
                remove(os.path.join(top, name))
    restore = os.path.join(STAGE, "restore")
    for top, _dirs, files in os.walk(restore):
        for name in files:
            rel = os.path.relpath(os.path.join(top, name), restore)
            real_parents(rel)
            remove(os.path.join(WORK, rel))
            shutil.copy2(os.path.join(top, name), os.path.join(WORK, rel))
    print(">>>>> dgm judge: running the tests", flush=True)
    started = time.monotonic()
    code = subprocess.run(["/bin/sh", "-c", plan["command"]], cwd=WORK).returncode
    print(f"\n>>>>> dgm judge: tests took {time.monotonic() - started:.3f} s", flush=True)
    sys.exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
