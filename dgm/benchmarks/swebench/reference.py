"""The gold solution of a SWE-bench instance as whole files, made on the host.

The dry run's scripted model writes these with the agent's own `create` tool, the way
it writes a Polyglot exercise's reference solution. They come from the data folder's
bare repository at the base commit with the gold patch applied; nothing runs.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

from dgm.benchmarks.swebench.data import SweData
from dgm.errors import DgmError

_CHANGED = re.compile(r"^diff --git a/\S+ b/(\S+)$", re.M)


def changed_files(patch: str) -> list[str]:
    return list(dict.fromkeys(_CHANGED.findall(patch)))


def named_in_statement(patch: str, statement: str) -> bool:
    """Whether the problem statement names a file the gold patch changes (by file name or
    module name): if not, an agent must search the repository to find where to work."""
    for path in changed_files(patch):
        name = path.rsplit("/", 1)[-1]
        if name in statement or name.removesuffix(".py") in statement:
            return True
    return False


@lru_cache(maxsize=64)
def gold_files(data_dir: str, instance_id: str) -> tuple[tuple[str, str], ...]:
    from dgm.benchmarks.swebench.images import checkout, unpack

    data = SweData(data_dir)
    record = data.instances[instance_id]
    with tempfile.TemporaryDirectory(prefix="dgm-gold-") as tmp:
        bare = unpack(data, record["repo"], Path(tmp))
        work = Path(tmp) / "work"
        checkout(bare, record["base_commit"], work)
        proc = subprocess.run(["git", "apply", "-"], cwd=work, input=record["patch"],
                              capture_output=True, text=True)  # fmt: skip
        if proc.returncode != 0:
            raise DgmError(f"the gold patch of {instance_id} does not apply: {proc.stderr[-300:]}")
        return tuple((f, (work / f).read_text()) for f in changed_files(record["patch"]))
