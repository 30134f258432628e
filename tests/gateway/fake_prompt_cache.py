"""A model of Anthropic's prompt cache, for the fake upstream and the pricing benchmark.

What it reproduces (from Anthropic's prompt-caching documentation):
- the cached prefix runs tools -> system -> messages, block by block, up to a block
  marked `cache_control`; at most 4 marks;
- a request reads the longest cached prefix that ends at one of its marks, or at one of
  the 20 blocks before a mark (the API's automatic look-back);
- every mark whose prefix reaches the model's minimum (1024 tokens for Sonnet) is
  written; `cache_creation_input_tokens` counts the tokens from the end of what was
  read to the furthest mark written; `input_tokens` is the rest;
- entries never expire (a dry-run replay takes seconds, well inside the 5-minute TTL).

Tokens are counted as the canonical JSON's length / 4, a fair stand-in for a tokenizer.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

LOOKBACK_BLOCKS = 20


@dataclass(frozen=True)
class Block:
    where: str
    """`tools[i]`, `system[i]` or `messages[i]` (the message holding the block)."""
    tokens: int
    marked: bool
    prefix_key: str
    """Hash of every block up to and including this one."""


@dataclass
class CacheAnswer:
    input_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    breakpoints: list[str]

    def usage(self, output_tokens: int) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": output_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
        }


@dataclass
class PromptCacheModel:
    min_tokens: int = 1024
    entries: set[str] = field(default_factory=set)
    answers: list[CacheAnswer] = field(default_factory=list)
    """Every answer given, in order."""

    def answer(self, body: dict[str, Any]) -> CacheAnswer:
        """Usage for one Messages API request body; updates the cache as the API would."""
        blocks = request_blocks(body)
        marks = [i for i, b in enumerate(blocks) if b.marked]
        if len(marks) > 4:
            raise ValueError(f"{len(marks)} cache_control blocks; the API allows 4")
        ends = _running_totals(blocks)
        read_to = 0  # blocks [0, read_to) come from the cache
        for mark in marks:
            for j in range(mark, max(mark - LOOKBACK_BLOCKS, -1), -1):
                if blocks[j].prefix_key in self.entries:
                    read_to = max(read_to, j + 1)
                    break
        written = [m for m in marks if ends[m] >= self.min_tokens]
        self.entries.update(blocks[m].prefix_key for m in written)
        read = ends[read_to - 1] if read_to else 0
        write_to = max(written, default=-1)
        write = ends[write_to] - read if write_to + 1 > read_to else 0
        total = ends[-1] if ends else 0
        answer = CacheAnswer(total - read - write, read, write, [blocks[m].where for m in marks])
        self.answers.append(answer)
        return answer


def request_blocks(body: dict[str, Any]) -> list[Block]:
    """The request's cacheable blocks in prefix order, each with its running hash."""
    parts: list[tuple[str, Any]] = [
        (f"tools[{i}]", t) for i, t in enumerate(body.get("tools") or [])
    ]
    system = body.get("system")
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    parts += [(f"system[{i}]", b) for i, b in enumerate(system or [])]
    for i, message in enumerate(body.get("messages") or []):
        content = message["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        parts += [(f"messages[{i}]", {"role": message["role"], **b}) for b in content]
    digest = hashlib.sha256()
    blocks = []
    for where, part in parts:
        plain = {k: v for k, v in part.items() if k != "cache_control"}
        canonical = json.dumps(plain, sort_keys=True, ensure_ascii=False)
        digest.update(canonical.encode() + b"\x00")
        blocks.append(
            Block(
                where, len(canonical) // 4 + 1, bool(part.get("cache_control")), digest.hexdigest()
            )
        )
    return blocks


def _running_totals(blocks: list[Block]) -> list[int]:
    totals, running = [], 0
    for block in blocks:
        running += block.tokens
        totals.append(running)
    return totals
