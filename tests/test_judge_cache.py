"""The SQLite verdict cache: keys, no double writes, WAL, and nothing lost or torn when a writer is SIGKILLed."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from memeval_core.judge.cache import Cached, CallKey, VerdictCache, cache_key

ROOT = Path(__file__).resolve().parents[1]
CALL = CallKey("p" * 64, "judge-model", "http://127.0.0.1:1/v1")

WRITER = """
import sys
from pathlib import Path
from memeval_core.judge.cache import Cached, CallKey, VerdictCache, cache_key
call = CallKey("p" * 64, "judge-model", "http://127.0.0.1:1/v1")
cache = VerdictCache(Path(sys.argv[1]))
print("ready", flush=True)
for i in range(1_000_000):
    key = cache_key(call, "default", f"q{i}", "gold", f"answer {i}", 1)
    cache.put(key, call, 1, Cached(f"raw {i} " + "x" * 200, i, 2 * i))
"""


def test_keys_cover_every_field() -> None:
    base = cache_key(CALL, "default", "q", "g", "a", 1)
    variants = [
        cache_key(CallKey("o" * 64, CALL.model, CALL.base_url), "default", "q", "g", "a", 1),
        cache_key(CallKey(CALL.prompt_hash, "other", CALL.base_url), "default", "q", "g", "a", 1),
        cache_key(CallKey(CALL.prompt_hash, CALL.model, "http://x/v1"), "default", "q", "g", "a", 1),
        cache_key(CALL, "temporal-reasoning", "q", "g", "a", 1),
        cache_key(CALL, "default", "q2", "g", "a", 1),
        cache_key(CALL, "default", "q", "g2", "a", 1),
        cache_key(CALL, "default", "q", "g", "a2", 1),
        cache_key(CALL, "default", "q", "g", "a", 2),
    ]
    assert len({base, *variants}) == 9
    assert cache_key(CALL, "default", "q", "g", "a", 1) == base


def test_put_is_idempotent_and_wal(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "sub" / "c.sqlite")
    k = cache_key(CALL, "default", "q", "g", "a", 1)
    assert cache.put(k, CALL, 1, Cached("CORRECT", 10, 2)) is True
    assert cache.put(k, CALL, 1, Cached("WRONG", 11, 3)) is False  # never written twice; the first stays
    assert cache.get_many([k, "absent"]) == {k: Cached("CORRECT", 10, 2)}
    assert cache.count() == 1
    cache.close()
    with sqlite3.connect(tmp_path / "sub" / "c.sqlite") as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_many_keys_are_looked_up_in_chunks(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite")
    keys = [cache_key(CALL, "default", f"q{i}", "g", "a", 1) for i in range(1_234)]
    assert cache.put_many([(k, 1, Cached(k[:8], 1, 1)) for k in keys[::2]], CALL) == 617
    found = cache.get_many(keys)
    assert set(found) == set(keys[::2]) and found[keys[0]].raw == keys[0][:8]


def test_sigkill_during_writes_loses_and_tears_nothing(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    reader = VerdictCache(path)
    deadline = time.monotonic() + 60
    while reader.count() < 300 and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    reader.close()

    cache = VerdictCache(path)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        rows = db.execute("SELECT raw, tokens_in, tokens_out FROM verdicts").fetchall()
    n = len(rows)
    assert n >= 300
    # Written in order, one transaction each: exactly the first n verdicts are there, each whole.
    keys = [cache_key(CALL, "default", f"q{i}", "gold", f"answer {i}", 1) for i in range(n + 5)]
    found = cache.get_many(keys)
    assert set(found) == set(keys[:n])
    assert all(found[keys[i]] == Cached(f"raw {i} " + "x" * 200, i, 2 * i) for i in range(n))
