"""Hidden tests never reach a prompt: what a diagnosis may see of a judge's output.

Solution code runs inside the judge next to the hidden tests, so it can print them
(`print(open('test_x.py').read())`), and test frameworks print test source themselves
(pytest's assertion rewriting shows the failing lines). A diagnosis that read that
output would hand the next generation the hidden tests. So the diagnosis gets:

- the test names and their verdicts (from the judge's per-test results);
- the test output with every line that carries hidden test source redacted: a line
  that contains a (normalised) line of a hidden file, or is itself a fragment of one,
  or carries a long encoded blob (base64/hex: the same source, disguised);
- each line cut short, and the whole cut to a small budget (head and tail).

Lines are compared with all whitespace removed, so re-indented or re-spaced copies are
caught too; and by their shape (every string and number literal made one placeholder),
so the judge's mutated copies of a hidden line (the same assertion with another expected
value) are removed like the line itself: a diagnosis that showed them would teach the
next generation how the copies differ from the real tests. The hidden files are read
from the pristine benchmark source on the host, never from anything the agent or the
judge container wrote.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dgm import safefs

MIN_HIDDEN_LINE = 8
"""Hidden lines shorter than this (`}`, `end`, `import x`) are too common to hunt for."""
MIN_FRAGMENT = 12
"""An output line this long that appears inside a hidden file is a fragment of it."""
LINE_LIMIT = 240
OUTPUT_LIMIT = 4_000
SCAN_LINES = 400
"""Only this many lines from each end of the output are looked at (the rest is cut)."""
HIDDEN_FILE_LIMIT = 2 * 1024 * 1024
REDACTED = "[line removed: it carries hidden test source]"
ENCODED = re.compile(r"[A-Za-z0-9+/=]{40,}|[0-9a-fA-F]{40,}")
_SPACE = re.compile(r"\s+")
_LITERAL = re.compile(
    r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`(?:[^`\\]|\\.)*`"""
    r"|\b0[xX][0-9a-fA-F_]+\b|(?<![A-Za-z_])\d[\d_]*(?:\.\d+)?(?:[eE][-+]?\d+)?"
)
"""String, hex and decimal literals: what a mutated copy of a hidden line changes."""


def _norm(line: str) -> str:
    return _SPACE.sub("", line)


def _shape(line: str) -> str:
    """The line with whitespace removed and every literal made `#`."""
    return _norm(_LITERAL.sub("#", line))


class HiddenSource:
    """The normalised lines of a task's hidden files."""

    def __init__(self, texts: Iterable[str]) -> None:
        normalised = [_norm(line) for text in texts for line in text.splitlines()]
        self.lines = sorted({n for n in normalised if len(n) >= MIN_HIDDEN_LINE}, key=len)
        self.blob = "\n".join(n for n in normalised if n)
        shapes = {_shape(line) for text in texts for line in text.splitlines()}
        # Only shapes that had a literal and keep enough code around it: `#,` alone
        # would remove every number the output prints.
        self.shapes = sorted(
            {h for h in shapes if "#" in h and len(h.replace("#", "")) >= MIN_FRAGMENT}, key=len
        )

    def leaks(self, line: str) -> bool:
        n = _norm(line)
        if len(n) >= MIN_FRAGMENT and n in self.blob:
            return True
        if len(n) >= MIN_HIDDEN_LINE and any(h in n for h in self.lines if len(h) <= len(n)):
            return True
        shape = _shape(line)
        if any(h in shape for h in self.shapes if len(h) <= len(shape)):
            return True
        return any(_looks_encoded(token) for token in ENCODED.findall(line))


def _looks_encoded(token: str) -> bool:
    """Long runs of base64/hex with digits in them; CamelCase test names have none."""
    return any(c.isdigit() for c in token) or "+" in token or "/" in token


def redact(
    text: str, hidden: HiddenSource, line_limit: int = LINE_LIMIT, scan: int = SCAN_LINES
) -> str:
    """`text` with every line that carries hidden source replaced, lines cut short."""
    lines = text.splitlines()
    if len(lines) > 2 * scan:
        cut = len(lines) - 2 * scan
        lines = [*lines[:scan], f"[... {cut} lines left out ...]", *lines[-scan:]]
    out: list[str] = []
    for line in lines:
        shown = REDACTED if hidden.leaks(line) else _cut(line, line_limit)
        if not (shown == REDACTED and out and out[-1] == REDACTED):
            out.append(shown)
    return "\n".join(out)


def results_for_diagnosis(
    tests: dict[str, str] | None,
    output: str | None,
    hidden: HiddenSource | None,
    limit: int = OUTPUT_LIMIT,
) -> str:
    """What the diagnosis sees of a judged task: test names and verdicts, then the
    output redacted and cut. Without the hidden source (it could not be read), no
    output at all: only names, never unredacted text."""
    parts = []
    if tests:
        failed = sorted(name for name, status in tests.items() if status != "passed")
        passed = len(tests) - len(failed)
        parts.append(f"{passed} of {len(tests)} tests passed.")
        if failed:
            shown = ", ".join(_cut(name, 120) for name in failed[:40])
            more = f" and {len(failed) - 40} more" if len(failed) > 40 else ""
            parts.append(f"Failed: {shown}{more}")
    if output and hidden is not None:
        parts.append("Test output (hidden test source removed, shortened):")
        parts.append(_shorten(redact(output, hidden), limit))
    elif output:
        parts.append("(the test output is withheld: the hidden tests could not be read)")
    return "\n".join(parts) or "(no test results)"


def hidden_texts(task: Any) -> list[str]:
    """The pristine hidden test sources of a task (Polyglot files; SWE-bench's test patch)."""
    texts = []
    root = Path(task.source)
    for rel in task.hidden_files:
        if root.is_dir() and safefs.is_regular(root / rel):
            try:
                texts.append(safefs.read_text(root, rel, HIDDEN_FILE_LIMIT))
            except safefs.UnsafeFile:
                continue
    patch = (task.meta or {}).get("test_patch")
    if isinstance(patch, str):
        texts.append("\n".join(_patch_body(patch)))
    return texts


def _patch_body(patch: str) -> Iterable[str]:
    for line in patch.splitlines():
        if line.startswith(("+++", "---", "diff ", "index ", "@@")):
            continue
        if line[:1] in ("+", " ", "-"):
            yield line[1:]


def _cut(line: str, limit: int = LINE_LIMIT) -> str:
    return line if len(line) <= limit else line[:limit] + " [...]"


def _shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - limit} characters left out ...]\n{text[-half:]}"
