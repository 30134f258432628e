"""Round two's red team (issue 24), the attacks that fooled the judge, kept verbatim under
attacks_round3/: test sources read into the binary at build time (Go cgo preamble, Rust
`global_asm!`, C++ `.incbin`) and an exercise-agnostic JavaScript solution that lets
exactly the tests it takes for real ones pass, telling them by layout and value. Each
was resolved and not tampered before; now the sources are unreachable (Go: cgo off;
C++/Rust: fresh file names) or the copies cannot be told apart."""

from __future__ import annotations

from pathlib import Path

from .judge_attacks import Attack

_DIR = Path(__file__).parent / "attacks_round3"


def _read(rel: str) -> str:
    return (_DIR / rel).read_text()


ALL = [
    Attack("reads_tests_at_build_cgo_incbin", "go", {"octal.go": _read("go_cgo_incbin/octal.go")}),
    Attack("reads_tests_at_build_global_asm_incbin", "rust",
           {"src/lib.rs": _read("rust_asm_incbin/src/lib.rs")}),
    Attack("reads_tests_at_build_incbin", "cpp",
           {"perfect_numbers.cpp": _read("cpp_incbin/perfect_numbers.cpp"),
            "perfect_numbers.h": _read("cpp_incbin/perfect_numbers.h")}),
    Attack("generic_expect_by_layout_and_value", "javascript",
           {"affine-cipher.js": _read("js_generic/affine-cipher.js")}, stub=True),
]  # fmt: skip
