"""Case-by-case comparison: paired table, filters, statistics on real PMB runs and on hand-made runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from memeval_core.explore.compare import (
    PMB_TERMS,
    case_detail,
    compare_stats,
    outcome_table,
    paired_frame,
    paired_rows,
    win_tie_loss,
)
from memeval_core.explore.paired import (
    filter_pairs,
    interval_text,
    stats_frame,
    verdict,
    verdict_sentence,
    with_intervals,
)
from memeval_core.pmb.ingest import PmbLoad, load_pmb
from memeval_core.pmb.models import RetrievalSummary
from memeval_core.pmb.rescore import ScoredCase
from memeval_core.pmb.run import Benchmark, PmbRun, RunIdentity
from memeval_core.pmb.runs_table import runs_table
from memeval_core.pmb.snapshot import cases_table
from tests._pmb_oracle import run_from_cases

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "precisionmembench"
SEED = 20260627


@pytest.fixture(scope="module")
def pmb() -> PmbLoad:
    if not DATA.is_dir():
        pytest.skip(f"shared PMB data not found at {DATA}")
    return load_pmb(DATA / "test-results", DATA / "fixtures")


def paired_cases(run_a: PmbRun, run_b: PmbRun) -> list[tuple[ScoredCase, ScoredCase]]:
    """Cases both runs reported, as (A, B) pairs in A's order."""
    rows_a, rows_b = paired_rows(run_a, run_b)
    return list(zip(run_a.table.cases(rows_a), run_b.table.cases(rows_b), strict=True))


def _single(pmb: PmbLoad) -> dict[str, PmbRun]:
    return {r.identity.display_name: r for r in pmb.runs if r.identity.benchmark == "pmb-single-turn"}


def _case(case_id: str, passed: bool, precision: float | None, category: str = "C1", desc: str = "") -> ScoredCase:
    return ScoredCase(
        case_id=case_id,
        turn_index=None,
        label="",
        category=category,
        stated_category=category,
        description=desc,
        pinned=(),
        relevant=(),
        questions=(),
        passed=passed,
        pass_type="structural" if passed else None,
        precision=precision,
        recall=None,
        pinned_coverage=None,
        drift=None,
        noise_ids=(),
        returned_nothing=True,
        failures=(),
        taken_from_report=(),
        latency_ms=1.0,
        stated_passed=passed,
        stated_precision=precision,
        stated_recall=None,
        stated_failures=(),
        stated_drift=None,
        stated_noise_ids=(),
    )


def _run(name: str, cases: list[ScoredCase], benchmark: Benchmark = "pmb-single-turn") -> PmbRun:
    ident = RunIdentity(name, name, name, benchmark, f"{name}.json", "0" * 64)
    return run_from_cases(ident, tuple(cases), RetrievalSummary(), None)


def test_tenure_vs_mem0_tenure_wins_every_discordant_case(pmb: PmbLoad) -> None:
    runs = _single(pmb)
    rep = compare_stats(
        runs["tenure"], runs["mem0"], seed=SEED, n_resamples=10_000, category_order=pmb.fixture.category_order
    )  # type: ignore[union-attr]
    m = rep.overall.mcnemar
    assert (m.n, m.both_passed, m.b, m.c, m.both_failed) == (77, 9, 68, 0, 0)
    assert m.p_value == 2.0**-67
    assert rep.overall.outcome.estimate == pytest.approx(68 / 77)
    # Same resampling as scipy on the paired differences, hence the same interval.
    diff = np.array(
        [float(a.passed) - float(b.passed) for a, b in zip(runs["tenure"].cases, runs["mem0"].cases, strict=True)]
    )
    ref = stats.bootstrap((diff,), np.mean, n_resamples=10_000, method="percentile", rng=np.random.default_rng(SEED))
    assert rep.overall.outcome.ci_low == ref.confidence_interval.low
    assert rep.overall.outcome.ci_high == ref.confidence_interval.high
    assert (round(rep.overall.outcome.ci_low, 4), round(rep.overall.outcome.ci_high, 4)) == (0.8052, 0.9481)
    assert not rep.overall.outcome.statistically_tied
    # Precision pairs: the 43 cases with a non-empty gold set (tenure returns nothing when nothing is wanted).
    assert rep.overall.n_value == 43
    assert rep.overall.value is not None
    assert rep.overall.value.estimate == pytest.approx(0.9104, abs=1e-4)
    assert rep.overall.value.ci_low > 0.85
    assert [c.scope for c in rep.categories][:3] == [
        "Alias resolution",
        "Scope disambiguation",
        "Fuzzy matching and prefix guards",
    ]
    alias = rep.categories[0]
    assert (alias.n, alias.mcnemar.b, alias.mcnemar.c) == (23, 23, 0)
    # Holm over 13 categories: the smallest raw p (2^-22 for 23 wins) times 13.
    assert alias.holm_p == pytest.approx(13 * 2.0**-22)
    assert (rep.seed, rep.n_resamples, rep.alpha) == (SEED, 10_000, 0.05)


