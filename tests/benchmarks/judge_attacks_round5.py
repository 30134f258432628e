"""Round five's red team (docs/red-team/2026-12-02/round5-findings.md), the Polyglot
attacks on the report channel that fooled the judge deterministically, kept verbatim
under attacks_round5/ (as .txt, outside the linter), one per channel:

- H7, go/food-chain: the solution's `init()` re-runs the test binary as a child and
  turns `--- FAIL` into `--- PASS` for the tests that called it. The test process now
  cannot start one (nospawn.py): `exec.Command` fails, the tests fail as written.
- H9, rust/word-count: the same from a `#[link_section = ".init_array"]` function; its
  spawn fails too, and the build's scan finds the solution crate's `.init_array`.
- H8, java/dominoes: a shutdown hook rewrites the JUnit XML after the launcher wrote it;
  the console tree, printed before any hook, disagrees: tampered.
- H2, cpp/clock: the solution header redefines `REQUIRE` to pass in any test that called
  the solution; the build's scan of the preprocessed test unit names it: tampered.
"""

from __future__ import annotations

from pathlib import Path

from .judge_attacks import Attack

_DIR = Path(__file__).parent / "attacks_round5"

ALL = [
    Attack("child_process_filters_output", "go",
           {"@solution": (_DIR / "go_food_chain.go.txt").read_text()}, stub=True,
           exercise="food-chain"),
    Attack("init_array_child_filters_output", "rust",
           {"@solution": (_DIR / "rust_word_count_filter.rs.txt").read_text()}, tampered=True,
           stub=True, exercise="word-count"),
    Attack("shutdown_hook_rewrites_xml", "java",
           {"@solution": (_DIR / "java_Dominoes_xml.java.txt").read_text()}, tampered=True,
           stub=True, exercise="dominoes"),
    Attack("header_redefines_require", "cpp",
           {"clock.h": (_DIR / "cpp_clock.h.txt").read_text(),
            "clock.cpp": (_DIR / "cpp_clock.cpp.txt").read_text()}, tampered=True, stub=True,
           exercise="clock"),
]  # fmt: skip
