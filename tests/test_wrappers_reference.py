"""The wrapper protocol over HTTP, and the nothing, everything and replay wrappers."""

from __future__ import annotations

import json
from pathlib import Path

from memeval_core.runner.client import WrapperClient
from memeval_core.wrappers.reference import Everything, Nothing
from memeval_core.wrappers.replay import Replay
from tests._runner import BASELINE_DIR, fixture, run, serving


def test_protocol_routes_and_errors() -> None:
    with serving(Everything()) as srv:
        c = WrapperClient(srv.url, retries=0)
        assert c.call("DELETE", "/reset", what="t").body == {"ok": True}
        assert c.call("POST", "/add", {"text": "a", "metadata": {"beliefId": "b1"}}, what="t").body == {"id": "b1"}
        assert c.call("POST", "/search", {"query": "q", "user_id": "u"}, what="t").body["results"][0]["id"] == "b1"
        assert c.call("POST", "/wait", what="t").body == {"ok": True}
        for method, path, body, status in (
            ("POST", "/add", {}, 400),
            ("GET", "/search", None, 501),
            ("POST", "/x", {}, 404),
        ):
            try:
                c.call(method, path, body, what="call")
            except Exception as exc:
                assert f"HTTP {status}" in str(exc) and str(exc).startswith(f"call: {method} {srv.url}{path}")
            else:
                raise AssertionError(f"{method} {path} should fail")
        c.close()


def test_nothing_and_everything_bound_the_scores(tmp_path: Path) -> None:
    scores = {}
    for provider in (Nothing(), Everything()):
        with serving(provider) as srv:
            (path,) = run(srv.url, tmp_path / provider.name, ("single",), provider=provider.name)
        scores[provider.name] = json.loads(path.read_text())["retrieval"]["totalPassed"]
    # The harness fills pinned facts and open questions from its seed index whatever the wrapper returns.
    assert scores == {"nothing": 34, "everything": 8}


def test_replay_answers_the_recorded_ids_per_scope_too() -> None:
    fx = fixture()  # skips without the shared data
    doc = json.loads((BASELINE_DIR / "retrieval-report-tenure.json").read_text())
    r = Replay(doc, fx)
    case = next(c for c in doc["cases"] if c["caseId"] == "multi-scope-redis-both-surfaces")
    query = next(c.query for c in fx.cases if c.case_id == case["caseId"])
    whole = r.search({"query": query, "user_id": "test-user", "limit": 20, "scope": ["domain:code", "domain:writing"]})
    one = r.search({"query": query, "user_id": "test-user", "limit": 20, "scope": "domain:writing"})
    assert [x["id"] for x in whole] == [x["id"] for x in one] == case["relevantBeliefs"]
    assert r.search({"query": "never asked", "user_id": "test-user", "limit": 20}) == []
