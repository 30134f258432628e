"""Counting does not find a SWE-bench copy family's original (red team round four, G1, G6,
G7): members occur in the disguised file as often as the original, a value the test
repeats changes everywhere at once, raise-only families come from one class of the
built-in hierarchy, and the fallback canaries are named and written like the file's
tests."""

from __future__ import annotations

import random
import re
from pathlib import Path

from dgm.benchmarks.swebench import guard, holdings, mutations
from dgm.benchmarks.swebench.copies import plan_copies
from dgm.benchmarks.swebench.copy_names import Names, plain_literals
from dgm.benchmarks.swebench.copy_plan import CopyPlan

from .pytest_runs import run_pytest

# The copied test's expected value also occurs in tests that are not copied, as do other
# format names, some as often, some more or less often.
FORMATS = """from fmt import render


def test_render_default():
    assert render("x") == "iso8601"


def test_parse_iso():
    assert "iso8601" in render("iso8601", loose=True)


def test_parse_rfc():
    assert render("rfc822") != "rfc822"
    assert render("unix") != "unix"
    assert render("epoch") != "local"


def test_parse_more():
    assert render("local") != "local"
    assert render("julian") != "ordinal"
    assert render("ordinal") != "julian"
    assert render("week") != "week"
    assert render("month") != "month"
    assert render("local") != "stamp"
"""
F2P = ["tests/test_fmt.py::test_render_default"]
SOLUTION = "def render(x, loose=False):\n    return 'iso8601' if x == 'x' else '?' + x\n"


def _families(plan: CopyPlan) -> list[list[str]]:
    """Each family's members (the quoted value that differs), original first."""
    text = next(iter(plan.files.values()))
    out = []
    for original in set(plan.must_fail.values()):
        names = [original, *[c for c, o in plan.must_fail.items() if o == original]]
        bodies = [text.split(f"def {n}(", 1)[1].split("\n\n", 1)[0] for n in names]
        out.append([re.findall(r'"[^"]*"', b)[-1] for b in bodies])
    return out


def test_every_member_occurs_as_often_as_the_original_by_token_and_by_text() -> None:
    right = {"token": 0.0, "text": 0.0}
    chance, families = 0.0, 0
    for seed in range(40):
        plan = plan_copies({"tests/test_fmt.py": FORMATS}, F2P, [], random.Random(seed))
        assert plan is not None
        text = plan.files["tests/test_fmt.py"]
        for members in _families(plan):
            families += 1
            chance += 1 / len(members)
            for rule, counts in (
                ("token", [text.count(m) for m in members]),
                ("text", [text.count(m.strip('"')) for m in members]),
            ):
                top = [i for i, c in enumerate(counts) if c == max(counts)]
                right[rule] += 1 / len(top) if 0 in top else 0.0
            # members are the file's own values: it uses "iso8601" elsewhere too
            assert all(text.count(m) >= 2 for m in members), members
    assert families == 40
    for rule, hits in right.items():
        assert hits / families < chance / families + 0.15, (rule, hits, chance)


def _run(tmp: Path, plan: CopyPlan, solution: str) -> dict[str, str]:
    for path, text in plan.files.items():
        (tmp / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp / path).write_text(text)
    (tmp / "fmt.py").write_text(solution)
    return run_pytest(tmp)


def test_a_true_fix_passes_the_original_and_fails_each_drawn_member(tmp_path: Path) -> None:
    plan = plan_copies({"tests/test_fmt.py": FORMATS}, F2P, [], random.Random(3))
    assert plan is not None and plan.must_fail
    statuses = _run(tmp_path, plan, SOLUTION)
    assert plan.evidence(statuses, claims_pass=True) == (None, None)
    assert plan.to_official(statuses)[F2P[0]] == "PASSED"


REPEATS = """from fmt import render


def test_render_twice():
    assert render("x") == "jump"
    assert render("x", loose=True) == "jump"
"""


