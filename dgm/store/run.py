"""A Run: one self-improvement run on disk.

    <run dir>/
      run.toml      the frozen, validated configuration
      archive.git   bare git repo: one commit per node, refs/nodes/<id>
      run.sqlite    nodes, evaluations, jobs, LLM usage, events (WAL)
      logs/         trajectories, test output, LLM exchanges (referenced from rows)

The SQLite database is the truth. A node is written in three steps, each safe to be
interrupted: (1) its commit objects go into archive.git (unreferenced until step 2,
so a crash leaves only garbage git can collect); (2) one transaction inserts the node
row (and finishes the job that made it); (3) the ref `refs/nodes/<id>` is set.
Opening a run re-creates refs missing after a crash between steps 2 and 3.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from dgm.config import RunConfig
from dgm.errors import DgmError, NotFoundError, RunDirError
from dgm.store.archive import Archive
from dgm.store.db import Database
from dgm.store.ledger import JobLedger, finish_job
from dgm.store.queries import RunQueries
from dgm.store.records import Evaluation, Node, Score
from dgm.store.report_queries import ReportQueries

CONFIG_FILE = "run.toml"
DB_FILE = "run.sqlite"
ARCHIVE_DIR = "archive.git"
LOGS_DIR = "logs"

_EVAL_COLUMNS = (
    "node_id task_id benchmark stage resolved empty_patch tests_passed tests_total "
    "agent_seconds judge_seconds cost_usd error log_dir job_id created_at details tampered"
).split()


class Run(JobLedger, RunQueries):
    """Library access to a run directory: create, add nodes, record, read back."""

    def __init__(self, path: Path, config: RunConfig, db: Database, archive: Archive) -> None:
        self.path = path
        self.config = config
        self.db = db
        self.archive = archive
        self.aggregates = ReportQueries(db)
        """What only the report reads (per-node costs, series, models used)."""

    # -- lifecycle ---------------------------------------------------------------------
    @classmethod
    def create(cls, path: str | Path, config: RunConfig, seed: str | Path) -> Run:
        """Create a run with the codebase at `seed` as its root node (id 0)."""
        path = Path(path).resolve()  # git resolves relative paths against its own cwd
        seed = Path(seed)
        if (path / CONFIG_FILE).exists() or (path / DB_FILE).exists():
            raise RunDirError(
                f"{path} already holds a run",
                f"use `dgm resume {path}` to continue it, or choose another directory",
            )
        if not seed.is_dir():
            raise NotFoundError(f"seed agent folder {seed} does not exist", "check --seed")
        if not (seed / "agent.toml").is_file():
            raise DgmError(
                f"{seed} has no agent.toml manifest",
                "an agent codebase needs agent.toml naming its `solve` command "
                "(see seed_agent/README.md)",
            )
        path.mkdir(parents=True, exist_ok=True)
        (path / LOGS_DIR).mkdir(exist_ok=True)
        archive = Archive.init(path / ARCHIVE_DIR)
        db = Database.create(path / DB_FILE)
        # run.toml last: its presence marks a complete run directory.
        run = cls(path, config, db, archive)
        run.add_node(None, tree=seed, origin="seed")
        (path / CONFIG_FILE).write_text(config.to_toml())
        run.event("run_created", name=config.name)
        return run

    @classmethod
    def open(cls, path: str | Path) -> Run:
        path = Path(path).resolve()
        if not path.is_dir():
            raise RunDirError(f"run directory {path} does not exist", "check the path")
        missing = [n for n in (CONFIG_FILE, DB_FILE, ARCHIVE_DIR) if not (path / n).exists()]
        if missing:
            raise RunDirError(
                f"{path} is not a complete run directory (missing {', '.join(missing)})",
                "point at a directory made by `dgm init` or `dgm run`",
            )
        config = RunConfig.load(path / CONFIG_FILE)
        db = Database.open(path / DB_FILE)
        archive = Archive(path / ARCHIVE_DIR)
        run = cls(path, config, db, archive)
        run._repair_refs()
        return run

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def update_config(self, config: RunConfig) -> None:
        """Replace the frozen config (e.g. limits raised on resume), recorded as an event."""
        (self.path / CONFIG_FILE).write_text(config.to_toml())
        self.config = config
        self.event("config_updated")

    # -- nodes -------------------------------------------------------------------------
    def add_node(
        self,
        parent_id: int | None,
        *,
        tree: str | Path | None = None,
        diff: str | None = None,
        origin: str,
        status: str = "active",
        job_id: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Node:
        """Add a node from its parent plus either a whole `tree` (a folder) or a `diff`.

        With `job_id`, the node is recorded together with that job's completion, and a
        second call for the same job returns the node already recorded (no duplicate).
        """
        if (tree is None) == (diff is None):
            raise ValueError("give exactly one of tree= or diff=")
        if job_id is not None:
            existing = self.db.query("SELECT * FROM nodes WHERE job_id=?", (job_id,))
            if existing:
                return Node.from_row(existing[0])
        parent = self.node(parent_id) if parent_id is not None else None
        if parent is None and self.db.query("SELECT 1 FROM nodes LIMIT 1"):
            raise DgmError("only the seed node may have no parent")
        message = _commit_message(origin)
        if tree is not None:
            sha = self.archive.commit_tree(Path(tree), parent.commit if parent else None, message)
        else:
            if parent is None:
                raise DgmError("the seed node must be added from a tree, not a diff")
            sha = self.archive.commit_diff(parent.commit, diff or "", message)
        now = time.time()
        with self.db.transaction() as conn:
            # The seed is node 0; SQLite numbers the others max(id) + 1.
            cur = conn.execute(
                "INSERT INTO nodes(id, parent_id, commit_sha, depth, created_at, status, origin,"
                " job_id, meta) VALUES (?,?,?,?,?,?,?,?,?)",
                (
                    0 if parent is None else None,
                    parent_id,
                    sha,
                    parent.depth + 1 if parent else 0,
                    now,
                    status,
                    origin,
                    job_id,
                    json.dumps(meta or {}),
                ),
            )
            node_id = cur.lastrowid
            if job_id is not None:
                finish_job(conn, job_id, {"node_id": node_id}, now)
        self.archive.set_ref(node_id, sha)
        return self.node(node_id)

    def node(self, node_id: int | str) -> Node:
        try:
            key = int(node_id)
        except (TypeError, ValueError):
            raise NotFoundError(f"node id {node_id!r} is not a number", "see `dgm tree`") from None
        rows = self.db.query("SELECT * FROM nodes WHERE id=?", (key,))
        if not rows:
            raise NotFoundError(f"node {node_id} does not exist in {self.path}", "see `dgm tree`")
        return Node.from_row(rows[0])

    def nodes(self) -> list[Node]:
        return [Node.from_row(r) for r in self.db.query("SELECT * FROM nodes ORDER BY id")]

    def children(self, node_id: int) -> list[Node]:
        rows = self.db.query("SELECT * FROM nodes WHERE parent_id=? ORDER BY id", (node_id,))
        return [Node.from_row(r) for r in rows]

    def checkout(self, node_id: int, dest: str | Path) -> Path:
        """Write node `node_id`'s codebase into `dest`; cost independent of its depth."""
        dest = Path(dest)
        if dest.exists() and any(dest.iterdir()):
            raise DgmError(f"{dest} is not empty", "check out into a new folder")
        return self.archive.materialize(self.node(node_id).commit, dest)

    def diff(self, a: int, b: int | None = None) -> str:
        """Diff from node `a` to node `b`; with one node, from its parent to it."""
        if b is None:
            node = self.node(a)
            parent = self.node(node.parent_id).commit if node.parent_id is not None else None
            return self.archive.diff(parent, node.commit)
        return self.archive.diff(self.node(a).commit, self.node(b).commit)

    def read_file(self, node_id: int, path: str) -> str:
        return self.archive.read_file(self.node(node_id).commit, path)

    def code_ids(self) -> dict[int, str]:
        """Every node's codebase id (its git tree): nodes with equal ids have equal code."""
        nodes = self.nodes()
        trees = self.archive.trees(sorted({n.commit for n in nodes}))
        return {n.id: trees[n.commit] for n in nodes}

    def code_id(self, node_id: int | str) -> str:
        commit = self.node(node_id).commit
        return self.archive.trees([commit])[commit]

    # -- evaluations -------------------------------------------------------------------
    def record_evaluation(self, evaluation: Evaluation) -> Evaluation:
        """Record one evaluation (and finish its job) in one transaction. Recording the
        same job twice keeps the first result: re-runs after a crash never duplicate."""
        self.node(evaluation.node_id)
        row = asdict(evaluation)
        row["created_at"] = row["created_at"] or time.time()
        row["details"] = json.dumps(row["details"])
        # A tampered run proves nothing: never a pass, whatever the caller claimed.
        row["resolved"] = evaluation.resolved and not evaluation.tampered
        with self.db.transaction() as conn:
            if evaluation.job_id is not None:
                done = conn.execute(
                    "SELECT * FROM evaluations WHERE job_id=?", (evaluation.job_id,)
                ).fetchone()
                if done:
                    return Evaluation.from_row(done)
            cur = conn.execute(
                f"INSERT INTO evaluations({', '.join(_EVAL_COLUMNS)}) "
                f"VALUES ({', '.join('?' for _ in _EVAL_COLUMNS)})",
                [row[c] for c in _EVAL_COLUMNS],
            )
            if evaluation.job_id is not None:
                finish_job(conn, evaluation.job_id, {"evaluation_id": cur.lastrowid}, time.time())
            saved = conn.execute("SELECT * FROM evaluations WHERE id=?", (cur.lastrowid,))
            return Evaluation.from_row(saved.fetchone())

    def evaluations(self, node_id: int | None = None) -> list[Evaluation]:
        if node_id is None:
            rows = self.db.query("SELECT * FROM evaluations ORDER BY id")
        else:
            rows = self.db.query(
                "SELECT * FROM evaluations WHERE node_id=? ORDER BY id", (int(node_id),)
            )
        return [Evaluation.from_row(r) for r in rows]

    def scores(self) -> dict[int, Score]:
        """Every node's passed/total over all its evaluations, in one query."""
        rows = self.db.query(
            "SELECT node_id, SUM(resolved) AS passed, COUNT(*) AS total, "
            "SUM(tampered) AS tampered FROM evaluations GROUP BY node_id"
        )
        return {r["node_id"]: Score(r["passed"], r["total"], r["tampered"]) for r in rows}

    def tampered_evaluations(self, node_id: int | None = None) -> list[Evaluation]:
        """The evaluations (of one node, or all) the judge found tampered with, in order."""
        sql = "SELECT * FROM evaluations WHERE tampered=1"
        if node_id is None:
            rows = self.db.query(sql + " ORDER BY id")
        else:
            rows = self.db.query(sql + " AND node_id=? ORDER BY id", (int(node_id),))
        return [Evaluation.from_row(r) for r in rows]

    def tampered_nodes(self) -> set[int]:
        """Nodes with at least one tampered evaluation: never best, never exported."""
        rows = self.db.query("SELECT DISTINCT node_id FROM evaluations WHERE tampered=1")
        return {int(r["node_id"]) for r in rows}

    def score(self, node_id: int) -> Score:
        return self.scores().get(int(node_id), Score(0, 0))

    # -- logs --------------------------------------------------------------------------
    def log_dir(self, *parts: str) -> Path:
        """A folder under logs/ for one job's artefacts (created)."""
        path = self.path / LOGS_DIR
        for part in parts:
            if "/" in part or part in ("", ".", ".."):
                raise ValueError(f"bad log path component {part!r}")
            path = path / part
        path.mkdir(parents=True, exist_ok=True)
        return path

    def relative(self, path: Path) -> str:
        return str(Path(path).resolve().relative_to(self.path.resolve()))

    # -- integrity ---------------------------------------------------------------------
    def _repair_refs(self) -> None:
        rows = self.db.query("SELECT id, commit_sha FROM nodes")
        refs = self.archive.refs()
        missing = {r["id"]: r["commit_sha"] for r in rows if refs.get(r["id"]) != r["commit_sha"]}
        for node_id, sha in missing.items():
            if not self.archive.has_commit(sha):
                raise RunDirError(
                    f"node {node_id}'s commit {sha[:10]} is missing from archive.git",
                    "restore archive.git from a backup",
                )
        if missing:
            self.archive.set_refs(missing)


def _commit_message(origin: str) -> str:
    return origin if origin.strip() else "(no problem statement)"
