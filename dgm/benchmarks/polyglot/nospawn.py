"""Runs a program that cannot create processes: the Polyglot judge's launcher of test runs.

    python3 /stage/nospawn.py PROGRAM [ARGS...]      (inside the judge container)

It installs a seccomp filter on itself and then execs PROGRAM, which inherits the filter
for good (a seccomp filter can only ever be added to, never removed, and it survives
every exec). Under it:

- `clone` succeeds only with CLONE_THREAD (a thread of the same process: the JVM's, the
  Go runtime's, libtest's and jest's threads); any other `clone` fails with EPERM;
- `fork`, `vfork` and `clone3` fail with ENOSYS, so glibc's `pthread_create` (which tries
  `clone3` first) falls back to `clone` and threads keep working, while `fork()`,
  `posix_spawn`, `std::process::Command`, `os/exec` and `child_process` fail;
- syscalls of another ABI (i386's `int 0x80`, x32) fail with ENOSYS, so the filter cannot
  be stepped around by another syscall table.

Why: a test binary that runs itself again as a child and rewrites the child's report
(red team round five, H7/H9/H12, and H13 on the SWE side) needs a second process; this
closes that whole class without touching threads. Why here and not Docker's
`--security-opt seccomp=`: that profile binds every process of the container, and the
judge's own (judge_prep's subprocesses, the sandbox's `sh -c` probes) must still spawn;
only the test process and what it execs are bound.

It also applies a Landlock ruleset (kernel ABI >= 1, unprivileged, kept across exec and
never loosened) that denies writing, creating, removing and truncating files under
/proc and /sys, and allows them beneath every other top-level folder of /. Why: the
kernel always lets a process open its own `/proc/self/mem` read-write (ptrace rules and
PR_SET_DUMPABLE do not apply within a thread group) and seccomp cannot see a path; a
test process that writes its own memory there rewrites the test framework's state (red
team round eight: M1, Go's `testing.common.failed` found through `runtime.Stack`; R1,
a Rust panic hook rewriting libtest's `TestDesc`), with no `unsafe` anywhere. Reads stay
open (`/proc/self/maps`, `/proc/cpuinfo`). Where the kernel has no Landlock, one line
`dgm nospawn: landlock unavailable (...)` goes to stderr and the run goes on; the judge
records it in the verdict's details. What remains: code that writes memory without
/proc (C++, Rust `unsafe` and raw pointers, Python `ctypes`); must-fail copies catch it
in files that have them, and the Rust judge refuses `unsafe` (judge_prep).

Kept to the standard library: it runs with the image's python3, beside judge_prep.py.
"""

import ctypes
import os
import struct
import sys

_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_ENOSYS, _EPERM = 38, 1
_CLONE_THREAD = 0x00010000
# AUDIT_ARCH, clone, then the syscalls that fail with ENOSYS (clone3, fork, vfork: aarch64
# has no fork/vfork) and with EPERM (ptrace, process_vm_readv/writev: no reaching into
# another process either).
_ARCHES = {
    "x86_64": (0xC000003E, 56, (435, 57, 58), (101, 310, 311)),
    "aarch64": (0xC00000B7, 220, (435,), (117, 270, 271)),
}
_X32_BIT = 0x40000000
_LD, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
PR_SET_DUMPABLE = 4
ALLOWED = "DGM_SPAWN_ALLOWED"
"""Set to 1 by judge_prep only where the exercise's own tests start processes."""


def _op(code, k, jt=0, jf=0):
    return struct.pack("HBBI", code, jt, jf, k)


def program(machine=None):
    """The classic-BPF filter (bytes of `struct sock_filter[]`) for this machine."""
    machine = machine or os.uname().machine
    if machine not in _ARCHES:
        raise SystemExit(f"nospawn: no seccomp filter for {machine}")
    arch, clone, enosys_calls, eperm_calls = _ARCHES[machine]
    enosys, eperm = _ERRNO | _ENOSYS, _ERRNO | _EPERM
    ops = [_op(_LD, 4), _op(_JEQ, arch, 1, 0), _op(_RET, enosys), _op(_LD, 0)]
    if machine == "x86_64":
        ops += [_op(_JGE, _X32_BIT, 0, 1), _op(_RET, enosys)]
    for nr in enosys_calls:
        ops += [_op(_JEQ, nr, 0, 1), _op(_RET, enosys)]
    for nr in eperm_calls:
        ops += [_op(_JEQ, nr, 0, 1), _op(_RET, eperm)]
    # Not clone: allowed. clone: allowed only when its flags (args[0], whose low word
    # is at offset 16 of struct seccomp_data) hold CLONE_THREAD.
    ops += [_op(_JEQ, clone, 1, 0), _op(_RET, _ALLOW), _op(_LD, 16),
            _op(_JSET, _CLONE_THREAD, 0, 1), _op(_RET, _ALLOW), _op(_RET, eperm)]  # fmt: skip
    return b"".join(ops)


