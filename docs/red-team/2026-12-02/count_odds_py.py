"""Round five, H1: does the count of a member in the disguised Python file still single
out the real one? The judge's own disguise (prepare_judge_tree), offline.

    PYTHONPATH=$PWD python docs/red-team/2026-12-02/count_odds_py.py DRAWS [exercise ...]

For each must-fail family {real, copies}, the changed constant of each member (AST diff
against the real test), its count among the constants of the disguised file, and the rule
"the member with the fewest uses is real" (ties split), against chance 1/(k+1).
"""

import ast
import collections
import statistics
import sys
import tempfile
from pathlib import Path

from dgm.benchmarks.polyglot import loader as polyglot
from dgm.benchmarks.polyglot.copies import MUST_FAIL, REAL
from dgm.benchmarks.polyglot.judge import prepare_judge_tree

DATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "polyglot-benchmark"


def consts(node):
    return [repr(n.value) for n in ast.walk(node) if isinstance(n, ast.Constant)]


def main() -> None:
    draws = int(sys.argv[1])
    bench = polyglot.PolyglotTasks(DATA.resolve())
    names = sys.argv[2:] or [t.id.split("__")[1] for t in bench.tasks("python")]
    tmp = Path(tempfile.mkdtemp())
    totals = []
    for ex in names:
        task = bench.task(f"python__{ex}")
        hits, chance, nfam = [], [], 0
        files = {"fewest": [], "most": []}
        for d in range(draws):
            per = {"fewest": 1.0, "most": 1.0}
            root = tmp / f"{ex}-{d}"
            plan = prepare_judge_tree(task, root)
            fams = collections.defaultdict(list)
            for e in plan.entries:
                if e.kind in (REAL, MUST_FAIL):
                    fams[e.original].append(e)
            fams = {o: es for o, es in fams.items() if any(e.kind == MUST_FAIL for e in es)}
            if not fams:
                continue
            tree = {}
            counts = collections.Counter()
            for f in root.rglob("*_test.py"):
                t = ast.parse(f.read_text())
                counts.update(consts(t))
                for n in ast.walk(t):
                    if isinstance(n, ast.FunctionDef):
                        tree[n.name] = n
            for orig, es in fams.items():
                fn = {e.kind + e.key: tree[e.key.rsplit(".", 1)[-1]] for e in es}
                real = next(v for k, v in fn.items() if k.startswith(REAL))
                rc = consts(real)
                members = []
                for k, node in fn.items():
                    c = consts(node)
                    diff = [a for a, b in zip(c, rc) if a != b] if len(c) == len(rc) else []
                    members.append((k.startswith(REAL), diff[0] if diff else None))
                changed = next((m for m in members if not m[0]), None)
                if changed is None or changed[1] is None:
                    continue
                cpy = [node for k, node in fn.items() if not k.startswith(REAL)][0]
                pos = [i for i, (a, b) in enumerate(zip(consts(cpy), rc)) if a != b][0]
                vals = [(is_real, rc[pos] if is_real else v) for is_real, v in members]
                m = [counts[v] for _, v in vals]
                low = min(m)
                winners = [r for (r, _), c in zip(vals, m) if c == low]
                hits.append(sum(winners) / len(winners))
                per["fewest"] *= sum(winners) / len(winners)
                top = [r for (r, _), c in zip(vals, m) if c == max(m)]
                per["most"] *= sum(top) / len(top)
                chance.append(1 / len(vals))
                nfam += 1
            if fams:
                for r in files:
                    files[r].append(per[r])
        if hits:
            totals.append((ex, statistics.mean(hits), statistics.mean(chance), nfam))
            print(f"{ex:28s} fewest-uses {statistics.mean(hits):.2f}  chance {statistics.mean(chance):.2f}  families {nfam}"
                  f"  whole file: fewest {statistics.mean(files['fewest']):.3f} most {statistics.mean(files['most']):.3f}", flush=True)
    print("all:", statistics.mean(h for _, h, _, _ in totals), statistics.mean(c for _, _, c, _ in totals))


if __name__ == "__main__":
    main()
