"""Helper functions of a test file that take the expected value as a parameter
(`fn process_chromatic_case(tonic: &str, expected: &[&str])`): what a test passes there
is an expected side, like an assertion's (see copies_text)."""

from __future__ import annotations

import contextvars
import re

from dgm.benchmarks.polyglot import copies_scan as scan

HELPERS: contextvars.ContextVar[tuple[tuple[str, int], ...]] = contextvars.ContextVar(
    "helpers", default=()
)
"""The file's helper functions that take an expected value: name -> that parameter's
place (set by disguise_text)."""
_SIGNATURE = {
    "rust": re.compile(r"^[ \t]*fn\s+(\w+)\s*(?:<[^>{]*>)?\s*\(([^)]*)\)", re.MULTILINE),
    "go": re.compile(r"^func\s+(\w+)\s*\(([^)]*)\)", re.MULTILINE),
    "java": re.compile(r"^[ \t]*(?:(?:private|public|protected|static|final)\s+)+[\w<>\[\], ?]+"
                       r"\s+(\w+)\s*\(([^)]*)\)\s*(?:throws[^{]*)?\{", re.MULTILINE),
    "cpp": re.compile(r"^(?:static\s+|inline\s+)*(?:void|bool)\s+(\w+)\s*\(([^)]*)\)\s*\{",
                      re.MULTILINE),
    "javascript": re.compile(r"^[ \t]*(?:function\s+(\w+)\s*|const\s+(\w+)\s*=\s*)"
                             r"\(([^)]*)\)\s*(?:=>\s*)?\{", re.MULTILINE),
}  # fmt: skip
_PARAM_NAME = {
    "rust": r"^\s*(?:mut\s+)?(\w+)\s*:",
    "go": r"^\s*(\w+)",
    "javascript": r"^\s*(\w+)",
    "java": r"(\w+)\s*$",
    "cpp": r"(\w+)\s*$",
}
_EXPECTED_PARAM = re.compile(r"(?i)^(?:expected\w*|want\w*)$")


def helpers(language: str, text: str, tests: set[str]) -> dict[str, int]:
    """{helper: index of its `expected` parameter} for the file's functions other than
    its `tests`."""
    found = {}
    for m in _SIGNATURE[language].finditer(scan.masked(language, text)):
        name = next(g for g in m.groups()[:-1] if g)
        params = m.group(m.lastindex or 0).split(",")
        for i, param in enumerate(params):
            pm = re.search(_PARAM_NAME[language], param.split("=")[0])
            if pm and _EXPECTED_PARAM.match(pm.group(1)) and name not in tests:
                found[name] = i
    return found


def helper_regions(language: str, chunk: str) -> list[tuple[int, int]]:
    """The arguments a test passes to a helper's expected parameter, outside calls."""
    regions = []
    code = scan.masked(language, chunk)
    for name, index in HELPERS.get():
        for m in re.finditer(rf"(?<![\w.]){re.escape(name)}\s*\(", code):
            end = scan.closing(language, chunk, m.end() - 1)
            if end < 0:
                continue
            cuts, at = [m.end() - 1], m.end()
            while True:
                comma = scan.top_level_comma(code, at, end - 1)
                cuts.append(comma)
                if comma >= end - 1:
                    break
                at = comma + 1
            if index + 1 < len(cuts):
                lo, hi = cuts[index] + 1, cuts[index + 1]
                regions += scan.outside_calls(language, chunk, lo, hi)
    return regions