class _Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def install(machine=None):
    """Bind this process (and everything it execs) to the filter; raises OSError."""
    code = program(machine)
    libc = _libc()
    buf = ctypes.create_string_buffer(code, len(code))
    prog = _Prog(len(code) // 8, ctypes.cast(buf, ctypes.c_char_p))
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")


# Landlock: syscall numbers (the same on x86_64 and aarch64), filesystem access rights.
_LL_CREATE, _LL_ADD_RULE, _LL_RESTRICT = 444, 445, 446
_LL_VERSION, _LL_PATH_BENEATH = 1, 1
_WRITE_FILE, _REMOVE_DIR, _REMOVE_FILE = 1 << 1, 1 << 4, 1 << 5
_MAKE = sum(1 << bit for bit in range(6, 13))  # char, dir, reg, sock, fifo, block, sym
_REFER, _TRUNCATE = 1 << 13, 1 << 14  # ABI 2, ABI 3
DENIED_TOPS = ("proc", "sys")
UNAVAILABLE = "dgm nospawn: landlock unavailable"
"""The line judge.py looks for (the kernel has no Landlock: /proc/self/mem stays open)."""


def handled_rights(abi):
    """The write rights a ruleset of this ABI handles. Read and execute are not handled
    (unrestricted). REFER is handled and allowed wherever writes are: a ruleset that
    does not handle it forbids every rename into another folder (cargo's, go's caches)."""
    rights = _WRITE_FILE | _REMOVE_DIR | _REMOVE_FILE | _MAKE
    return rights | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0)


def writable_tops(root="/"):
    """The top-level folders beneath which writes stay allowed: every real directory of
    `root` but /proc and /sys (and any other mount of theirs at the top)."""
    denied = set()
    for name in DENIED_TOPS:
        try:
            denied.add(os.stat(os.path.join(root, name)).st_dev)
        except OSError:
            pass
    denied.discard(os.stat(root).st_dev)  # (only their own mounts: procfs, sysfs)
    tops = []
    for entry in sorted(os.scandir(root), key=lambda e: e.name):
        if entry.name in DENIED_TOPS or not entry.is_dir(follow_symlinks=False):
            continue  # (a top-level link, /bin -> usr/bin, is covered by its target)
        if entry.stat(follow_symlinks=False).st_dev not in denied:
            tops.append(entry.path)
    return tops


def landlock(root="/"):
    """Deny this process (and what it execs) writes under /proc and /sys. Returns None,
    or why the kernel cannot (no Landlock); raises OSError on any other failure."""
    libc = _libc()
    abi = libc.syscall(_LL_CREATE, None, ctypes.c_long(0), ctypes.c_long(_LL_VERSION))
    if abi < 1:
        err = ctypes.get_errno()
        return f"landlock_create_ruleset: {os.strerror(err)}"
    rights = handled_rights(abi)
    attr = ctypes.create_string_buffer(struct.pack("=Q", rights), 8)
    ruleset = libc.syscall(_LL_CREATE, attr, ctypes.c_long(8), ctypes.c_long(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        for path in writable_tops(root):
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC | os.O_DIRECTORY | os.O_NOFOLLOW)
            try:
                beneath = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd), 12)
                if libc.syscall(_LL_ADD_RULE, ruleset, _LL_PATH_BENEATH, beneath, 0) != 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
            finally:
                os.close(fd)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:  # (restrict_self needs it)
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        if libc.syscall(_LL_RESTRICT, ruleset, 0) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return None


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p,
                           ctypes.c_ulong, ctypes.c_ulong]  # fmt: skip
    return libc


def not_dumpable():
    """No process of the same user may ptrace this one or open its /proc/PID/mem (and
    so make it fork on the tests' behalf): judge_prep and the --each parent call it."""
    _libc().prctl(PR_SET_DUMPABLE, 0, None, 0, 0)


def run(argv):
    """Exec argv under the Landlock ruleset and the filter (no filter where spawning is
    allowed)."""
    why = landlock()  # (also where spawning is allowed: a child could write mem too)
    if why:
        print(f"{UNAVAILABLE} ({why})", file=sys.stderr, flush=True)
    if os.environ.get(ALLOWED) != "1":
        install()
    os.execvp(argv[0], argv)


def main():
    """`nospawn.py PROGRAM ARGS...`, or `nospawn.py --each PROGRAMS... -- ARGS...`: each
    program in turn with ARGS, each in a child of this (unfiltered, not dumpable)
    process, exit 1 when any of them did not exit 0 (the Rust test binaries)."""
    args = sys.argv[1:]
    if args[:1] != ["--each"]:
        if not args:
            raise SystemExit("usage: nospawn.py PROGRAM [ARGS...]")
        run(args)
    split = args.index("--") if "--" in args else len(args)
    programs, rest = args[1:split], args[split + 1 :]
    not_dumpable()
    code = 0
    for prog in programs:
        pid = os.fork()
        if pid == 0:
            try:
                run([prog, *rest])
            finally:
                os._exit(127)
        _, status = os.waitpid(pid, 0)
        code = code or int(status != 0)
    sys.exit(code)


if __name__ == "__main__":
    main()
