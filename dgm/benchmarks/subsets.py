"""Subsets: which task ids a `--subset` names.

small | medium   the DGM papers' id lists, copied into eval/subsets/ (for a SWE-bench
                 instances folder: eval/subsets/swe_offline_*.json; also ci, dry-run)
full             every task
<language>       every task of one language (python, go, rust, cpp, java, javascript)
ID[,ID...]       the named tasks
@ids.txt         a file of ids: a JSON list, or one id per line (# comments allowed)
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

from dgm.errors import NotFoundError
from dgm.paths import subset_file

NAMED = ("small", "medium")


def read_id_file(path: Path) -> list[str]:
    if not path.is_file():
        raise NotFoundError(f"task id file {path} does not exist", "check the path after '@'")
    text = path.read_text()
    if text.lstrip().startswith("["):
        return [str(i) for i in json.loads(text)]
    lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return [line for line in lines if line]


def check_ids(wanted: list[str], known: list[str], where: str) -> list[str]:
    """`wanted` in order, or a NotFoundError naming the first unknown id and a near match."""
    known_set = set(known)
    for task_id in wanted:
        if task_id not in known_set:
            near = difflib.get_close_matches(task_id, known, n=1)
            hint = f"did you mean {near[0]}?" if near else "list ids with `dgm bench list`"
            raise NotFoundError(f"unknown task id {task_id!r} in {where}", hint)
    return list(dict.fromkeys(wanted))


def resolve(
    subset: str, benchmark: str, ids: list[str], languages: list[str], lists: dict[str, str]
) -> list[str]:
    """The ids `subset` names among a benchmark's `ids` (checked: unknown ids are errors);
    `lists` maps the benchmark's named subsets to their id files in eval/subsets."""
    if subset == "full":
        return list(ids)
    if subset.startswith("@"):
        path = Path(subset[1:])
        return check_ids(read_id_file(path), ids, str(path))
    if subset in lists:
        path = subset_file(lists[subset])
        return check_ids(read_id_file(path), ids, f"subset {subset!r} ({path.name})")
    if subset in languages:
        return [i for i in ids if i.startswith(f"{subset}__")]
    if "__" in subset:  # task ids, comma-separated
        return check_ids(subset.split(","), ids, benchmark)
    names = sorted({*lists, "full", *languages})
    raise NotFoundError(
        f"unknown subset {subset!r} for {benchmark}",
        f"use one of: {', '.join(names)}, or @FILE with task ids",
    )
