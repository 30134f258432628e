"""Steering requests: a person asks a live run to stop, re-budget, pin, ban or evaluate.

`dgm serve` and `dgm steer` only *ask*: they add a row to the `steering` table. The meta
loop, the only writer of results, reads pending rows between jobs, applies each, and marks
it `applied` (or `refused`, with a note saying why), recording a `steered` event with who
asked and when. Rows are kept, so bans and pins hold across resume.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from dgm.errors import DgmError
from dgm.store.db import Database

PENDING, APPLIED, REFUSED = "pending", "applied", "refused"

ACTIONS: dict[str, tuple[str, ...]] = {
    "stop": (),
    "budget": ("usd",),
    "eval_limit": ("max_evals",),
    "workers": ("workers",),
    "pin": ("node",),
    "ban": ("node",),
    "evaluate": ("node", "count"),
}
"""Each action and the arguments it takes (all required)."""


@dataclass(frozen=True)
class SteeringRequest:
    id: int
    ts: float
    action: str
    args: dict[str, Any]
    who: str
    state: str
    applied_at: float | None
    note: str | None

    @classmethod
    def from_row(cls, row: Any) -> SteeringRequest:
        return cls(
            row["id"],
            row["ts"],
            row["action"],
            json.loads(row["args"]),
            row["who"],
            row["state"],
            row["applied_at"],
            row["note"],
        )

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def check_request(action: str, args: dict[str, Any]) -> dict[str, Any]:
    """The arguments, typed; a DgmError naming the problem for an unknown action or a bad
    argument."""
    if action not in ACTIONS:
        raise DgmError(f"unknown steering action {action!r}", f"use one of: {', '.join(ACTIONS)}")
    missing = [k for k in ACTIONS[action] if args.get(k) in (None, "")]
    if missing:
        raise DgmError(f"`{action}` needs {', '.join(missing)}", _usage(action))
    typed: dict[str, Any] = {}
    for key in ACTIONS[action]:
        try:
            value = float(args[key]) if key == "usd" else int(args[key])
        except (TypeError, ValueError):
            raise DgmError(f"`{action}`: {key} must be a number, not {args[key]!r}",
                           _usage(action)) from None  # fmt: skip
        if value < 0 or (value == 0 and key != "node"):
            raise DgmError(f"`{action}`: {key} must be positive, not {value}", _usage(action))
        typed[key] = value
    return typed


def _usage(action: str) -> str:
    return f"e.g. dgm steer RUN_DIR {action} " + " ".join(f"<{k}>" for k in ACTIONS[action])


def add_request(db: Database, action: str, args: dict[str, Any], who: str) -> SteeringRequest:
    """Record a request for the loop (checked first: a node to pin, ban or evaluate must
    exist)."""
    typed = check_request(action, args)
    if "node" in typed and not db.query("SELECT 1 FROM nodes WHERE id=?", (typed["node"],)):
        raise DgmError(f"node {typed['node']} does not exist in this run", "see `dgm tree`")
    with db.transaction() as conn:
        cur = conn.execute(
            "INSERT INTO steering(ts, action, args, who) VALUES (?,?,?,?)",
            (time.time(), action, json.dumps(typed), who),
        )
        row = conn.execute("SELECT * FROM steering WHERE id=?", (cur.lastrowid,)).fetchone()
    return SteeringRequest.from_row(row)


def requests(db: Database, state: str | None = None) -> list[SteeringRequest]:
    """Requests in the order they were made (of one state, when given)."""
    if not _has_table(db):
        return []
    if state is None:
        rows = db.query("SELECT * FROM steering ORDER BY id")
    else:
        rows = db.query("SELECT * FROM steering WHERE state=? ORDER BY id", (state,))
    return [SteeringRequest.from_row(r) for r in rows]


def acknowledge(db: Database, request_id: int, state: str, note: str = "") -> None:
    """The loop's answer to a request: applied, or refused with the reason."""
    with db.transaction() as conn:
        conn.execute(
            "UPDATE steering SET state=?, applied_at=?, note=? WHERE id=?",
            (state, time.time(), note, request_id),
        )


def marked_nodes(db: Database, action: str) -> set[int]:
    """Nodes of every applied `pin` or `ban`: they hold for the rest of the run."""
    if not _has_table(db):
        return set()
    rows = db.query("SELECT args FROM steering WHERE action=? AND state=?", (action, APPLIED))
    return {int(json.loads(r["args"])["node"]) for r in rows}


def _has_table(db: Database) -> bool:
    """Older runs opened read-only (not migrated) have no steering table yet."""
    return bool(db.query("SELECT 1 FROM sqlite_master WHERE type='table' AND name='steering'"))