def test_mem0_vs_a_mem_identical_verdicts(pmb: PmbLoad) -> None:
    runs = _single(pmb)
    rep = compare_stats(runs["mem0"], runs["a-mem"], seed=SEED)
    m = rep.overall.mcnemar
    # Same 9 cases passed, same 68 failed: no discordant pair at all.
    assert (m.both_passed, m.b, m.c, m.both_failed, m.p_value) == (9, 0, 0, 68, 1.0)
    assert (rep.overall.outcome.ci_low, rep.overall.outcome.ci_high) == (0.0, 0.0)
    assert rep.overall.outcome.statistically_tied
    assert all(c.holm_p == 1.0 for c in rep.categories)
    # Precision differs by well under a percentage point, with an interval just above zero.
    p = rep.overall.value
    assert p is not None and rep.overall.n_value == 69
    assert p.estimate == pytest.approx(0.000622, abs=1e-6)
    assert 0 < p.ci_low < p.ci_high < 0.002
    frame = filter_pairs(paired_frame(runs["mem0"], runs["a-mem"]), PMB_TERMS, "differences")
    assert frame.empty


def test_paired_frame_and_filters(pmb: PmbLoad) -> None:
    runs = _single(pmb)
    frame = paired_frame(runs["gbrain"], runs["supermemory"])
    assert len(frame) == 77
    assert frame["outcome"].value_counts().to_dict() == {
        "both failed": 38,
        "A wins": 18,
        "both passed": 16,
        "B wins": 5,
    }
    assert len(filter_pairs(frame, PMB_TERMS, "differences")) == 23
    assert len(filter_pairs(frame, PMB_TERMS, "a_wins")) == 18
    assert filter_pairs(frame, PMB_TERMS, "b_wins")["case_id"].tolist() == [
        "happy-alias-match-kubernetes",
        "conflict-scope-disambiguation-redis-writing",
        "questions-pinned-active-only",
        "messy-compound-surfaces-two-beliefs",
        "multi-scope-code-writing-dedup-no-double-surface",
    ]
    assert len(filter_pairs(frame, PMB_TERMS, "both_fail")) == 38
    redis = filter_pairs(frame, PMB_TERMS, "all", "  REDIS ")
    assert len(redis) == 6
    # Matched by description only: the case id does not say redis.
    assert "relation-type-expands-participants" in redis["case_id"].tolist()
    assert filter_pairs(frame, PMB_TERMS, "b_wins", "redis")["case_id"].tolist() == [
        "conflict-scope-disambiguation-redis-writing"
    ]
    assert frame["turn_index"].isna().all()
    with pytest.raises(ValueError, match="filter"):
        filter_pairs(frame, PMB_TERMS, "ties")  # type: ignore[arg-type]


def test_text_search_is_literal() -> None:
    a = _run("a", [_case("x.1", True, None, desc="a (b"), _case("x21", False, None)])
    b = _run("b", [_case("x.1", True, None), _case("x21", True, None)])
    frame = paired_frame(a, b)
    assert filter_pairs(frame, PMB_TERMS, "all", "x.1")["case_id"].tolist() == ["x.1"]
    assert filter_pairs(frame, PMB_TERMS, "all", "(b")["case_id"].tolist() == ["x.1"]


