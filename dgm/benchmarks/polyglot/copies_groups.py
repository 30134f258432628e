"""Must-fail copies planned by shared value (red team round six T2).

A real value that several tests expect (phone-number's `2234567890`, six tests) was the
value the disguised file held most: its copies went to some of its tests only, with
values held once each, and the others (and their must-pass copies) kept it the most
frequent. Here, when a test's copies change a value R (by key: the literal's text, or
for Python the repr of the expected value), every test of the file expecting R gets
copies changing R, the same number k of them with the same values (drawn once per file,
value_draws.once_per_value, and made fresh for a shared value, variants), and none of
them gets a must-pass copy: each copy value is then expected exactly as often as R. A
test is in at most one group (a copy of a test duplicates its other expected values, so
a test already copied for another value would add uses of R that no copy value gets).
Where that cannot be done (a test of R that cannot be copied or changed at R, or already
copied, or the group over the budget), no test changes R: the test draws another value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from dgm.benchmarks.polyglot import value_draws
from dgm.benchmarks.polyglot.copies import MAX_MUST_FAIL, pick_copies

T = TypeVar("T")
CAP = 2 * MAX_MUST_FAIL
"""Must-fail copies per file at most once groups are formed (a shared value's tests may
take the file past MAX_MUST_FAIL; the cost is at most twice as many copies)."""
AVOIDS = 4
"""Values a test may be refused before it gets no copy."""


def plan(
    able: list[int],
    mutable: list[int],
    expects: list[frozenset[str]],
    mutate: Callable[[int, int], list[T]],
    elsewhere: frozenset[str] = frozenset(),
    balanced: Callable[[str], bool] = lambda _key: True,
) -> tuple[list[int], dict[int, list[T]]]:
    """(tests to copy unchanged, test -> its must-fail copies). `expects`: the keys of
    each test's expected values; `mutate(i, k)`: up to k must-fail copies of test i
    (the changers read value_draws.TARGET); `elsewhere`: keys that tests outside this
    plan expect (Python: another class), never changed; `balanced(key)`: does the file
    hold the value only where its tests expect it? (One held elsewhere too, an input, is
    copied test by test as before: no copy value could be held as often.)"""
    passing, failing = pick_copies(able, mutable)
    if not value_draws.GROUPED.get():
        return passing, {i: mutate(i, failing.count(i)) for i in dict.fromkeys(failing)}
    made: dict[int, list[T]] = {}
    spent, avoid = 0, set(elsewhere)
    for i in dict.fromkeys(failing):
        if i in made:
            continue
        for _ in range(AVOIDS):
            copies, key = _made(mutate, i, failing.count(i), None, avoid)
            group = sorted({i, *(j for j, keys in enumerate(expects) if key in keys)})
            if key is None or len(group) == 1 or not copies or not balanced(key):
                made[i] = copies
                spent += len(copies)
                break
            members = _group(mutate, group, i, copies, key, able, made, CAP - spent)
            if members:
                made.update(members)
                spent += sum(map(len, members.values()))
                break
            avoid.add(key)
        else:
            made[i] = []
    return [p for p in passing if p not in made], {i: c for i, c in made.items() if c}


def _group(mutate: Callable[[int, int], list[T]], group: list[int], first: int,
           copies: list[T], key: str, able: list[int], made: dict[int, list[T]],
           budget: int) -> dict[int, list[T]]:  # fmt: skip
    """Copies changing `key` for every test of the group (the first's already made), the
    same values in each, as many as the budget affords; {} where one cannot have them."""
    k = min(len(copies), budget // len(group))
    if k < 1 or any(j not in able or j in made for j in group):
        return {}
    out = {first: copies}
    for j in group:
        if j != first:
            mine, changed = _made(mutate, j, len(copies), key, set())
            if changed != key or len(mine) != len(copies):
                return {}
            out[j] = mine
    keep = sorted(value_draws.shuffled(list(range(len(copies))))[:k])
    return {j: [c[s] for s in keep] for j, c in out.items()}


def _made(mutate: Callable[[int, int], list[T]], i: int, k: int, prefer: str | None,
          avoid: set[str]) -> tuple[list[T], str | None]:  # fmt: skip
    target = value_draws.Target(prefer, frozenset(avoid))
    token = value_draws.TARGET.set(target)
    try:
        return (mutate(i, k) if k else []), target.changed
    finally:
        value_draws.TARGET.reset(token)
