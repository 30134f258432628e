"""The real test cannot be told from its copies by layout, by value or by form (issue 24,
round two's red team: all three told it, in every language). Offline, over every
exercise of the benchmark: an attacker who knows the disguise code and applies its
rules does no better than chance."""

from __future__ import annotations

import ast
import collections
import random
import re
import secrets
import statistics
from collections.abc import Callable
from pathlib import Path

import pytest

from dgm.benchmarks.polyglot import loader as polyglot
from dgm.benchmarks.polyglot.copies import MUST_FAIL, REAL, Entry, NameGen
from dgm.benchmarks.polyglot.copies_text import find_tests
from dgm.benchmarks.polyglot.disguise import disguise
from dgm.benchmarks.polyglot.judge import prepare_judge_tree
from dgm.benchmarks.polyglot.variants import int_run, number_literal

from . import joint_attack
from .judged_files import judged_files

BRACE = ["go", "rust", "java", "cpp", "javascript"]


@pytest.fixture
def seeded(monkeypatch: pytest.MonkeyPatch) -> None:
    """One fixed sample of draws (the judge draws from `secrets`): a bound 3.5 standard
    deviations above chance then passes or fails the same way on every run, so a small
    known tilt (README, "smallest") cannot fail CI by luck and a larger one always does."""
    rng = random.Random(24)
    monkeypatch.setattr(secrets, "randbelow", rng.randrange)
    monkeypatch.setattr(secrets, "choice", rng.choice)
    monkeypatch.setattr(secrets, "token_hex", lambda n=32: rng.randbytes(n).hex())


def _margin(chance: float, count: int) -> float:
    """What a rule may score above chance by luck (3.5 standard deviations)."""
    return 3.5 * (chance * (1 - chance) / count) ** 0.5


def _groups(plan_entries: list[Entry]) -> dict[str, list[Entry]]:
    by: dict[str, list[Entry]] = collections.defaultdict(list)
    for entry in plan_entries:
        by[entry.original].append(entry)
    # Two real tests of one name (list-ops' `empty list` in several describes) make no
    # group: "first of the group" would then count their real tests twice.
    return {k: v for k, v in by.items() if len(v) > 1 and sum(e.kind == REAL for e in v) == 1}


def _layouts(language: str, root: Path, rounds: int) -> list[tuple[list[Entry], str, dict]]:
    """(a group's members in file order, the file's text, their spans by name)."""
    bench = polyglot.PolyglotTasks(root)
    out = []
    for task in bench.tasks("full"):
        if task.language != language:
            continue
        for n in range(rounds):
            dest = root.parent / "judge-trees" / f"{task.id}-{n}"
            plan = prepare_judge_tree(task, dest)
            if plan.canaries:
                continue  # files without must-fail copies keep literal canaries (README)
            for path in judged_files(task, dest):
                text = path.read_text()
                spans = {}
                for s in find_tests(language, text):
                    spans[re.sub(r"^[\"']|[\"']$", "", text[s.name_at[0] : s.name_at[1]])] = s
                for members in _groups(plan.entries).values():
                    if all(e.key in spans for e in members):
                        members = sorted(members, key=lambda e: spans[e.key].start)
                        out.append((members, text, spans))
    return out


def _blank_line_rule(members: list[Entry], text: str, spans: dict) -> Entry:
    """The red team's F2 rule: the one right after a sibling with no blank line between."""
    for before, member in zip(members, members[1:], strict=False):
        if text[spans[before.key].end : spans[member.key].start] == "":
            return member
    return members[0]


def _odd_gap_rule(members: list[Entry], text: str, spans: dict) -> Entry:
    """The one whose text before it differs from its siblings'."""
    gaps = [text[max(0, spans[m.key].start - 3) : spans[m.key].start] for m in members]
    counts = collections.Counter(gaps)
    return next((m for m, g in zip(members, gaps, strict=True) if counts[g] == 1), members[0])


_RULES: dict[str, Callable[[list[Entry], str, dict], Entry]] = {
    "blank lines": _blank_line_rule,
    "odd gap": _odd_gap_rule,
    "first": lambda members, text, spans: members[0],
    "last": lambda members, text, spans: members[-1],
}


@pytest.mark.parametrize("language", BRACE)
def test_layout_says_nothing_about_which_block_is_the_real_test(
    language: str, polyglot_dir: Path, tmp_path: Path
) -> None:
    """Blank lines, adjacency and order (so line numbers) are the same for every block:
    position rules find the real test of a group no more often than chance."""
    root = tmp_path / "bench"
    root.symlink_to(polyglot_dir)
    groups = _layouts(language, root, 2)
    assert len(groups) > 60, len(groups)
    chance = statistics.mean(1 / len(members) for members, _, _ in groups)
    for rule, pick in _RULES.items():
        hits = statistics.mean(pick(m, t, s).kind == REAL for m, t, s in groups)
        assert hits <= chance + _margin(chance, len(groups)), (rule, hits, chance)
    ranks = [
        next(i for i, e in enumerate(m) if e.kind == REAL) / (len(m) - 1) for m, _, _ in groups
    ]
    spread = 3 * (statistics.pvariance(ranks) / len(ranks)) ** 0.5
    assert abs(statistics.mean(ranks) - 0.5) < spread, "the real test's rank is not uniform"