def test_pairs_only_cases_both_ran_and_null_precision_left_out() -> None:
    a = _run(
        "a",
        [_case("c1", True, 1.0), _case("c2", True, None), _case("c3", False, 0.5, "C2"), _case("only-a", True, 1.0)],
    )
    b = _run("b", [_case("c3", True, 0.0, "C2"), _case("c2", False, 0.0), _case("c1", False, 0.25)])
    frame = paired_frame(a, b)
    assert frame["case_id"].tolist() == ["c1", "c2", "c3"]
    rep = compare_stats(a, b, seed=1, n_resamples=200, category_order=["C2", "C1"])
    assert rep.overall.n == 3
    assert (rep.overall.mcnemar.b, rep.overall.mcnemar.c) == (2, 1)
    # c2 has a null precision on A's side: only c1 and c3 pair, differences 0.75 and 0.5.
    assert rep.overall.n_value == 2
    assert rep.overall.value is not None and rep.overall.value.estimate == pytest.approx(0.625)
    assert [c.scope for c in rep.categories] == ["C2", "C1"]
    # Two categories: p(C2: b=0, c=1) = 1, p(C1: b=2, c=0) = 0.5 -> Holm 1.0 and 1.0.
    assert [c.holm_p for c in rep.categories] == [1.0, 1.0]
    table = stats_frame(rep)
    assert table["scope"].tolist() == ["all cases", "C2", "C1"]
    assert table.loc[0, "b"] == 2 and pd.isna(table.loc[0, "holm_p"])


def test_category_without_precision_pairs_has_none() -> None:
    a = _run("a", [_case("c1", True, None), _case("c2", False, None)])
    b = _run("b", [_case("c1", False, None), _case("c2", False, None)])
    rep = compare_stats(a, b, seed=0, n_resamples=100)
    assert rep.overall.value is None and rep.overall.n_value == 0
    assert stats_frame(rep)["precision_tied"].isna().all()


def test_different_suites_refused() -> None:
    a = _run("a", [_case("c1", True, None)])
    b = _run("b", [_case("c1", True, None)], benchmark="pmb-session")
    with pytest.raises(ValueError, match="different suites"):
        paired_frame(a, b)
    with pytest.raises(ValueError, match="no case in common"):
        compare_stats(a, _run("c", [_case("z", True, None)]), seed=0)


def test_case_detail_opens_one_case(pmb: PmbLoad) -> None:
    runs = _single(pmb)
    assert pmb.fixture is not None
    view = case_detail(runs["tenure"], runs["mem0"], pmb.fixture, "relation-expansion-respects-scope-filter")
    assert view.query == "auth redis failure modes"
    assert view.expectation.should_only_include == ("b-auth-depends-redis", "b-redis-code")
    assert view.expectation.must_exclude == ("b-redis-writing",)
    tenure, mem0 = view.outcomes
    assert tenure.passed and not mem0.passed
    assert set(tenure.tier("relevant").correct) == {"b-auth-depends-redis", "b-redis-code"}
    assert tenure.tier("relevant").unexpected == ()
    assert "b-redis-writing" in mem0.tier("relevant").forbidden
    assert "forbidden belief surfaced: b-redis-writing" in mem0.failures


def wtl(runs: Sequence[PmbRun], chosen: str) -> pd.DataFrame:
    """:func:`win_tie_loss` over runs in memory: their cases table and runs table."""
    return win_tie_loss(cases_table(tuple(runs)), runs_table(runs), chosen)


def test_win_tie_loss_tenure_single_turn(pmb: PmbLoad) -> None:
    single = [r for r in pmb.runs if r.identity.benchmark == "pmb-single-turn"]
    table = wtl(single, "tenure")
    assert len(table) == 12
    assert (table["losses"] == 0).all()
    row = table.set_index("other").loc["gbrain"]
    assert (row["wins"], row["ties_both_passed"], row["ties_both_failed"]) == (43, 34, 0)
    assert row["mcnemar_p"] == 2.0**-42
    assert (table["holm_p"] >= table["mcnemar_p"]).all()
    with pytest.raises(ValueError, match="several suites"):
        wtl(pmb.runs, "tenure")
    with pytest.raises(ValueError, match="no run"):
        wtl(single, "nobody")


