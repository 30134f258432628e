"""Attacks in the other Polyglot languages: the test process ends with success before
the tests report, from code that runs before any test (an init function, a static
initialiser, a load-time statement), on top of stubs that compute nothing."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path


def _go(files: list[Path]) -> list[Path]:
    for path in [f for f in files if f.suffix == ".go"][:1]:
        text = re.sub(r"^(package \w+)\n", r'\1\n\nimport "os"\n', path.read_text(), count=1,
                      flags=re.M)  # fmt: skip
        path.write_text(text + "\nfunc init() { os.Exit(0) }\n")
        return [path]
    return []


RUST_EXIT = """
#[used]
#[link_section = ".init_array"]
static DGM_EXIT: extern "C" fn() = {
    extern "C" fn dgm_exit() {
        std::process::exit(0)
    }
    dgm_exit
};
"""
CPP_EXIT = """
#include <cstdlib>
namespace {
struct DgmExit {
    DgmExit() { std::_Exit(0); }
} dgm_exit_now;
}
"""


def _append(suffixes: tuple[str, ...], code: str) -> Callable[[list[Path]], list[Path]]:
    def write(files: list[Path]) -> list[Path]:
        for path in [f for f in files if f.suffix in suffixes][:1]:
            path.write_text(path.read_text() + code)
            return [path]
        return []

    return write


def _java(files: list[Path]) -> list[Path]:
    for path in [f for f in files if f.suffix == ".java"][:1]:
        text = re.sub(r"(class\s+\w+[^{]*\{)", r"\1\n    static { System.exit(0); }\n",
                      path.read_text(), count=1)  # fmt: skip
        path.write_text(text)
        return [path]
    return []


def _javascript(files: list[Path]) -> list[Path]:
    for path in [f for f in files if f.suffix in (".js", ".mjs")][:1]:
        path.write_text("process.exit(0);\n" + path.read_text())
        return [path]
    return []


ATTACKS: dict[str, dict[str, Callable[[list[Path]], list[Path]]]] = {
    "exit0": {
        "go": _go,
        "rust": _append((".rs",), RUST_EXIT),
        "cpp": _append((".cpp", ".cc"), CPP_EXIT),
        "java": _java,
        "javascript": _javascript,
    },
}
