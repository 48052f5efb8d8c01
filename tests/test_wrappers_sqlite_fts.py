"""The ``sqlite-fts`` wrapper: a database file, BM25 ranking, user and scope filters, reset, update."""

from __future__ import annotations

from pathlib import Path

import pytest

from memeval_core.wrappers.server import BadRequestError
from memeval_core.wrappers.sqlite_fts import SqliteFts, terms


def _store(path: Path) -> SqliteFts:
    s = SqliteFts(path)
    s.add(
        {
            "text": "Redis cache eviction policy allkeys-lru",
            "user_id": "u",
            "metadata": {"beliefId": "redis", "scope": "domain:code"},
        }
    )
    k8s = {"beliefId": "k8s", "scope": ["domain:code"]}
    s.add({"text": "Kubernetes cluster hosting", "user_id": "u", "metadata": k8s, "aliases": ["k8s"]})
    s.add(
        {"text": "Redis the narrator's cat", "user_id": "u", "metadata": {"beliefId": "cat", "scope": "domain:writing"}}
    )
    s.add({"text": "Redis for another user", "user_id": "v", "metadata": {"beliefId": "other", "scope": "domain:code"}})
    return s


def test_search_ranks_filters_and_persists(tmp_path: Path) -> None:
    s = _store(tmp_path / "m.db")
    ids = [r["id"] for r in s.search({"query": "redis eviction", "user_id": "u", "limit": 5})]
    assert ids == ["redis"]  # the cat scores below half of the best hit
    assert [r["id"] for r in s.search({"query": "redis", "user_id": "u", "scope": "domain:writing"})] == ["cat"]
    assert [r["id"] for r in s.search({"query": "k8s", "user_id": "u", "scope": ["domain:code", "x"]})] == ["k8s"]
    assert s.search({"query": "redis", "user_id": "u", "limit": 0}) == []
    assert s.search({"query": "what is the", "user_id": "u"}) == []  # stop words only
    again = SqliteFts(tmp_path / "m.db")  # a real file: another connection sees the same store
    assert {r["id"] for r in again.search({"query": "redis", "user_id": "v"})} == {"other"}
    s.update({"id": "k8s", "aliases": ["kube"]})
    assert [r["id"] for r in s.search({"query": "kube", "user_id": "u"})] == ["k8s"]
    s.reset()
    assert s.search({"query": "redis", "user_id": "u"}) == []


def test_terms_drop_stop_words_and_quote() -> None:
    assert terms("What's the Redis eviction policy? Redis!") == ['"redis"', '"eviction"', '"policy"']


def test_bad_requests_name_the_field(tmp_path: Path) -> None:
    s = SqliteFts(":memory:")
    with pytest.raises(BadRequestError, match="'text'"):
        s.add({"user_id": "u"})
    with pytest.raises(BadRequestError, match="'limit'"):
        s.search({"query": "x", "user_id": "u", "limit": "ten"})
    with pytest.raises(BadRequestError, match="'scope'"):
        s.search({"query": "x", "user_id": "u", "scope": 3})
