"""Names and literals for the judge's own tests in a SWE-bench test file: fresh test names
in the file's own style (copies and canaries alike, so a name says nothing about which is
which), and the file's plain literals (what a canary compares)."""

from __future__ import annotations

import io
import random
import re
import tokenize

_FILLER = ["value", "case", "basic", "result", "call", "default", "simple", "works", "empty",
           "single", "multiple", "format", "error", "name", "type", "order"]  # fmt: skip


class Names:
    """Fresh test names in each file's own style, from the words of its test names."""

    def __init__(self, sources: dict[str, str], rng: random.Random) -> None:
        self.rng = rng
        self.sources = sources
        self.taken: set[str] = set()
        self.style: dict[str, tuple[str, list[str], list[int]]] = {}
        for path, text in sources.items():
            names = re.findall(r"def (test\w*)\s*\(", text)
            prefix = (
                "test__" if sum(n.startswith("test__") for n in names) * 2 > len(names) else "test_"
            )
            words = sorted({w for n in names for w in n[len(prefix) :].split("_") if w})
            counts = [max(1, len([w for w in n[len(prefix) :].split("_") if w])) for n in names]
            words += [w for w in _FILLER if len(words) < 6 and w not in words]
            self.style[path] = (prefix, words, counts or [2])

    def draw(self, path: str) -> str:
        prefix, words, counts = self.style[path]
        for attempt in range(500):
            k = min(self.rng.choice(counts) + (attempt // 100), len(words))
            name = prefix + "_".join(self.rng.sample(words, k))
            if name not in self.taken and not any(
                re.search(rf"\b{name}\b", t) for t in self.sources.values()
            ):
                self.taken.add(name)
                return name
        raise RuntimeError("no fresh test name")  # unreachable with the filler words


def plain_literals(text: str) -> list[str]:
    """The spellings of a file's one-line plain string and decimal int literals (what a
    canary compares, so its values are the file's own)."""
    out = []
    try:
        found = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return out
    for tok in found:
        plain = tok.type == tokenize.STRING and re.fullmatch(
            r"(['\"])[\w .,:/-]{1,40}\1", tok.string
        )
        if plain or tok.type == tokenize.NUMBER and re.fullmatch(r"[1-9]\d{0,8}|0", tok.string):
            out.append(tok.string)
    return out
