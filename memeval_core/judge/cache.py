"""The verdict cache: one SQLite file, so a second run makes no call it already made and a killed run resumes.

A row is one judge response, keyed by the SHA-256 of (prompt hash, model, base URL without credentials,
template, question, gold answer, answer, repeat) (:func:`cache_key`). It stores the raw response text and
its token counts, never a parsed verdict: parsing happens on reading, so a fixed parser needs no new calls.

Durability: WAL journal, one transaction per verdict (``INSERT OR IGNORE`` on the primary key, then commit),
so a process killed at any instant leaves every verdict either wholly stored or absent, and none twice. A
busy timeout lets two processes share the file. Nothing secret is stored: no key, no credentials in URLs.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import orjson

SCHEMA = 1
_CHUNK = 5000
_CREATE = """
CREATE TABLE IF NOT EXISTS verdicts (
    key TEXT PRIMARY KEY,
    prompt_hash TEXT NOT NULL,
    model TEXT NOT NULL,
    base_url TEXT NOT NULL,
    repeat INTEGER NOT NULL,
    raw TEXT NOT NULL,
    tokens_in INTEGER NOT NULL,
    tokens_out INTEGER NOT NULL,
    created TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class CacheError(RuntimeError):
    """The cache file cannot be opened or written; the message is one sentence."""


class Cached(NamedTuple):
    """One stored response (a named tuple: a rerun builds one per verdict)."""

    raw: str
    """The response text as the judge gave it."""
    tokens_in: int
    """Prompt tokens of the call."""
    tokens_out: int
    """Completion tokens of the call."""


@dataclass(frozen=True)
class CallKey:
    """What identifies one call (everything but the texts, which :func:`cache_key` hashes in)."""

    prompt_hash: str
    """:attr:`memeval_core.judge.prompts.Prompt.hash`."""
    model: str
    """Judge model."""
    base_url: str
    """Endpoint, without credentials."""


def cache_key(call: CallKey, template: str, question: str, gold: str, answer: str, repeat: int) -> str:
    """The row key of one call: SHA-256 of its identifying fields as a JSON list."""
    fields = [call.prompt_hash, call.model, call.base_url, template, question, gold, answer, repeat]
    return hashlib.sha256(orjson.dumps(fields)).hexdigest()


class VerdictCache:
    """The SQLite cache at ``path`` (created with its folder when missing); safe to share between threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, timeout=30.0, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_CREATE)
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA),))
        except (OSError, sqlite3.Error) as exc:
            raise CacheError(f"the judge cache {path} cannot be opened ({exc})") from None

    def get_many(self, keys: Iterable[str]) -> dict[str, Cached]:
        """The stored responses among ``keys``."""
        wanted = list(dict.fromkeys(keys))
        out: dict[str, Cached] = {}
        with self._lock:
            for i in range(0, len(wanted), _CHUNK):
                chunk = wanted[i : i + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT key, raw, tokens_in, tokens_out FROM verdicts WHERE key IN ({marks})", chunk
                )
                out.update({key: Cached(raw, t_in, t_out) for key, raw, t_in, t_out in rows.fetchall()})
        return out

    def put(self, key: str, call: CallKey, repeat: int, value: Cached) -> bool:
        """Store one response in its own transaction; False when the key was already stored (kept as it was)."""
        return self.put_many([(key, repeat, value)], call) == 1

    def put_many(self, rows: Sequence[tuple[str, int, Cached]], call: CallKey) -> int:
        """Store several responses in one transaction; how many were new."""
        now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        params = [
            (k, call.prompt_hash, call.model, call.base_url, r, v.raw, v.tokens_in, v.tokens_out, now)
            for k, r, v in rows
        ]
        try:
            with self._lock:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    before = self._db.total_changes
                    self._db.executemany("INSERT OR IGNORE INTO verdicts VALUES (?,?,?,?,?,?,?,?,?)", params)
                    added = self._db.total_changes - before
                    self._db.execute("COMMIT")
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
        except sqlite3.Error as exc:
            raise CacheError(f"the judge cache {self.path} cannot be written ({exc})") from None
        return added

    def count(self) -> int:
        """Stored responses."""
        with self._lock:
            (n,) = self._db.execute("SELECT count(*) FROM verdicts").fetchone()
        return int(n)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()
