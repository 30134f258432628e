"""Runs inside the fresh judge container (python3 of the toolchain image), never on the host.

    python3 /stage/judge_prep.py      reads /stage/plan.json

The plan's phase: "all" (Python, JavaScript: steps 1-4 in one container), "build" (the
compiled languages' first container: steps 1-2, then the build command writes the test
binaries to /out), "run" (their second container: no exercise, no test source, only the
binaries at /built; steps 3-4).

1. The patch is applied to a scratch copy of the workspace as the agent was given it.
2. /work/<exercise> = the judge's disguised exercise (hidden tests un-skipped, renamed,
   copies and canaries added). Only files the plan allows come over from the scratch
   copy: the exercise's solution files, and new files only where the language's rule
   allows them (regular files only, never links; Go/Java files must keep the stub's
   package). Rust's Cargo.toml is the pristine one plus the agent's plain `[dependencies]`.
3. A fresh report folder is made, the test command runs (stderr into stdout, through a
   pipe: its head and tail are kept for the log, the runner's per-test lines whole).
4. Every process left of the sandbox user is killed; then the log, the exit status, the
   time, each report file the plan names (base64) and an end line are printed last, in
   a size the sandbox's output cap keeps whole. Any other entry in the report folder
   makes the report malformed. This script exits 0 only when it got that far: any other
   end of the container is an abnormal end.
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
import threading
import time

sys.path.append(os.path.dirname(os.path.abspath(__file__)))  # (its staged helpers)
import rust_prep  # noqa: E402

STAGE, SCRATCH = "/stage", "/tmp/dgm-agent"
PATCH_FAILED = 91
LOG_HALF = 32 * 1024
MAX_LINE = 4096
MAX_RESULT_BYTES = 2 * 1024 * 1024
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_PACKAGE = {"go": r"^\s*package\s+(\w+)", "java": r"^\s*package\s+([\w.]+)\s*;"}
# The test sources are gone before solution code runs, not before it is compiled: these
# would read them into the binary.
_COMPILE_TIME_READ = {"go": re.compile(rb'//\s*go:embed|^\s*(?:import\s*\(?)?\s*"C"\s*$', re.M),
                      "rust": re.compile(rb"\binclude(?:_str|_bytes)?\s*!")}  # fmt: skip


def not_dumpable():
    """No process of the sandbox user may ptrace this one or write its memory (the tests
    cannot make the judge fork for them: nospawn.py)."""
    import ctypes

    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0


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
                        text, why = rust_prep.cargo_toml(fh.read(), data)
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
            if why is None and _COMPILE_TIME_READ.get(language, re.compile(b"(?!)")).search(data):
                why = "reads files at compile time"
            if why:
                note(f"ignored agent file {rel} ({why})")
                continue
            target = os.path.join(work, rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if os.path.lexists(target):
                os.unlink(target)
            with open(target, "wb") as fh:
                fh.write(data)


def run_captured(command, cwd, env, result_lines, kill_all=True, anywhere=False):
    """Run the tests with their output through a pipe: keep its head and tail for the
    log, and the lines matching `result_lines` (the runner's per-test lines) whole.
    `anywhere`: a runner line found anywhere in a line counts, from where it starts (red
    team round nine L1 printed one byte with no newline, so libtest's `... FAILED` line
    that followed no longer started a line). `kill_all`: end every process of this user
    after (inside the judge container only)."""
    proc = subprocess.Popen(["/bin/sh", "-c", command], cwd=cwd, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)  # fmt: skip
    kept = {"head": bytearray(), "tail": bytearray(), "dropped": 0, "lines": [], "size": 0,
            "cut": False}  # fmt: skip
    pattern = re.compile(result_lines.encode()) if result_lines else None

    def read():
        pending = b""
        while True:
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            room = LOG_HALF - len(kept["head"])
            kept["head"] += chunk[: max(room, 0)]
            kept["tail"] += chunk[max(room, 0) :]
            if len(kept["tail"]) > LOG_HALF:
                kept["dropped"] += len(kept["tail"]) - LOG_HALF
                del kept["tail"][: len(kept["tail"]) - LOG_HALF]
            if pattern is None:
                continue
            pending += chunk
            *lines, pending = pending.split(b"\n")
            pending = pending[-MAX_LINE:]
            for line in lines:
                line = line[:MAX_LINE]
                found = pattern.search(line) if anywhere else pattern.match(line)
                if found:
                    line = line[found.start() :]
                    kept["cut"] = kept["cut"] or kept["size"] >= MAX_RESULT_BYTES
                    if not kept["cut"]:
                        kept["lines"].append(line)
                        kept["size"] += len(line) + 1

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    started = time.monotonic()
    returncode = proc.wait()
    took = time.monotonic() - started
    if kill_all:
        try:
            os.kill(-1, signal.SIGKILL)  # everything the tests left running (not this process)
        except OSError:
            pass
    reader.join(10)
    return returncode, took, kept


def print_log(kept):
    sys.stdout.write(bytes(kept["head"]).decode("utf-8", "replace"))
    if kept["dropped"]:
        sys.stdout.write(f"\n... [{kept['dropped']} bytes of test output dropped] ...\n")
    sys.stdout.write(bytes(kept["tail"]).decode("utf-8", "replace"))
    sys.stdout.flush()


def sealed_reports(plan, report, kept):
    """The report files the plan names, read from the folder the judge made; a name it
    does not know, a duplicate, an odd name or a non-file makes the whole report
    malformed. Returns ({name: bytes}, None) or (None, why)."""
    allowed = set(plan["reports"])
    found, odd = {}, []
    for name in os.listdir(report):
        path = os.path.join(report, name)
        if name not in allowed or not SAFE_NAME.fullmatch(name):
            odd.append(name)
            continue
        data = read_regular(path)
        if data is None:
            odd.append(name)
        else:
            found[name] = data
    if odd:
        return None, "unexpected entries in the report folder: " + ascii(sorted(odd)[:5])
    if kept.get("cut"):  # (forged lines first, the runner's own dropped: never honest)
        return None, "the runner's per-test lines pass 2 MiB"
    if plan.get("result_lines"):
        found["results.log"] = b"\n".join(kept["lines"]) + b"\n"
    if sum(len(d) for d in found.values()) * 4 // 3 > plan["budget"]:
        return None, "the reports are larger than the judge prints"
    return found, None


def build_phase(plan, work):
    env = dict(os.environ, DGM_OUT="/out", DGM_EXERCISE=plan["folder"])
    if plan["language"] == "go":
        env["CGO_ENABLED"] = "0"  # no C preamble can `.incbin` the test sources
    note("building the tests")
    started = time.monotonic()
    code = go_package_alone(work, env) if plan["language"] == "go" else 0
    if plan.get("forbid_unsafe"):
        rust_prep.forbid_unsafe(work)
    if code == 0:
        proc = subprocess.run(["/bin/sh", "-c", plan["build"]], cwd=work, env=env,
                              stdin=subprocess.DEVNULL, stderr=subprocess.STDOUT)  # fmt: skip
        code = proc.returncode
    # After a failed Rust build: whether `unsafe` in the crate (the forbid) failed it.
    kind = plan["language"] if code == 0 else "rust-unsafe" * bool(plan.get("forbid_unsafe"))
    if kind in ("cpp", "rust", "go", "rust-unsafe"):
        scan = [sys.executable, os.path.join(STAGE, "build_scan.py"), kind, work]
        found = subprocess.run(scan + plan["solution"], capture_output=True, text=True,
                               env=env, stdin=subprocess.DEVNULL)  # fmt: skip
        if found.returncode != 0:
            note(f"the build scan failed: {found.stderr[-300:]!r}")
        for line in found.stdout.splitlines():
            print(f"\n>>>>> dgm judge: build evidence: {line}", flush=True)
    if code == 0 and plan["language"] == "rust":
        code = rust_prep.copy_rust_tests(work)
        rust_prep.copy_rust_fixtures(work)
    print(f"\n>>>>> dgm judge: build exited {code} after {time.monotonic() - started:.3f} s",
          flush=True)  # fmt: skip


_UNDEFINED = re.compile(r"^\S+\.go:\d+:\d+: undefined: (\w+)$")
_NOT_HELPERS = re.compile(r"(?:Test|Benchmark|Example|Fuzz)(?:[A-Z_0-9]|$)")


def go_package_alone(work, env):
    """`go build ./...`: the package must build without its test files, so that solution
    code cannot use the tests' tables (or anything else of theirs) as answers. Helper
    functions a test file provides for solutions to call (bottle-song's `Title`) are the
    one exception: an error naming only those is no failure."""
    proc = subprocess.run(["go", "build", "./..."], cwd=work, env=env, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL)  # fmt: skip
    if proc.returncode == 0:
        return 0
    helpers = set()
    for name in os.listdir(work):
        if name.endswith("_test.go"):
            with open(os.path.join(work, name), errors="replace") as fh:
                found = re.findall(r"^func (\w+)\s*\(", fh.read(), re.MULTILINE)
            helpers |= {f for f in found if not _NOT_HELPERS.match(f)}
    lines = [ln for ln in proc.stdout.splitlines() + proc.stderr.splitlines()
             if ln.strip() and not ln.startswith("#")]  # fmt: skip
    used = [_UNDEFINED.match(ln) for ln in lines]
    if lines and all(m and m.group(1) in helpers for m in used):
        note("the package uses helper functions its tests provide: "
             + ", ".join(sorted({m.group(1) for m in used if m})))  # fmt: skip
        return 0
    sys.stdout.write(proc.stdout + proc.stderr)
    note("the package does not build without its test files (go build ./...)")
    return proc.returncode or 1


def main():
    with open(os.path.join(STAGE, "plan.json")) as fh:
        plan = json.load(fh)
    # Some build files derive names from their folder (C++'s CMakeLists).
    work = os.path.join("/work", plan["folder"])
    if plan["phase"] in ("all", "build"):
        shutil.copytree(os.path.join(STAGE, "work"), SCRATCH, symlinks=True)
        patch = os.path.join(STAGE, "patch.diff")
        if os.path.getsize(patch):
            cmd = ["git", "apply", "--binary", "--whitespace=nowarn", patch]
            proc = subprocess.run(cmd, cwd=SCRATCH, capture_output=True, text=True)
            if proc.returncode != 0:
                note("the patch does not apply\n" + proc.stderr)
                sys.exit(PATCH_FAILED)
        shutil.copytree(os.path.join(STAGE, "judge"), work, symlinks=False)
        bring_over(plan, work)
        if plan["phase"] == "build":
            build_phase(plan, work)
            sys.exit(0)
    else:  # the run phase: test binaries only, no test source in this container
        os.makedirs(work)
        if os.path.isdir("/built/tree"):  # Rust fixtures (copy_rust_fixtures)
            shutil.copytree("/built/tree", work, dirs_exist_ok=True)
    report = f"/tmp/dgm-{secrets.token_hex(8)}"
    os.mkdir(report, 0o700)
    env = dict(os.environ, DGM_REPORT=report, DGM_EXERCISE=plan["folder"], DGM_BIN="/built",
               DGM_NOSPAWN=f"{sys.executable} -I -S {os.path.join(STAGE, 'nospawn.py')}",
               DGM_SPAWN_ALLOWED="1" if plan.get("spawn_allowed") else "0")  # fmt: skip
    not_dumpable()
    note("running the tests")
    anywhere = plan.get("language") in ("go", "rust")  # their runner's lines are the report
    returncode, took, kept = run_captured(plan["command"], work, env, plan.get("result_lines"),
                                          anywhere=anywhere)  # fmt: skip
    print_log(kept)
    print(f"\n>>>>> dgm judge: tests exited {returncode} after {took:.3f} s", flush=True)
    found, why = sealed_reports(plan, report, kept)
    if why:
        print(f">>>>> dgm judge: malformed report: {why}", flush=True)
        found = {}
    for name, data in sorted(found.items()):
        print(f">>>>> dgm judge report {name} {base64.b64encode(data).decode()}", flush=True)
    print(f">>>>> dgm judge: end of reports ({len(found)})", flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
