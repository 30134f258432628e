"""run.sqlite: the schema, its migrations and thread-safe connections.

SQLite in WAL mode: readers never block the writer, and a process killed at any
moment leaves every committed transaction intact and no partial one. Each finished
job is recorded in one transaction.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dgm.errors import RunDirError

SCHEMA_VERSION = 4

BUSY_TIMEOUT_S = float(os.environ.get("DGM_DB_BUSY_TIMEOUT_S", "30"))
"""How long a write waits for another connection's lock before it fails (then the job's
result counts as unrecorded: dgm/loop/recording.py). Tests shorten it."""

# Migration N brings a database from version N-1 to N. Add new ones at the end; never
# edit a shipped one.
MIGRATIONS: dict[int, str] = {
    1: """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE nodes (
        id          INTEGER PRIMARY KEY,
        parent_id   INTEGER REFERENCES nodes(id),
        commit_sha  TEXT NOT NULL,
        depth       INTEGER NOT NULL,
        created_at  REAL NOT NULL,
        status      TEXT NOT NULL,
        origin      TEXT NOT NULL,
        job_id      TEXT,
        meta        TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX nodes_parent ON nodes(parent_id);
    CREATE UNIQUE INDEX nodes_job ON nodes(job_id) WHERE job_id IS NOT NULL;
    CREATE TABLE evaluations (
        id            INTEGER PRIMARY KEY,
        node_id       INTEGER NOT NULL REFERENCES nodes(id),
        task_id       TEXT NOT NULL,
        benchmark     TEXT NOT NULL,
        stage         INTEGER NOT NULL DEFAULT 1,
        resolved      INTEGER NOT NULL,
        empty_patch   INTEGER NOT NULL DEFAULT 0,
        tests_passed  INTEGER,
        tests_total   INTEGER,
        agent_seconds REAL,
        judge_seconds REAL,
        cost_usd      REAL NOT NULL DEFAULT 0,
        error         TEXT,
        log_dir       TEXT,
        job_id        TEXT,
        created_at    REAL NOT NULL,
        details       TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX evaluations_node ON evaluations(node_id);
    CREATE UNIQUE INDEX evaluations_job ON evaluations(job_id) WHERE job_id IS NOT NULL;
    CREATE TABLE jobs (
        id          TEXT PRIMARY KEY,
        kind        TEXT NOT NULL,
        inputs      TEXT NOT NULL,
        state       TEXT NOT NULL,
        attempts    INTEGER NOT NULL DEFAULT 0,
        created_at  REAL NOT NULL,
        started_at  REAL,
        finished_at REAL,
        result      TEXT,
        error       TEXT
    );
    CREATE INDEX jobs_state ON jobs(state);
    CREATE TABLE llm_usage (
        id            INTEGER PRIMARY KEY,
        ts            REAL NOT NULL,
        job_id        TEXT,
        node_id       INTEGER,
        task_id       TEXT,
        role          TEXT,
        model         TEXT,
        input_tokens  INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        cached_tokens INTEGER NOT NULL DEFAULT 0,
        cost_usd      REAL NOT NULL DEFAULT 0,
        latency_s     REAL,
        error         TEXT
    );
    CREATE INDEX llm_usage_job ON llm_usage(job_id);
    CREATE INDEX llm_usage_node ON llm_usage(node_id);
    CREATE TABLE events (
        id   INTEGER PRIMARY KEY,
        ts   REAL NOT NULL,
        kind TEXT NOT NULL,
        data TEXT NOT NULL DEFAULT '{}'
    );
    """,
    # Prompt caching: input tokens written to the provider's cache, priced on their own.
    2: """
    ALTER TABLE llm_usage ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
    """,
    # The judge caught the patch tampering with the test run (canaries): never resolved,
    # never best, never exported. Evaluations recorded before this are untampered.
    3: """
    ALTER TABLE evaluations ADD COLUMN tampered INTEGER NOT NULL DEFAULT 0;
    """,
    # Steering (dgm serve, dgm steer): a person's requests, applied and acknowledged by the
    # loop (dgm/store/steering.py). Kept for good: bans and pins hold across resume.
    4: """
    CREATE TABLE steering (
        id          INTEGER PRIMARY KEY,
        ts          REAL NOT NULL,
        action      TEXT NOT NULL,
        args        TEXT NOT NULL DEFAULT '{}',
        who         TEXT NOT NULL,
        state       TEXT NOT NULL DEFAULT 'pending',
        applied_at  REAL,
        note        TEXT
    );
    CREATE INDEX steering_state ON steering(state);
    """,
}


class Database:
    """One connection per thread to a run's SQLite file."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._local = threading.local()
        self._write_lock = threading.Lock()

    @classmethod
    def create(cls, path: Path) -> Database:
        db = cls(path)
        with db.transaction() as conn:
            db._migrate(conn, 0)
        return db

    @classmethod
    def open(cls, path: Path) -> Database:
        db = cls(path)
        try:
            version = db.schema_version()
        except sqlite3.DatabaseError as exc:
            raise RunDirError(
                f"{path} is not a readable run database ({exc})",
                "restore run.sqlite from a backup; archive.git still holds every node's code",
            ) from None
        if version > SCHEMA_VERSION:
            raise RunDirError(
                f"{path} has schema version {version}, newer than this dgm supports "
                f"({SCHEMA_VERSION})",
                "upgrade dgm (pip install -U dgm) to open this run",
            )
        if version < SCHEMA_VERSION:
            with db.transaction() as conn:
                db._migrate(conn, version)
        return db

    @classmethod
    def read_only(cls, path: Path) -> Database:
        """A reader that can never write, migrate or lock out the run's writer (WAL readers
        do not block it): for `dgm serve` watching a live run."""
        db = cls(path)
        db._read_only = True
        return db

    @property
    def conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None and getattr(self, "_read_only", False):
            uri = f"file:{self.path.resolve()}?mode=ro"
            conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
            conn.row_factory = sqlite3.Row
            self._local.conn = conn
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            # NORMAL is durable against process crashes (kill -9) in WAL mode; only a
            # power loss can drop the last transactions, never corrupt the file.
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            self._local.conn = conn
        return conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """An IMMEDIATE transaction: all of it is recorded, or none of it."""
        conn = self.conn
        with self._write_lock:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def query(self, sql: str, params: tuple | dict = ()) -> list[sqlite3.Row]:
        return self.conn.execute(sql, params).fetchall()

    def get_meta(self, key: str) -> str | None:
        """A run-level record in the meta table (e.g. the task split), or None."""
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def schema_version(self) -> int:
        conn = self.conn
        has_meta = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'"
        ).fetchone()
        if not has_meta:
            raise sqlite3.DatabaseError("no meta table")
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            raise sqlite3.DatabaseError("no schema_version")
        return int(row[0])

    def _migrate(self, conn: sqlite3.Connection, current: int) -> None:
        for version in range(current + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[version].split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)",
                (str(version),),
            )

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