def test_runs_of_separate_loads_pair_by_case_id() -> None:
    # Pairing goes by case id and turn, whatever the order in either run.
    a = _run("A", [_case("x", True, 1.0), _case("y", False, None), _case("only-a", True, None)])
    b = _run("B", [_case("z-only-b", True, None), _case("y", True, 0.5), _case("x", False, 0.0)])
    pairs = paired_cases(a, b)
    assert [(p.case_id, q.case_id) for p, q in pairs] == [("x", "x"), ("y", "y")]
    assert [(p.passed, q.passed) for p, q in pairs] == [(True, False), (False, True)]
    row = wtl([a, b], "A").iloc[0]
    assert (row["n"], row["wins"], row["losses"]) == (2, 1, 1)


def test_turns_pair_by_case_and_turn() -> None:
    turns_a = [replace(_case("s", True, None), turn_index=i) for i in (0, 1, 2)]
    turns_b = [replace(_case("s", i == 1, None), turn_index=i) for i in (2, 1)]
    a = _run("A", turns_a, "pmb-session")
    b = _run("B", turns_b, "pmb-session")
    pairs = paired_cases(a, b)
    assert [(p.turn_index, q.turn_index, q.passed) for p, q in pairs] == [(1, 1, True), (2, 2, False)]


def test_a_case_reported_twice_is_refused() -> None:
    a = _run("A", [_case("x", True, None), _case("x", False, None)])
    b = _run("B", [_case("x", True, None)])
    with pytest.raises(ValueError, match="appears twice"):
        paired_cases(a, b)


def test_win_tie_loss_same_counts_whatever_the_case_order(pmb: PmbLoad) -> None:
    runs = _single(pmb)
    me, other = runs["tenure"], runs["mem0"]
    shuffled = run_from_cases(other.identity, tuple(reversed(other.cases)), other.stated, other.ingestion)
    in_order = wtl([me, other], "tenure").drop(columns="other_run_id")
    reordered = wtl([me, shuffled], "tenure").drop(columns="other_run_id")
    pd.testing.assert_frame_equal(in_order, reordered)
    assert (in_order.loc[0, "wins"], in_order.loc[0, "losses"]) == (68, 0)


def test_paired_frame_matches_the_case_objects(pmb: PmbLoad) -> None:
    for benchmark in ("pmb-single-turn", "pmb-session"):
        runs = [r for r in pmb.runs if r.identity.benchmark == benchmark]
        for b in runs[1:]:
            frame = paired_frame(runs[0], b)
            pairs = paired_cases(runs[0], b)
            assert len(frame) == len(pairs)
            for (x, y), row in zip(pairs, frame.itertuples(index=False), strict=True):
                assert (row.case_id, row.label, row.category, row.description) == (
                    x.case_id,
                    x.label,
                    x.category,
                    x.description,
                )
                assert (None if pd.isna(row.turn_index) else row.turn_index) == x.turn_index
                assert (row.a_passed, row.b_passed, row.a_latency_ms, row.b_latency_ms) == (
                    x.passed,
                    y.passed,
                    x.latency_ms,
                    y.latency_ms,
                )
                for got, want in ((row.a_precision, x.precision), (row.b_recall, y.recall)):
                    assert (pd.isna(got) and want is None) or got == want


def test_verdict_tenure_vs_mem0_is_real(pmb: PmbLoad) -> None:
    runs = _single(pmb)
    v = verdict(compare_stats(runs["tenure"], runs["mem0"], seed=SEED))
    assert (v.n, v.a_count, v.b_count, v.leader, v.real) == (77, 77, 9, "tenure", True)
    assert verdict_sentence(v) == (
        "tenure passes 77 of 77 cases, mem0 9 of 77: tenure is better by 88.3 pp "
        "(95% interval +80.5 to +94.8 pp); McNemar p < 0.001 — a real difference."
    )
    # B leading: the interval is of B's gap, so it reads positive; names go through the formatter.
    flipped = verdict(compare_stats(runs["mem0"], runs["tenure"], seed=SEED))
    assert flipped.leader == "tenure" and flipped.leader_interval() == (v.gap.ci_low, v.gap.ci_high)
    assert verdict_sentence(flipped, lambda n: f"**{n}**").startswith(
        "**mem0** passes 9 of 77 cases, **tenure** 77 of 77: **tenure** is better by 88.3 pp (95% interval +80.5"
    )


