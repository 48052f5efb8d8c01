"""``sqlite-fts``: a real, if simple, memory system: SQLite FTS5 with BM25 ranking in a database file.

Each memory is a row of an FTS5 table (its text, aliases included) beside a plain table of its owner, scopes
and metadata. A search keeps the user's memories in any of the requested scopes that match at least one
query term (terms OR-ed, stop words dropped), ranks them by BM25, and keeps those scoring at least
:data:`RELATIVE_CUTOFF` of the best one, at most ``limit``.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

from memeval_core.wrappers.server import BadRequestError, Provider, require, scopes_of

RELATIVE_CUTOFF = 0.5
"""A hit is kept when its BM25 score is at least this share of the best hit's."""

_STOP_WORDS_LINES = (
    "a about actually after again all also am an and any are as at back be been before being but by can",
    "could did do does doing for from get got had has have having he her here hey him his how i i'd i'll",
    "i'm i've if in into is it it's its just know let let's like me more my no not now of ok on one or",
    "our out over quick really re right should so some still than that that's the their them then there",
    "these they thing think this those though to too up us use using was we we're well were what when",
    "where which while who why will with would yeah yes you you're your",
)
STOP_WORDS = frozenset(" ".join(_STOP_WORDS_LINES).split())
"""Words too common to say what a query is about (English function words and chat filler)."""
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")

SCHEMA = """
create table if not exists memory (
    id text primary key, user_id text not null, scopes text not null, metadata text not null, text text not null
);
create virtual table if not exists memory_fts using fts5(id unindexed, text, tokenize = 'porter unicode61');
"""


def terms(query: str) -> list[str]:
    """The query's words without stop words, lower-cased, each once, as FTS5 string literals."""
    words = dict.fromkeys(w.split("'")[0] for w in _TOKEN.findall(query.lower()))
    return [f'"{w}"' for w in words if w and w not in STOP_WORDS]


class SqliteFts(Provider):
    """The store lives in ``path`` (a file; ``:memory:`` for tests that need no file)."""

    name = "sqlite-fts"

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)
        self.db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self.db.execute("pragma journal_mode = wal")
        self.db.executescript(SCHEMA)

    def reset(self) -> None:
        with self.db:
            self.db.execute("delete from memory")
            self.db.execute("delete from memory_fts")

    def add(self, body: dict[str, Any]) -> dict[str, Any]:
        start = time.perf_counter()
        text, user = require(body, "text", str), require(body, "user_id", str)
        meta = body.get("metadata") or {}
        if not isinstance(meta, dict):
            raise BadRequestError("field 'metadata' must be an object")
        bid = str(meta.get("beliefId") or f"mem-{self.db.execute('select count(*) from memory').fetchone()[0]}")
        aliases = body.get("aliases") or []
        full = " ".join([text, *(a for a in aliases if isinstance(a, str))])
        scopes = scopes_of(meta.get("scope")) or []
        with self.db:
            self.db.execute("delete from memory where id = ?", (bid,))
            self.db.execute("delete from memory_fts where id = ?", (bid,))
            self.db.execute(
                "insert into memory values (?, ?, ?, ?, ?)", (bid, user, json.dumps(scopes), json.dumps(meta), text)
            )
            self.db.execute("insert into memory_fts (id, text) values (?, ?)", (bid, full))
        return {"id": bid, "db_overhead_ms": 0, "elapsed_ms": (time.perf_counter() - start) * 1000}

    def search(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        query, user = require(body, "query", str), require(body, "user_id", str)
        limit = body.get("limit", 20)
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
            raise BadRequestError("field 'limit' must be a non-negative integer")
        wanted = scopes_of(body.get("scope"))
        words = terms(query)
        if not words or limit == 0:
            return []
        rows = self.db.execute(
            "select m.id, m.text, m.metadata, m.scopes, bm25(memory_fts) as score from memory_fts f "
            "join memory m on m.id = f.id where memory_fts match ? and m.user_id = ? order by score, m.rowid",
            (" OR ".join(words), user),
        ).fetchall()
        hits = [r for r in rows if wanted is None or set(json.loads(r[3])) & set(wanted)]
        if not hits:
            return []
        best = -hits[0][4]  # bm25() is lower-is-better (negative)
        kept = [r for r in hits if -r[4] >= RELATIVE_CUTOFF * best][:limit]
        return [{"id": r[0], "memory": r[1], "metadata": json.loads(r[2]), "score": -r[4]} for r in kept]

    def update(self, body: dict[str, Any]) -> dict[str, Any]:
        bid = require(body, "id", str)
        row = self.db.execute("select text from memory where id = ?", (bid,)).fetchone()
        if row is None:
            raise BadRequestError(f"no memory with id {bid!r}")
        aliases = [a for a in body.get("aliases") or [] if isinstance(a, str)]
        new = body.get("text")
        text: str = new if isinstance(new, str) else row[0]
        with self.db:
            self.db.execute("update memory set text = ? where id = ?", (text, bid))
            self.db.execute("update memory_fts set text = ? where id = ?", (" ".join([text, *aliases]), bid))
        return {"id": bid}
