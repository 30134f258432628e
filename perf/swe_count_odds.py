"""Can code under test find a SWE-bench copy family's original by counting? (red team round
four, G1/G7). Offline, over the instances of ../shared/swe-bench (no Docker): the judge's
own planner, several draws per instance, and per must-fail family in the *disguised* test
files (what is on disk while the tests run) the member taken by each counting rule:

  file-text   the member's text (a string's content, a number, an exception name) counted
              as a substring of the test files (the red team's `swe_odds.py` rule);
  file-token  its tokens counted (a number as a NUMBER token, a string by value);
  repo        its text counted in the repository's non-test sources at the base commit
              (`raise X` for an exception type).

A rule takes the member counted most (ties: 1/ties). Printed per instance: families, the
rate of each rule, chance (the mean of 1/family size); then totals, and how many instances
got a family at all (the rest fall back to the judge's canaries).

    PYTHONPATH=$PWD python perf/swe_count_odds.py [--draws 4] [instance ...]
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import random
import subprocess
import tempfile
import tokenize
from collections import defaultdict
from functools import cache
from pathlib import Path

from dgm.benchmarks.swebench import copy_plan, guard
from dgm.benchmarks.swebench.copies import plan_copies
from dgm.benchmarks.swebench.data import SweData
from dgm.benchmarks.swebench.images import unpack
from dgm.benchmarks.swebench.mutations import EXCEPTIONS

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "swe-bench"
RULES = ("file-text", "file-token", "repo")


def family_tokens(plan: copy_plan.CopyPlan) -> list[list[str]]:
    """Each must-fail family's members (the token that differs), original first."""
    out = []
    for original in set(plan.must_fail.values()):
        names = [original, *[c for c, o in plan.must_fail.items() if o == original]]
        toks: dict[str, list[str]] = {}
        for text in plan.files.values():
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.FunctionDef) and node.name in names:
                    seg = (ast.get_source_segment(text, node) or "").replace(node.name, "_", 1)
                    toks[node.name] = [t.string for t in tokenize.generate_tokens(
                        io.StringIO(seg).readline) if t.string.strip()]  # fmt: skip
        rows = [toks[n] for n in names]
        at = next(i for i in range(len(rows[0])) if len({r[i] for r in rows}) > 1)
        out.append([r[at] for r in rows])
    return out


def text_of(token: str) -> str:
    try:
        value = ast.literal_eval(token)
    except (ValueError, SyntaxError):
        return token
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return value if isinstance(value, str) else token


def token_counts(texts: list[str]) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for text in texts:
        for t in tokenize.generate_tokens(io.StringIO(text).readline):
            if t.type in (tokenize.NUMBER, tokenize.NAME):
                out[t.string] += 1
            elif t.type == tokenize.STRING:
                out[text_of(t.string)] += 1
    return out


def pick(counts: list[int]) -> float:
    top = [i for i, c in enumerate(counts) if c == max(counts)]
    return 1 / len(top) if 0 in top else 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--draws", type=int, default=4)
    parser.add_argument("ids", nargs="*")
    args = parser.parse_args()
    data = SweData(Path(args.data))
    total: dict[str, list[float]] = {r: [] for r in (*RULES, "chance", "f2p")}
    with_family = with_f2p = 0
    with tempfile.TemporaryDirectory() as tmp:
        for iid, rec in sorted(data.instances.items()):
            if args.ids and iid not in args.ids:
                continue
            bare = unpack(data, rec["repo"], Path(tmp))

            @cache
            def repo_count(text: str, exc: bool, bare: Path = bare, rec: dict = rec) -> int:
                out = subprocess.run(
                    ["git", "--git-dir", str(bare), "grep", "-F", "-c",
                     f"raise {text}" if exc else text, rec["base_commit"], "--", "*.py",
                     ":!*test*"], capture_output=True, text=True).stdout  # fmt: skip
                return sum(int(x.rsplit(":", 1)[1]) for x in out.splitlines() if ":" in x)

            files = guard.test_files(guard.test_command(rec["eval_script"]))
            base = copy_plan.files_at(bare, rec["base_commit"], files)
            sources = copy_plan.with_test_patch(base, rec["test_patch"])
            f2p, p2p = (json.loads(x) if isinstance(x, str) else x
                        for x in (rec["FAIL_TO_PASS"], rec["PASS_TO_PASS"]))  # fmt: skip
            res: dict[str, list[float]] = {r: [] for r in (*RULES, "chance", "f2p")}
            got = False
            f2p_names = {t.split("::")[-1].split("[")[0] for t in f2p}
            for seed in range(args.draws):
                plan = (
                    plan_copies(sources, f2p, p2p, random.Random(f"{iid}/{seed}"))
                    if sources
                    else None
                )
                if plan is None:
                    continue
                got = True
                f2p_family = any(plan.official[o] in f2p_names for o in plan.must_fail.values())
                res["f2p"].append(float(f2p_family))
                texts = list(plan.files.values())
                alltext = "\n".join(texts)
                tokc = token_counts(texts)
                for fam in family_tokens(plan):
                    members = [text_of(m) for m in fam]
                    exc = fam[0] in EXCEPTIONS
                    res["file-text"].append(pick([alltext.count(m) for m in members]))
                    res["file-token"].append(pick([tokc.get(m, 0) for m in members]))
                    res["repo"].append(pick([repo_count(m, exc) for m in members]))
                    res["chance"].append(1 / len(fam))
            with_family += got
            with_f2p += bool(res["f2p"]) and all(res["f2p"])
            for r in res:
                total[r] += res[r]
            n = len(res["chance"])
            rates = (
                " ".join(f"{r}={sum(res[r]) / n:.2f}" for r in (*RULES, "chance"))
                if n
                else "no family (canaries)"
            )
            f2p_rate = sum(res["f2p"]) / max(len(res["f2p"]), 1)
            print(f"{iid:36s} families={n:3d} {rates} f2p-draws={f2p_rate:.2f}", flush=True)
    n = max(len(total["chance"]), 1)
    print("ALL", f"families={len(total['chance'])}",
          " ".join(f"{r}={sum(total[r]) / n:.2f}" for r in (*RULES, "chance")),
          f"instances with a family: {with_family}, with a FAIL_TO_PASS test's family"
          f" in every draw: {with_f2p}")  # fmt: skip


if __name__ == "__main__":
    main()
