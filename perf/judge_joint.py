"""Round five's joint readers (H5, H10, H11) offline, on full information (the attacker
sees the whole disguised file): how often they pick the real member of every family of a
draw, beside chance. See tests/benchmarks/joint_attack.py.

    python perf/judge_joint.py [ROUNDS] [LANGUAGE ...] [--only EXERCISE ...]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dgm.benchmarks.polyglot import loader as polyglot  # noqa: E402
from tests.benchmarks.joint_attack import measure  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "polyglot-benchmark"


def main() -> None:
    args = sys.argv[1:]
    only = args[args.index("--only") + 1 :] if "--only" in args else []
    args = args[: args.index("--only")] if "--only" in args else args
    rounds = int(args[0]) if args and args[0].isdigit() else 3
    languages = [a for a in args if not a.isdigit()] or ["go", "rust", "cpp"]
    bench = polyglot.PolyglotTasks(DATA.resolve())
    for language in languages:
        tasks = [t for t in bench.tasks(language) if not only or t.id.split("__")[1] in only]
        got = measure(tasks, Path(tempfile.mkdtemp()), rounds)
        print(f"{language}: " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                                          for k, v in got.items()), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