def test_a_value_the_test_repeats_changes_at_every_place_at_once() -> None:
    f2p = ["tests/test_fmt.py::test_render_twice"]
    for seed in range(10):
        plan = plan_copies({"tests/test_fmt.py": REPEATS}, f2p, [], random.Random(seed))
        assert plan is not None and len(plan.must_fail) == 7
        text = plan.files["tests/test_fmt.py"]
        for name in [*plan.must_fail, *plan.official]:
            body = text.split(f"def {name}(", 1)[1].split("\n\n", 1)[0]
            values = re.findall(r'== "([^"]*)"', body)
            assert len(values) == 2 and values[0] == values[1]  # each body holds one value


# The ten types the families were drawn from before round four: round four's reader (G7)
# bet on the one member outside them.
OLD_COMMON = (
    "ValueError",
    "TypeError",
    "KeyError",
    "IndexError",
    "AttributeError",
    "RuntimeError",
    "NotImplementedError",
    "LookupError",
    "ZeroDivisionError",
    "OSError",
)


def test_raise_only_families_come_from_one_class_whatever_the_original() -> None:
    rng = random.Random(1)
    for name in ("ValueError", "FileNotFoundError", "UnicodeDecodeError", "ModuleNotFoundError"):
        pool = set(mutations.exception_class(name))
        alone = 0
        for _ in range(200):
            family = [name, *mutations.exception_family(name, 7, rng)]
            assert set(family) <= pool and len(set(family)) == len(family)
            # pairwise unrelated: code raising any member fails every other one's copy
            types = [mutations.EXCEPTIONS[m] for m in family]
            assert not any(a is not b and issubclass(a, b) for a in types for b in types)
            rare = [m for m in family if m not in OLD_COMMON]
            alone += rare == [name]
        assert alone / 200 < 0.2, name  # round four's reader: the one outside the ten
    # the must-pass copies catch every member: no superclass of the original alone
    assert set(holdings.common_superclasses(rng)) == {"Exception", "BaseException"}


def test_fallback_canaries_are_named_and_written_like_the_files_tests() -> None:
    source = FORMATS
    names = Names({"tests/test_fmt.py": source}, random.Random(2))
    pair = (names.draw("tests/test_fmt.py"), names.draw("tests/test_fmt.py"))
    literals = plain_literals(source)
    canaries = guard.Canaries.draw(["tests/test_fmt.py"], pair, literals)
    words = set(re.findall(r"def test_(\w+)\(", source)[0].split("_"))
    words |= {w for n in re.findall(r"def test_(\w+)\(", source) for w in n.split("_")}
    for name in (canaries.must_pass, canaries.must_fail):
        assert not re.search(r"[0-9a-f]{12}|_ok$|_bad$", name)
        assert name.startswith("test_") and f"def {name}(" not in source
    code = canaries.source()
    assert all(v in literals for v in canaries.values)
    namespace: dict[str, object] = {}
    exec(compile(code, "<canary>", "exec"), namespace)  # noqa: S102
    namespace[canaries.must_pass]()  # type: ignore[operator]
    failed = False
    try:
        namespace[canaries.must_fail]()  # type: ignore[operator]
    except AssertionError:
        failed = True
    assert failed
    assert canaries.owns(f"tests/test_fmt.py::{canaries.must_fail}")
    assert not canaries.owns("tests/test_fmt.py::test_parse_more")


def test_an_aliased_exception_is_no_site() -> None:
    """`pytest.raises(IOError)`: IOError is OSError, so a pool of OSError's class held the
    type itself, and its must-fail copy passed beside the original (sqlfluff-1763's gold
    patch was called tampered)."""
    import ast

    rng = random.Random(0)
    aliases = [n for n, t in mutations.EXCEPTIONS.items() if t.__name__ != n]
    assert {"IOError", "EnvironmentError"} <= set(aliases)
    for name in aliases:
        assert mutations.exception_family(name, 7, rng) == []
        call = ast.parse(f"pytest.raises({name})", mode="eval").body
        assert mutations.expected_exception(call) is None
    call = ast.parse("pytest.raises(OSError)", mode="eval").body
    assert mutations.expected_exception(call) is not None
    for _ in range(50):
        family = mutations.exception_family("OSError", 7, rng)
        assert family and not any(issubclass(mutations.EXCEPTIONS[m], OSError) for m in family)
