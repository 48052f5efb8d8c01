"""The harness's context building, seeding and report arithmetic, on small hand-made beliefs."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from memeval_core.errors import IngestError
from memeval_core.judge.client import public_url
from memeval_core.pmb.models import PreludeExpect
from memeval_core.runner import checkpoint
from memeval_core.runner.config import ProviderConfig, load_provider_config
from memeval_core.runner.context import SeedIndex, belief_to_text, build_context, persona_prelude
from memeval_core.runner.numbers import js_round
from memeval_core.runner.progress import Progress
from memeval_core.runner.report import ingestion_block, summary
from memeval_core.runner.suites import prelude_failures


def _b(bid: str, **kw: Any) -> dict[str, Any]:
    return {"_id": bid, "user_id": "test-user", "type": "preference", "scope": ["domain:code"], **kw}


INDEX = SeedIndex()
for belief in (
    _b("pin", pinned=True),
    _b("pin-old", pinned=True, superseded_by="pin"),
    _b("q", type="open_question", pinned=True),
    _b("q-done", type="open_question", pinned=True, resolved_at="2026-01-01"),
    _b("rel", type="relation", participants=["a", "q", "w", "pin", "missing"]),
    _b("a"),
    _b("w", scope=["domain:writing"]),
    _b("other", user_id="someone"),
):
    INDEX.add(belief)


def _search(answers: dict[Any, list[str]], calls: list[Any]) -> Any:
    def search(query: str, limit: int, scope: Any, exclude: set[str]) -> list[dict[str, Any]]:
        calls.append((query, limit, scope))
        return [INDEX.beliefs[i] for i in answers.get(scope if isinstance(scope, str) else tuple(scope), [])]

    return search


def test_pinned_questions_expansion_and_caps() -> None:
    calls: list[Any] = []
    ctx = build_context(INDEX, _search({"domain:code": ["rel"]}, calls), ProviderConfig(), "test-user",
                        ["domain:code"], "redis")  # fmt: skip
    assert calls == [("redis", 20, "domain:code")]
    assert ctx.pinned == ["pin"] and ctx.questions == ["q"]
    # participants: open questions, pinned ids, other scopes and unknown ids are left out
    assert ctx.relevant == ["rel", "a"]
    assert ctx.prelude == persona_prelude("test-user") != "" and persona_prelude("someone") == ""
    capped = build_context(INDEX, _search({"domain:code": ["rel"]}, []), ProviderConfig(), "test-user",
                           ["domain:code"], "redis", {"maxBeliefs": 2})  # fmt: skip
    assert capped.pinned == ["pin"] and capped.relevant == ["rel"]  # maxBeliefs less the pinned facts
    none = build_context(INDEX, _search({}, calls), ProviderConfig(), "test-user", ["domain:code"], "  ")
    assert none.relevant == [] and len(calls) == 1  # a blank query sends no search


def test_multi_scope_interleaves_per_scope_results_unless_supported() -> None:
    calls: list[Any] = []
    answers = {"domain:code": ["a", "rel"], "domain:writing": ["w", "a"], ("domain:code", "domain:writing"): ["w"]}
    scope = ["domain:code", "domain:writing"]
    ctx = build_context(INDEX, _search(answers, calls), ProviderConfig(), "test-user", scope, "x")
    assert [c[2] for c in calls] == scope and ctx.relevant == ["a", "w", "rel"]
    multi = ProviderConfig(supports_multi_scope=True)
    assert build_context(INDEX, _search(answers, calls), multi, "test-user", scope, "x").relevant == ["w"]


def test_belief_to_text_ignores_the_mode_as_upstream() -> None:
    b = _b("x", canonical_name="redis", aliases=["cache", ""], content="Redis.", why_it_matters=None)
    assert belief_to_text(b, "content") == belief_to_text(b, "canonical_name_aliases") == "redis cache Redis."


def test_prelude_checks_use_the_harness_words() -> None:
    expect = PreludeExpect(non_empty=True, contains=["direct answers", "Lisbon"], must_not_contain=["preamble"])
    assert prelude_failures(expect, persona_prelude("test-user")) == [
        'personaPrelude missing "Lisbon"',
        'personaPrelude contains "preamble"',
    ]
    assert prelude_failures(PreludeExpect(is_null=True, non_empty=True), "") == ["personaPrelude empty"]


def test_numbers_round_like_javascript() -> None:
    assert js_round(0.125, 2) == 0.13 and js_round(-0.125, 2) == -0.12 and js_round(2 / 3, 4) == 0.6667


def test_summary_matches_build_retrieval_report() -> None:
    entries = [
        {"category": "A", "passed": True, "retrievalPrecision": 1.0, "retrievalRecall": 1.0, "retrievalLatencyMs": 3},
        {"category": "B", "passed": True, "retrievalPrecision": None, "retrievalRecall": None, "retrievalLatencyMs": 1},
        {"category": "B", "passed": False, "retrievalPrecision": 0.0, "retrievalRecall": 0.5, "retrievalLatencyMs": 2},
    ]
    s = summary(entries, 3)
    assert (s["meanLatencyMs"], s["p50LatencyMs"], s["p95LatencyMs"]) == (2, 2, 3)
    assert (s["meanPrecision"], s["meanRecall"], s["passRate"]) == (0.5, 0.75, 0.6667)
    assert s["passTypes"] == {"activeRetrieval": 1, "structural": 0, "triviallyEmpty": 1}
    assert [c["category"] for c in s["categories"]] == ["B", "A"] and "turnCount" not in s
    assert summary([], 0)["passRate"] is None and summary([], 2, 0)["turnCount"] == 0
    block = ingestion_block([{"beliefId": "a", "latencyMs": 1.005}, {"beliefId": "b", "latencyMs": 2}])
    assert (block["beliefCount"], block["totalMs"], block["meanPerBeliefMs"]) == (2, 3.01, 1.5)


def test_config_file_errors_name_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "providers.config.json"
    path.write_text(json.dumps({"mine": {"seedDelayMs": "slow", "beliefToText": "content"}}))
    with pytest.raises(IngestError, match=r"providers.config.json: \$.mine.seedDelayMs: "):
        load_provider_config(path, "mine")
    path.write_text(json.dumps({"mine": {"seedDelayMs": 5, "waitAfterSeed": True}}))
    cfg = load_provider_config(path, "mine")
    assert (cfg.seed_delay_ms, cfg.wait_after_seed, cfg.belief_to_text) == (5, True, "canonical_name_aliases")
    assert load_provider_config(path, "unknown") == ProviderConfig() == load_provider_config(None, "x")


def test_public_url_drops_credentials() -> None:
    assert public_url("http://me:pw@host:8080/api/?token=x#f") == "http://host:8080/api"


def test_progress_line_and_checkpoint_torn_line(tmp_path: Path) -> None:
    out = io.StringIO()
    bar = Progress(out, "single", 4)
    assert bar.line(2, [1.0, 3.0, 2.0]) == "single [############............] 2/4 cases · wrapper p50 2.0 ms"
    bar.finish(4, [])
    assert out.getvalue().endswith("4/4 cases · wrapper p50 –\n")
    part = tmp_path / ".r.partial.jsonl"
    w = checkpoint.Writer(part, {"h": 1}, fresh=True)
    w.seeded(None)
    w.entry({"caseId": "c1"})
    w.close(remove=False)
    with part.open("a") as fh:
        fh.write('{"entry": {"caseId": "c')  # killed mid-line
    got = checkpoint.read(part, {"h": 1})
    assert got is not None and got.seeded and got.entries == [{"caseId": "c1"}]
    with pytest.raises(IngestError, match="another run"):
        checkpoint.read(part, {"h": 2})