def test_blocks_of_a_run_are_one_blank_line_apart() -> None:
    text = (
        "describe('x', () => {\n  test('a', () => {\n    expect(f(1)).toEqual(2);\n  });\n"
        "  test('b', () => {\n    expect(f(2)).toEqual(3);\n  });\n\n\n"
        "  const helper = 1;\n  test('c', () => {\n    expect(f(3)).toEqual(4);\n  });\n});\n"
    )
    out, entries = disguise("javascript", text, NameGen())
    spans = find_tests("javascript", out)
    assert len(spans) == len(entries) > 3
    gaps = [out[a.end : b.start] for a, b in zip(spans, spans[1:], strict=False)]
    assert gaps.count("\n") == len(gaps) - 1, gaps  # one blank line, but at the helper
    assert "\n\n  const helper = 1;\n" in gaps  # which stays where it was
    assert out.index("const helper") > out.index("toEqual(2)") and "toEqual(4)" in out


# -- values ----------------------------------------------------------------------------------
def _value_groups(language: str, root: Path, rounds: int) -> list[tuple[str, list[str]]]:
    """(real expected literal, its must-fail copies' literals) for each changed test; not
    booleans (the pair {true, false} tells only how often the file expects true)."""
    bench = polyglot.PolyglotTasks(root)
    found = []
    for task in bench.tasks("full"):
        if task.language != language:
            continue
        for n in range(rounds):
            plan = prepare_judge_tree(task, root.parent / "trees" / f"{task.id}-{n}")
            by: dict[str, list[tuple[str, str]]] = collections.defaultdict(list)
            for e in plan.entries:
                if e.kind == MUST_FAIL and e.how.startswith("expected "):
                    real, _, copy = e.how[len("expected ") :].partition(" -> ")
                    by[e.original].append((real, copy))
            for pairs in by.values():  # (tests of one name in two `describe`s: two values)
                for real in {r for r, _ in pairs} - {"true", "false", "True", "False"}:
                    found.append((real, [c for r, c in pairs if r == real]))
    return found


def _number(literal: str) -> float | None:
    try:
        value = ast.literal_eval(re.sub(r"(?<=\d)[A-Za-z]\w*$", "", literal))
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _old_rule(candidates: list[str]) -> str:
    """Round one's tell: ints >= 10 were only lowered, smaller ones only raised."""
    values = [_number(c) for c in candidates]
    if None in values:
        return candidates[0]
    big = all(v >= 10 for v in values)  # type: ignore[operator]
    pick = max if big else min
    return candidates[values.index(pick(values))]  # type: ignore[arg-type,type-var]


