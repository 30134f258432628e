"""How well can an attacker who knows the disguise code tell a real Polyglot test from
its copies? Offline (no Docker), over every exercise of ../shared/polyglot-benchmark.

    python perf/judge_exchangeable.py [ROUNDS]

Per language: files that get must-fail copies; for each group of a real test and its
copies, how often position rules (blank lines, first, last, odd gap) pick the real one;
for each changed value, how often value rules (round one's one-sided rule, smallest,
largest, middle) do; beside chance (the mean of 1/group size).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dgm.benchmarks.polyglot import loader as polyglot  # noqa: E402
from dgm.benchmarks.polyglot.copies import MUST_FAIL, REAL  # noqa: E402
from dgm.benchmarks.polyglot.judge import prepare_judge_tree  # noqa: E402
from tests.benchmarks.test_judge_exchangeable import (  # noqa: E402
    _RULES,
    _VALUE_RULES,
    _layouts,
    _value_groups,
)

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "polyglot-benchmark"


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    tmp = Path(tempfile.mkdtemp())
    root = tmp / "bench"
    root.symlink_to(DATA.resolve())
    bench = polyglot.PolyglotTasks(root)
    for language in ("python", "javascript", "go", "rust", "java", "cpp"):
        tasks = bench.tasks(language)
        with_copies = sum(
            any(e.kind == MUST_FAIL for e in prepare_judge_tree(t, tmp / "c" / t.id).entries)
            for t in tasks
        )
        print(f"{language}: must-fail copies in {with_copies}/{len(tasks)} files")
        if language != "python":
            groups = _layouts(language, root, rounds)
            chance = statistics.mean(1 / len(m) for m, _, _ in groups)
            hits = {r: statistics.mean(p(m, t, s).kind == REAL for m, t, s in groups)
                    for r, p in _RULES.items()}  # fmt: skip
            print(f"  layout, {len(groups)} groups, chance {chance:.3f}: "
                  + ", ".join(f"{r} {h:.3f}" for r, h in hits.items()))  # fmt: skip
        values = _value_groups(language, root, rounds)
        chance = statistics.mean(1 / (1 + len(c)) for _, c in values)
        hits = {r: statistics.mean(p(sorted([x, *c])) == x for x, c in values)
                for r, p in _VALUE_RULES.items()}  # fmt: skip
        print(f"  values, {len(values)} sets, chance {chance:.3f}: "
              + ", ".join(f"{r} {h:.3f}" for r, h in hits.items()))  # fmt: skip


if __name__ == "__main__":
    main()
