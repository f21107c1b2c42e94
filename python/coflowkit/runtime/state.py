"""The master's durable state: registrations and which running flow took which
registered slot, in SQLite (WAL mode), so that a restarted master loses nothing.

Tables (``PRAGMA user_version`` = SCHEMA):

* ``coflows(id, seq, registered_wall, arrival_wall, flows)``: one row per
  registered coflow not completed yet; ``flows`` is the JSON list of
  ``[src, dst, dst_port, size or null, stage, priority]`` as registered (files
  written before stages were stored have 4-element rows: stage and priority 0),
  or an object ``{"flows": that list, "weight", "parents", "report"}`` when the
  registration said more (hosts resolved, report links as the big switch
  numbers them); ``arrival_wall`` the wall time its first flow was seen (null
  until then);
* ``bindings(coflow, idx, src, sport, dst, dport, finished, bytes)``: registered
  flow ``idx`` of ``coflow`` was seen as the connection (src host, source port,
  dst host, dst port); ``finished`` with its final ``bytes`` once it ended.

A registration is committed with ``synchronous=FULL`` before the API answers 201
(it survives a power loss). Bindings are written as flows start and end and
committed once per round with ``synchronous=NORMAL``: in WAL mode that survives
the master process dying at any point, and a power loss loses at most the last
rounds' bindings (the flows then come back as if new). A completed coflow's rows
are deleted, so the file holds only what a restart needs.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field

from coflowkit._core import CoflowkitError

SCHEMA = 1


@dataclass
class Binding:
    idx: int
    src: int
    sport: int
    dst: int
    dport: int
    finished: bool
    bytes: float


@dataclass
class Stored:
    id: int
    flows: list[tuple[int, int, int, float | None, int, int]]
    arrival_wall: float | None
    bindings: list[Binding] = field(default_factory=list)
    info: dict = field(default_factory=dict)  # weight, parents, report when given


class Store:
    """One SQLite file, written by the master's round thread only."""

    def __init__(self, path: str):
        self.path = path
        try:
            self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                self._create()
            elif version != SCHEMA:
                raise CoflowkitError(
                    f"state file {path}: schema version {version}, this master reads {SCHEMA}"
                )
            self.db.execute(
                "SELECT id, seq, registered_wall, arrival_wall, flows FROM coflows LIMIT 1"
            )
            self.db.execute(
                "SELECT coflow, idx, src, sport, dst, dport, finished, bytes FROM bindings LIMIT 1"
            )
        except sqlite3.DatabaseError as e:
            raise CoflowkitError(f"state file {path}: {e}") from None
        self.seq = self.db.execute("SELECT COALESCE(MAX(seq), -1) + 1 FROM coflows").fetchone()[0]
        self._open = False

    def _create(self) -> None:
        self.db.executescript(
            f"""
            BEGIN;
            CREATE TABLE coflows(id INTEGER PRIMARY KEY, seq INTEGER NOT NULL,
                registered_wall REAL NOT NULL, arrival_wall REAL, flows TEXT NOT NULL);
            CREATE TABLE bindings(coflow INTEGER NOT NULL, idx INTEGER NOT NULL,
                src INTEGER NOT NULL, sport INTEGER NOT NULL, dst INTEGER NOT NULL,
                dport INTEGER NOT NULL, finished INTEGER NOT NULL DEFAULT 0,
                bytes REAL NOT NULL DEFAULT 0, PRIMARY KEY(coflow, idx));
            PRAGMA user_version = {SCHEMA};
            COMMIT;
            """
        )

    def load(self) -> list[Stored]:
        """Every stored coflow in registration order, with its bindings."""
        try:
            rows = self.db.execute(
                "SELECT id, arrival_wall, flows FROM coflows ORDER BY seq"
            ).fetchall()
            out = []
            for cid, arrival, flows in rows:
                binds = [
                    Binding(*b[:5], bool(b[5]), b[6])
                    for b in self.db.execute(
                        "SELECT idx, src, sport, dst, dport, finished, bytes FROM bindings "
                        "WHERE coflow = ? ORDER BY idx",
                        (cid,),
                    )
                ]
                data = json.loads(flows)
                info = {}
                if isinstance(data, dict):
                    info = {k: v for k, v in data.items() if k != "flows"}
                    data = data["flows"]
                rows6 = [tuple(f) + (0, 0)[: 6 - len(f)] for f in data]
                out.append(Stored(cid, rows6, arrival, binds, info))
        except (sqlite3.DatabaseError, ValueError, TypeError) as e:
            raise CoflowkitError(f"state file {self.path}: unreadable ({e})") from None
        return out

    def add_coflow(self, cid: int, flows: list, wall: float, info: dict | None = None) -> None:
        """A registration, durable when this returns (fsync)."""
        self.commit()
        self.db.execute("PRAGMA synchronous=FULL")
        rows = [list(f) for f in flows]
        payload = {"flows": rows, **info} if info else rows
        self.db.execute(
            "INSERT INTO coflows(id, seq, registered_wall, arrival_wall, flows) VALUES (?, ?, ?, NULL, ?)",
            (cid, self.seq, wall, json.dumps(payload)),
        )
        self.seq += 1

    def _begin(self) -> None:
        if not self._open:
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("BEGIN")
            self._open = True

    def bind(self, cid: int, idx: int, src: int, sport: int, dst: int, dport: int) -> None:
        self._begin()
        self.db.execute(
            "INSERT OR REPLACE INTO bindings(coflow, idx, src, sport, dst, dport) VALUES (?, ?, ?, ?, ?, ?)",
            (cid, idx, src, sport, dst, dport),
        )

    def arrived(self, cid: int, wall: float) -> None:
        self._begin()
        self.db.execute(
            "UPDATE coflows SET arrival_wall = ? WHERE id = ? AND arrival_wall IS NULL", (wall, cid)
        )

    def finish(self, cid: int, idx: int, nbytes: float) -> None:
        self._begin()
        self.db.execute(
            "UPDATE bindings SET finished = 1, bytes = ? WHERE coflow = ? AND idx = ?",
            (nbytes, cid, idx),
        )

    def completed(self, cid: int) -> None:
        """The coflow is done: nothing of it is needed after a restart."""
        self._begin()
        self.db.execute("DELETE FROM bindings WHERE coflow = ?", (cid,))
        self.db.execute("DELETE FROM coflows WHERE id = ?", (cid,))

    def commit(self) -> None:
        if self._open:
            self.db.execute("COMMIT")
            self._open = False

    def close(self) -> None:
        try:
            self.commit()
        finally:
            self.db.close()