_VALUE_RULES: dict[str, Callable[[list[str]], str]] = {
    "old one-sided rule": _old_rule,
    "smallest": lambda c: min(c, key=lambda x: (_number(x) or 0, x)),
    "largest": lambda c: max(c, key=lambda x: (_number(x) or 0, x)),
    "middle": lambda c: sorted(c, key=lambda x: (_number(x) or 0, x))[len(c) // 2],
}


@pytest.mark.parametrize(
    "language",
    [
        "python",
        "javascript",
        "rust",
        "java",  # "smallest" 0.536 on the seeded sample against 0.543 (README: a tilt)
        "go",
    ],
)
@pytest.mark.usefixtures("seeded")
def test_an_attacker_who_knows_the_mutation_picks_the_real_value_by_chance_only(
    language: str, polyglot_dir: Path, tmp_path: Path
) -> None:
    """Given the set {real, copies} of one test's changed value, no rule that follows from
    how copies are made picks the real one more often than 1/(k+1)."""
    root = tmp_path / "bench"
    root.symlink_to(polyglot_dir)
    groups = _value_groups(language, root, 3)
    assert len(groups) > 50, len(groups)
    chance = statistics.mean(1 / (1 + len(copies)) for _, copies in groups)
    for rule, pick in _VALUE_RULES.items():
        hits = statistics.mean(pick(sorted([real, *copies])) == real for real, copies in groups)
        assert hits <= chance + _margin(chance, len(groups)), (rule, hits, chance)


def test_numbers_keep_their_notation_and_never_straddle_zero() -> None:
    for _ in range(300):
        for copy in number_literal("0x81", 3):
            assert re.fullmatch(r"0x[0-9a-f]{2}", copy), copy
        for copy in number_literal("0XFF", 2):
            assert re.fullmatch(r"0X[0-9A-F]{2}", copy), copy
        for copy in number_literal("2.50", 2):
            assert re.fullmatch(r"\d\.\d\d", copy), copy
        for copy in number_literal("3u8", 2):
            assert re.fullmatch(r"\d+u8", copy) and int(copy[:-2]) < 128, copy
        run = int_run(0, 3)
        assert not run or min(run) > 0
    assert number_literal("1_000", 1) == [] and number_literal("1e9", 1) == []
    ranks = collections.Counter()
    for _ in range(2000):
        run = int_run(50, 2)
        if run:
            ranks[sorted([50, *run]).index(50)] += 1
    assert min(ranks.values()) > 0.28 * sum(ranks.values()), ranks


@pytest.mark.parametrize("language", ["go", "rust", "cpp"])
@pytest.mark.usefixtures("seeded")
def test_round_five_joint_readers_do_no_better_than_chance_on_the_whole_file(
    language: str, polyglot_dir: Path, tmp_path: Path
) -> None:
    """Red team round five (H5, H10, H11): an attacker who sees the whole disguised file
    (Go's and Rust's binaries print every failing test's expected value, a C++ macro can
    embed the source) and knows which tests form a family. Neither the count rules nor
    H11's joint rule ("every copy's value is some test's real value") nor H10's error-flag
    rule picks the real members more often than chance: per family, and for every family
    of a draw at once (which is what resolves a file). Before the fix, rust drew copies from
    the file's own expected values: the joint rule named every real test in 0.55 of draws
    (chance 0.005), and Go's flag rule in 0.76 (chance 0.29)."""
    bench = polyglot.PolyglotTasks(polyglot_dir)
    got = joint_attack.measure(bench.tasks(language), tmp_path, 2)
    assert got["families"] > 60, got
    chance = got["chance"]
    for rule in joint_attack.RULES:
        assert got[rule] <= chance + _margin(chance, got["families"]), (rule, got)
    whole = got["draw chance"]
    for rule in ("joint draws", "kind draws"):
        assert got[rule] <= whole + max(0.05, _margin(whole, got["draws"])), (rule, got)


def test_go_error_flags_are_set_and_cleared_alike(polyglot_dir: Path, tmp_path: Path) -> None:
    """Round five H10: copies_go never changed an entry that expects an error, so a
    flipped flag always added one, and "the member whose changed entry is the rarer kind
    is the copy" named it (go/say 4/4). beer-song's copies can only flip `expectErr`:
    they clear it about as often as they set it."""
    task = polyglot.PolyglotTasks(polyglot_dir).task("go__beer-song")
    hows = collections.Counter()
    for n in range(10):
        plan = prepare_judge_tree(task, tmp_path / str(n))
        hows.update(e.how for e in plan.entries if e.kind == MUST_FAIL)
    assert set(hows) == {"expected true -> false", "expected false -> true"}, hows
    assert min(hows.values()) >= 0.2 * sum(hows.values()), hows


# -- forms -----------------------------------------------------------------------------------
_NEGATIVE_FORMS = [r"\bREQUIRE_FALSE\b", r"\bCHECK_FALSE\b", r"\bassert_ne!", r"assert!\(\s*!",
                   r"\.isNotEqualTo\(", r"\bassertNotEquals\(", r"\bif\s+!\(", r"\.isFalse\(",
                   r"\bassertFalse\("]  # fmt: skip


def test_copies_use_only_forms_their_file_already_uses(polyglot_dir: Path, tmp_path: Path) -> None:
    """No must-fail copy is written in an assertion form the pristine file never uses;
    files with must-fail copies get no literal canaries; Go's real tables are renamed
    like their copies."""
    bench = polyglot.PolyglotTasks(polyglot_dir)
    for task in bench.tasks("full"):
        if task.language == "python":
            continue
        dest = tmp_path / task.id
        plan = prepare_judge_tree(task, dest)
        pristine = "\n".join((Path(task.source) / n).read_text() for n in task.hidden_files)
        for path in judged_files(task, dest):
            judged = path.read_text()
            if any(e.kind == MUST_FAIL and e.key in judged for e in plan.entries):
                assert not any(c.name in judged for c in plan.canaries), (task.id, path.name)
            for form in _NEGATIVE_FORMS:
                if re.search(form, judged):
                    assert re.search(form, pristine), (task.id, form)
            if (
                task.language == "go"
                and re.search(r"^var testCases\b", pristine, re.M)
                and any(e.kind == MUST_FAIL and "testCases" not in e.how for e in plan.entries)
            ):
                assert "testCases" not in judged, task.id
