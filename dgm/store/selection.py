"""Run-level selection records in the meta table: the task split and the confirmation.

Written by the loop (dgm/loop/confirmation.py), read by anything that says `best`.
"""

from __future__ import annotations

import json
from typing import Any

SPLIT_KEY = "task_split"
"""{"search": [task ids], "held_out": [task ids]}: fixed at the run's first start."""
CONFIRMATION_KEY = "confirmation"
"""{"node": id, "held_out": [...], "candidates": {id: [solved, failed]}, ...}."""


def held_out_tasks(run: Any) -> tuple[str, ...]:
    recorded = run.db.get_meta(SPLIT_KEY)
    return tuple(json.loads(recorded)["held_out"]) if recorded else ()


def confirmed_node(run: Any) -> int | None:
    """The node the confirmation stage chose, when it ran."""
    recorded = run.db.get_meta(CONFIRMATION_KEY)
    return None if recorded is None else int(json.loads(recorded)["node"])