def test_verdict_tie_not_real_and_borderline(pmb: PmbLoad) -> None:
    runs = _single(pmb)
    tie = verdict(compare_stats(runs["mem0"], runs["a-mem"], seed=SEED))
    assert tie.leader is None and not tie.real
    assert verdict_sentence(tie) == "mem0 passes 9 of 77 cases, a-mem 9 of 77: neither is better (McNemar p = 1)."
    a = _run("A", [_case(f"c{i}", i < 6, None) for i in range(12)])
    b = _run("B", [_case(f"c{i}", i < 4, None) for i in range(12)])
    chance = verdict(compare_stats(a, b, seed=SEED, n_resamples=2000))
    assert (chance.a_count, chance.b_count, chance.mcnemar.significant, chance.reality) == (6, 4, False, "No")
    assert verdict_sentence(chance) == (
        "A passes 6 of 12 cases, B 4 of 12: A is ahead by 16.7 pp (95% interval +0.0 to +41.7 pp), "
        "but McNemar p = 0.5 — not a real difference."
    )
    # Five discordant cases, all A's: the interval excludes zero, McNemar (p = 2/32) does not reach 0.05.
    five = _run("A", [_case(f"c{i}", i < 5, None) for i in range(12)])
    none = _run("B", [_case(f"c{i}", False, None) for i in range(12)])
    edge = verdict(compare_stats(five, none, seed=SEED, n_resamples=2000))
    assert not edge.real and not edge.gap.statistically_tied and edge.reality == "Borderline"
    assert verdict_sentence(edge).endswith("McNemar p = 0.0625 — borderline: McNemar p is not below 0.05.")


def test_intervals_as_text(pmb: PmbLoad) -> None:
    assert interval_text(0.805, 0.948) == "+80.5 to +94.8 pp"
    assert interval_text(-0.1, 0.05) == "-10.0 to +5.0 pp"
    assert interval_text(None, 0.1) == interval_text(float("nan"), 0.1) == "—"
    runs = _single(pmb)
    frame = stats_frame(compare_stats(runs["tenure"], runs["mem0"], seed=SEED))
    shown = with_intervals(frame, ("pass_rate", "precision"))
    cols = list(shown.columns)
    assert cols[cols.index("pass_rate_diff") + 1] == "pass_rate_interval"
    assert cols[cols.index("precision_diff") + 1] == "precision_interval"
    assert shown["pass_rate_interval"].iloc[0] == "+80.5 to +94.8 pp"
    assert list(frame.columns) == [c for c in cols if not c.endswith("_interval")]  # the input is untouched


def test_outcome_table_holds_the_paired_frame_numbers(pmb: PmbLoad) -> None:
    runs = _single(pmb)
    frame = paired_frame(runs["gbrain"], runs["supermemory"])
    table = outcome_table(runs["gbrain"], runs["supermemory"])
    assert list(table.columns) == ["item", "category", "a", "b", "a_value", "b_value"]
    assert table["item"].is_unique and len(table) == len(frame) == 77
    assert table["category"].tolist() == frame["category"].tolist()
    assert (table["a"].tolist(), table["b"].tolist()) == (frame["a_passed"].tolist(), frame["b_passed"].tolist())
    pd.testing.assert_series_equal(table["a_value"], frame["a_precision"], check_names=False)
    pd.testing.assert_series_equal(table["b_value"], frame["b_precision"], check_names=False)


def test_win_tie_loss_refuses_a_case_reported_twice() -> None:
    a = _run("A", [_case("x", True, None), _case("x", False, None)])
    b = _run("B", [_case("x", True, None)])
    with pytest.raises(ValueError, match="appears twice"):
        wtl([a, b], "B")


def test_win_tie_loss_counts_equal_the_paired_cases(pmb: PmbLoad) -> None:
    # Oracle: the case objects of each pair, counted one by one.
    for benchmark in ("pmb-single-turn", "pmb-session"):
        runs = [r for r in pmb.runs if r.identity.benchmark == benchmark]
        me = runs[2]
        table = wtl(runs, me.identity.display_name).set_index("other_run_id")
        for other in runs:
            if other is me:
                continue
            pairs = paired_cases(me, other)
            row = table.loc[other.identity.run_id]
            assert row["n"] == len(pairs)
            assert row["wins"] == sum(p.passed and not q.passed for p, q in pairs)
            assert row["losses"] == sum(q.passed and not p.passed for p, q in pairs)
            assert row["ties_both_passed"] == sum(p.passed and q.passed for p, q in pairs)
