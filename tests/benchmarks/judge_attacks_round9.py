"""Round nine's red team (docs/red-team/2026-12-03-round9/rt9p/README.md), kept verbatim
under attacks_round9/ (as .txt, outside the linter).

- K1 (Go): round eight's M1 without /proc: the kernel writes the running test's
  `*testing.T` for it (`read(2)` into an address taken from `reflect`, through
  `syscall.Syscall`'s plain uintptrs; no `unsafe`, imports aliased past the tamper scan's
  spellings). Run on go/paasio and go/robot-simulator, the Go files with no must-fail
  copy. The build scan now refuses a solution package that imports `syscall` (or
  `golang.org/x/sys`, or cgo's `C`): tampered before any test runs.
"""

from __future__ import annotations

from pathlib import Path

from .judge_attacks import Attack, go_file

_DIR = Path(__file__).parent / "attacks_round9"
_HOOK = _DIR / "go_kcopy.go.txt"


ALL = [
    Attack("test_unfailed_through_syscall_buffers", "go",
           {"@solution": (_DIR / "go_paasio.go.txt").read_text(),
            "kcopy.go": go_file(_HOOK, "paasio")},
           tampered=True, stub=True, exercise="paasio"),
    Attack("test_unfailed_through_syscall_buffers_goroutines", "go",
           {"@solution": (_DIR / "go_robot_simulator.go.txt").read_text(),
            "kcopy.go": go_file(_HOOK, "robot")},
           tampered=True, stub=True, exercise="robot-simulator"),
]  # fmt: skip
