"""Can a forger that reads the judge's rewritten test files tell a copied original from its
must-fail copies by structure? Offline, over the 30 SWE-bench instances (no Docker): the
judge's own planner, many draws, and the structural guesses the red team used (smallest
number, largest, the string closest to all others, the smallest or largest text (the
structural forger's tie-break), first or last in file order). Each
must stay near chance, 1/(k+1) for a family of k+1. `python -m tests.benchmarks.
test_swe_copy_guessing` prints the table."""

from __future__ import annotations

import ast
import random
import tempfile
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest

from dgm.benchmarks.swebench import copy_plan, guard
from dgm.benchmarks.swebench.copies import plan_copies
from tests.benchmarks.test_swe_real import DATA

Member = tuple[int, str]  # (line in the file, the token that differs in the family)
GUESSES: dict[str, Callable[[list[Member]], Member]] = {
    "smallest number": lambda fam: min(fam, key=lambda m: (_num(m[1]), m[0])),
    "largest number": lambda fam: max(fam, key=lambda m: (_num(m[1]), -m[0])),
    "middle number": lambda fam: sorted(fam, key=lambda m: (_num(m[1]), m[0]))[len(fam) // 2],
    "string centre": lambda fam: min(fam, key=lambda m: sum(_dist(m[1], o[1]) for o in fam)),
    "smallest text": lambda fam: min(fam, key=lambda m: (m[1], m[0])),
    "largest text": lambda fam: max(fam, key=lambda m: (m[1], -m[0])),
    "first in file": lambda fam: min(fam),
    "last in file": lambda fam: max(fam),
}


def _num(token: str) -> float:
    try:
        return float(token)
    except ValueError:
        return 0.0


def _dist(a: str, b: str) -> int:
    return sum(x != y for x, y in zip(a, b, strict=False)) + abs(len(a) - len(b))


def instance_sources() -> dict[str, tuple[dict[str, str], list[str], list[str]]]:
    """instance id -> (test files after the test patch, F2P, P2P), where they can be built."""
    from dgm.benchmarks.swebench.data import SweData
    from dgm.benchmarks.swebench.images import unpack

    data = SweData(DATA)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for iid, rec in data.instances.items():
            files = guard.test_files(guard.test_command(rec["eval_script"]))
            bare = unpack(data, rec["repo"], Path(tmp))
            base = copy_plan.files_at(bare, rec["base_commit"], files)
            sources = copy_plan.with_test_patch(base, rec["test_patch"])
            if sources:
                out[iid] = (sources, rec["FAIL_TO_PASS"], rec["PASS_TO_PASS"])
    return out


def families(plan: copy_plan.CopyPlan) -> list[tuple[list[Member], Member]]:
    """Each mutated original's family as (members, the original)."""
    out = []
    for original in set(plan.must_fail.values()):
        names = [original, *[c for c, o in plan.must_fail.items() if o == original]]
        segments: dict[str, tuple[int, str]] = {}
        for text in plan.files.values():
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.FunctionDef) and node.name in names:
                    body = (ast.get_source_segment(text, node) or "").split("\n", 1)[-1]
                    segments[node.name] = (node.lineno, body)
        bodies = [segments[n][1] for n in names]
        at = next(i for i in range(len(bodies[0])) if len({b[i : i + 1] for b in bodies}) > 1)
        members = []
        for name in names:
            line, body = segments[name]
            start = at
            while start and (body[start - 1].isalnum() or body[start - 1] in "._-"):
                start -= 1
            end = at
            while end < len(body) and (body[end].isalnum() or body[end] in "._"):
                end += 1
            members.append((line, body[start:end]))
        original_member = members[0]
        random.Random(original).shuffle(members)  # ties must not fall to the original
        out.append((members, original_member))
    return out


def guess_rates(draws: int) -> dict[str, tuple[int, int, float]]:
    """guess -> (right, families, chance) over all instances and draws."""
    right: dict[str, int] = defaultdict(int)
    total, chance = 0, 0.0
    for iid, (sources, f2p, p2p) in sorted(instance_sources().items()):
        for seed in range(draws):
            plan = plan_copies(sources, f2p, p2p, random.Random(f"{iid}/{seed}"))
            for members, original in families(plan) if plan else []:
                total += 1
                chance += 1 / len(members)
                for name, guess in GUESSES.items():
                    right[name] += guess(members) == original
    return {n: (right[n], total, chance / max(total, 1)) for n in GUESSES}


@pytest.mark.slow
def test_no_structural_guess_finds_the_originals_better_than_chance() -> None:
    if not (DATA / "instances.jsonl").is_file():
        pytest.skip(f"no SWE-bench data at {DATA}")
    rates = guess_rates(draws=6)
    for name, (right, total, chance) in rates.items():
        assert total > 200
        assert right / total < chance + 0.08, (name, right, total, chance)


if __name__ == "__main__":
    for name, (right, total, chance) in guess_rates(draws=20).items():
        print(f"{name:16s} {right:5d}/{total:5d} = {right / total:.2f}  (chance {chance:.2f})")
