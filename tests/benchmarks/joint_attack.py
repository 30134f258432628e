"""Round five's joint readers (red team 2026-12-02, H5, H10, H11) offline, on full
information: the attacker sees the whole disguised test file (a C++ macro can embed it, and
Go's and Rust's binaries print every failing test's expected value) and knows which tests
form a family (the real test and its must-fail copies differ in one literal). Used by
test_judge_exchangeable and perf/judge_joint.py.

Rules, each picking the real member of every family of one draw:
- "fewest": the member whose value the file shows least often (H5's and H10's tie rule:
  a copy's value drawn from the file adds one use to a value it already holds);
- "most": the opposite;
- "joint" (H11): the joint choice under which most copies' values are still some real
  test's value (the file's uses less those of the copies chosen), ties to the fewest uses;
- "kind" (H10, Go): for a changed error flag, the member whose changed entry is of the
  commoner kind in its own table (a flag only ever set told the copy), else "fewest".
"""

from __future__ import annotations

import collections
import itertools
import re
from dataclasses import dataclass
from pathlib import Path

from dgm.benchmarks.polyglot import loader as polyglot
from dgm.benchmarks.polyglot.copies import MUST_FAIL, REAL
from dgm.benchmarks.polyglot.judge import prepare_judge_tree

from .judged_files import judged_files


@dataclass
class Family:
    values: list[str]
    """The members' changed literals, the real one first."""
    kinds: list[int]
    """For an error flag: each member's count of entries of its changed entry's kind in
    its own table; else zeros."""


def _uses(text: str, literal: str) -> int:
    if literal[:1] in "\"'`":
        return text.count(literal)
    return len(re.findall(rf"(?<![\w.]){re.escape(literal)}(?![\w.])", text))


def draw(task: polyglot.Task, dest: Path) -> tuple[str, list[Family]]:
    """One judge tree: (its judged files' text, its families)."""
    plan = prepare_judge_tree(task, dest)
    text = "\n".join(p.read_text() for p in judged_files(task, dest))
    real = {e.original: e.key for e in plan.entries if e.kind == REAL}
    by: dict[str, list[tuple[str, str]]] = collections.defaultdict(list)
    for e in plan.entries:
        if e.kind == MUST_FAIL and e.how.startswith("expected "):
            old, _, new = e.how[len("expected ") :].partition(" -> ")
            by[e.original].append((old, new))
    families = []
    for original, pairs in by.items():
        olds = {o for o, _ in pairs}
        if len(olds) != 1:
            continue  # (two real tests of one name)
        old = olds.pop()
        values = [old] + [n for _, n in pairs]
        kinds = [0] * len(values)
        if task.language == "go" and old in ("true", "false"):
            kinds = _flag_kinds(text, real.get(original, ""), old)
        families.append(Family(values, kinds))
    return text, families


def _flag_kinds(text: str, test: str, old: str) -> list[int]:
    """For a flipped Go flag: entries of the changed entry's kind in the real table, and
    in the copy's (the copy's table has one more of the other kind)."""
    body = re.search(rf"func {test}\(.*?\n}}\n", text, re.S)
    table = re.search(r"range\s+(\w+)", body.group(0)) if body else None
    name = table.group(1) if table else "(?!)"
    decl = re.search(rf"(?:var\s+|\b){name}\s*:?=.*?\n}}\n", text, re.S)
    if not decl:
        return [0, 0]
    same = len(re.findall(rf"\b{old}\b", decl.group(0)))
    other = len(re.findall(rf"\b{'true' if old == 'false' else 'false'}\b", decl.group(0)))
    return [same, other + 1]


def _tied(scores: list[int], best: int) -> float:
    """The odds that a pick among the members scoring `best` is the real one (first)."""
    return (scores[0] == best) / scores.count(best)


def _fewest(text: str, fam: Family) -> float:
    uses = [_uses(text, v) for v in fam.values]
    return _tied(uses, min(uses))


def _most(text: str, fam: Family) -> float:
    uses = [_uses(text, v) for v in fam.values]
    return _tied(uses, max(uses))


def _kind(text: str, fam: Family) -> float:
    if any(fam.kinds) and fam.kinds[0] != fam.kinds[1]:
        return _tied(fam.kinds, max(fam.kinds))
    return _fewest(text, fam)


def joint(text: str, families: list[Family]) -> float:
    """The odds that H11's joint choice (see the module docstring), ties drawn at random,
    is the real member of every family."""
    uses = {v: _uses(text, v) for f in families for v in f.values}
    scores = {}
    for choice in itertools.product(*(range(len(f.values)) for f in families)):
        left = collections.Counter(uses)
        copies = [v for f, c in zip(families, choice, strict=True)
                  for i, v in enumerate(f.values) if i != c]  # fmt: skip
        left.subtract(copies)
        real = sum(left[v] > 0 for v in copies)
        seen = sum(uses[f.values[c]] for f, c in zip(families, choice, strict=True))
        scores[choice] = (real, -seen)
    best = max(scores.values())
    tied = [c for c, s in scores.items() if s == best]
    return (tuple([0] * len(families)) in tied) / len(tied)


RULES = {"fewest": _fewest, "most": _most, "kind": _kind}


def measure(tasks: list[polyglot.Task], where: Path, rounds: int) -> dict[str, float]:
    """Per-family hits of each rule, whole-draw exact hits of "joint" and of "kind",
    and their chances, over `rounds` draws of each task with families."""
    hits: dict[str, list[float]] = collections.defaultdict(list)
    for task in tasks:
        for n in range(rounds):
            text, families = draw(task, where / f"{task.id}-{n}")
            if not families:
                continue
            for rule, pick in RULES.items():
                hits[rule] += [pick(text, f) for f in families]
            hits["chance"] += [1 / len(f.values) for f in families]
            exact = 1.0
            for f in families:
                exact /= len(f.values)
            hits["draw chance"].append(exact)
            hits["joint draws"].append(joint(text, families))
            kind = 1.0
            for f in families:
                kind *= _kind(text, f)
            hits["kind draws"].append(kind)
    sizes = {"families": len(hits["chance"]), "draws": len(hits["draw chance"])}
    return {k: sum(v) / len(v) for k, v in hits.items()} | sizes
