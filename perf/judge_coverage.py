"""Must-fail copy coverage of the Polyglot judge's disguise, per language. Offline (no
Docker), over every exercise of ../shared/polyglot-benchmark.

    python perf/judge_coverage.py [ROUNDS] [--list] [--against REV]

Per language: exercises whose judge tree has at least one must-fail copy (in at least
one of ROUNDS draws, and in every draw), the mean must-fail copies per exercise that has
them, and the exercises left with literal canaries only. `--against REV` prints the same
figures for the git revision REV (checked out into a temporary worktree) side by side.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / ".." / "shared" / "polyglot-benchmark"
LANGUAGES = ("python", "javascript", "go", "rust", "java", "cpp")


def measure(rounds: int) -> dict[str, dict]:
    """{language: {total, any, every, per_file, without: [exercise]}} for this checkout."""
    sys.path.insert(0, str(ROOT))
    from dgm.benchmarks.polyglot import loader as polyglot
    from dgm.benchmarks.polyglot.copies import MUST_FAIL
    from dgm.benchmarks.polyglot.judge import prepare_judge_tree

    tmp = Path(tempfile.mkdtemp())
    bench = polyglot.PolyglotTasks(DATA.resolve())
    out = {}
    for language in LANGUAGES:
        tasks = bench.tasks(language)
        counts: dict[str, list[int]] = {}
        for task in tasks:
            for n in range(rounds):
                plan = prepare_judge_tree(task, tmp / f"{task.id}-{n}")
                fails = sum(e.kind == MUST_FAIL for e in plan.entries)
                counts.setdefault(task.id.split("__", 1)[1], []).append(fails)
        covered = [c for c in counts.values() if max(c) > 0]
        out[language] = {
            "total": len(tasks),
            "any": len(covered),
            "every": sum(min(c) > 0 for c in counts.values()),
            "per_file": statistics.mean(x for c in covered for x in c) if covered else 0.0,
            "without": sorted(e for e, c in counts.items() if max(c) == 0),
        }
    return out


def _at(rev: str, rounds: int) -> dict[str, dict]:
    """The figures of git revision `rev`, measured in a temporary worktree."""
    where = Path(tempfile.mkdtemp()) / "rev"
    subprocess.run(["git", "worktree", "add", "--detach", str(where), rev], cwd=ROOT,
                   check=True, capture_output=True)  # fmt: skip
    try:
        shared = where.parent / "shared"
        shared.symlink_to((ROOT / ".." / "shared").resolve())
        script = where / "perf" / "judge_coverage.py"
        script.write_text(Path(__file__).read_text())
        done = subprocess.run([sys.executable, str(script), str(rounds), "--json"],
                              cwd=where, check=True, capture_output=True, text=True)  # fmt: skip
        return json.loads(done.stdout)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(where)], cwd=ROOT,
                       capture_output=True)  # fmt: skip


def main() -> None:
    args = sys.argv[1:]
    rounds = int(args[0]) if args and args[0].isdigit() else 3
    now = measure(rounds)
    if "--json" in args:
        print(json.dumps(now))
        return
    before = _at(args[args.index("--against") + 1], rounds) if "--against" in args else None
    print(f"must-fail copies, {rounds} draws per exercise (files with >= 1 in any draw / "
          f"in every draw / total; mean copies per covered exercise)")  # fmt: skip
    for language in LANGUAGES:
        row = now[language]
        line = f"{language:<11} {row['any']:>3}/{row['every']:>3}/{row['total']:<3} " + (
            f"{row['per_file']:.1f}/file"
        )
        if before:
            old = before[language]
            line = (f"{language:<11} before {old['any']:>3}/{old['every']:>3}/{old['total']:<3} "
                    f"{old['per_file']:.1f}/file   after {row['any']:>3}/{row['every']:>3}/"
                    f"{row['total']:<3} {row['per_file']:.1f}/file")  # fmt: skip
        print(line)
        if "--list" in args and row["without"]:
            print("    without: " + " ".join(row["without"]))


if __name__ == "__main__":
    main()
