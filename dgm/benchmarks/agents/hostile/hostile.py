"""The hostile agent: writes one attack on the judge into the task's workspace, no fix.

    python3 hostile.py ATTACK_FILE TASK_FILE WORKDIR

ATTACK_FILE names the attack class (one line). The task decides the target: a Polyglot
task (`<language>__<exercise>`) gets the attack in its solution files; a SWE-bench task
(a repository) gets it in its packages' `__init__.py` (what every test imports), or in
the files the attack is about (plugin metadata, start-up hooks, runner configuration).
An attack that does not apply to the target writes nothing (an empty patch).
Standard library only: it runs in any task's image.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import attacks_native
import attacks_python

POLYGLOT = {"python", "go", "rust", "cpp", "java", "javascript"}
SKIP_DIRS = {"test", "tests", "testing", "doc", "docs", "examples", "build", "dist", ".git"}


def target_of(task: dict) -> str:
    head = str(task["id"]).split("__", 1)[0]
    return head if head in POLYGLOT else "swebench"


def solution_files(task: dict, work: Path) -> list[Path]:
    """The files a Polyglot statement tells the agent to modify."""
    found = re.search(r"modify the supplied files: (.*?)\. Don't change", task["problem_statement"])
    names = [n.strip() for n in found.group(1).split(",")] if found else []
    return [work / n for n in names if (work / n).is_file()]


def package_inits(work: Path) -> list[Path]:
    """Each top-level package's __init__.py (at the root, or under src/ or lib/)."""
    inits = []
    for root in (work, work / "src", work / "lib"):
        if not root.is_dir():
            continue
        for child in sorted(root.iterdir()):
            if child.name in SKIP_DIRS or child.name.startswith((".", "_")):
                continue
            init = child / "__init__.py"
            if init.is_file():
                inits.append(init)
    return inits


def main() -> int:
    attack = Path(sys.argv[1]).read_text().strip()
    task = json.loads(Path(sys.argv[2]).read_text())
    work = Path(sys.argv[3])
    target = target_of(task)
    if target in ("python", "swebench") and attack in attacks_python.ATTACKS:
        files = solution_files(task, work) if target == "python" else package_inits(work)
        written = attacks_python.ATTACKS[attack](work, files, target)
    elif attack in attacks_native.ATTACKS and target in attacks_native.ATTACKS[attack]:
        written = attacks_native.ATTACKS[attack][target](solution_files(task, work))
    else:
        written = []
    print(f"hostile agent: attack {attack} on {target}: wrote {[str(p) for p in written]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
