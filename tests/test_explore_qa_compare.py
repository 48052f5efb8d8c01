"""QA comparison: pairing by question id, the per-question frame, filters, statistics, one question opened."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _data import SHARED_DATA, require
from scipy.stats import binomtest

from memeval_core.explore.paired import PairedReport, filter_pairs, stats_frame, verdict, verdict_sentence
from memeval_core.explore.qa_compare import (
    QA_TERMS,
    check_pairable,
    default_pair,
    outcome_table,
    paired_questions,
    qa_compare_stats,
    qa_paired_frame,
    qa_question_detail,
)
from memeval_core.qa.ingest import LoadedRun, load_qa
from memeval_core.qa.models import QaRun
from memeval_core.stats.bootstrap import paired_bootstraps

SEED = 20260627


def q(
    qid: str, cat: str, score: float | None, *, scale: str = "binary", answer: str | None = "x", **kw: Any
) -> dict[str, Any]:
    """A question record with one verdict (none when ``score`` is None)."""
    verdicts = [] if score is None else [{"judge": "j1", "score": score, "scale": scale}]
    return {
        "benchmark": kw.pop("benchmark", "locomo"),
        "question_id": qid,
        "question": f"question {qid}?",
        "category": cat,
        "category_name": {"1": "multi_hop", "2": "temporal"}.get(cat),
        "gold_answer": f"gold {qid}",
        "answer": answer,
        "verdicts": verdicts,
        **kw,
    }


def loaded(
    name: str, questions: list[dict[str, Any]], *, benchmark: str = "locomo", adv: bool | None = False
) -> LoadedRun:
    """A scored run built from hand-made question records."""
    run = QaRun.model_validate(
        {
            "run": {"benchmark": benchmark, "system": name, "includes_adversarial": adv, "source_file": f"{name}.json"},
            "questions": [{**x, "benchmark": benchmark} for x in questions],
        }
    )
    return LoadedRun.of(run, f"{name}-id", name)


@pytest.fixture
def pair() -> tuple[LoadedRun, LoadedRun]:
    """A and B on six shared questions, plus one question each alone and one unscored question.

    q1..q3 (category 1): A right on all three, B right on q1 only -> b = 2.
    q4..q6 (category 2): A wrong on q4 (no answer), q5 (rubric 2/5 = 0.4) and right on q6 (rubric 4/5);
    B right on q4, wrong on q5, right on q6 -> c = 1, both wrong 1 (q5), both right 2 (q1, q6).
    """
    a = loaded(
        "A",
        [
            q("q1", "1", 1),
            q("q2", "1", 1),
            q("q3", "1", 1),
            q("q4", "2", 1, answer=None),
            q("q5", "2", 2, scale="rubric-0-5"),
            q("q6", "2", 4, scale="rubric-0-5"),
            q("only-a", "1", 1),
            q("q7", "5", None, scored=False),
        ],
    )
    b = loaded(
        "B",
        [
            q("q6", "2", 5, scale="rubric-0-5"),
            q("q5", "2", 0),
            q("q4", "2", 1),
            q("q3", "1", 0),
            q("q2", "1", 0),
            q("q1", "1", 1),
            q("only-b", "2", 0),
            q("q7", "5", None, scored=False),
        ],
    )
    return a, b


def test_refuses_other_benchmark_or_category_5_difference() -> None:
    a = loaded("A", [q("q1", "1", 1)])
    other = loaded("B", [q("q1", "1", 1)], benchmark="longmemeval-s", adv=None)
    with pytest.raises(ValueError, match=r"A\.json \(locomo\) with B\.json \(longmemeval-s\): different benchmarks"):
        check_pairable(a, other)
    with_5 = loaded("C", [q("q1", "1", 1)], adv=True)
    with pytest.raises(ValueError, match=r"A does not score category 5 .* C scores it"):
        qa_compare_stats(a, with_5, seed=SEED)
    with pytest.raises(ValueError, match="no scored question in common"):
        qa_compare_stats(a, loaded("D", [q("other", "1", 1)]), seed=SEED)


def test_paired_frame_in_a_order_with_failures_counted(pair: tuple[LoadedRun, LoadedRun]) -> None:
    a, b = pair
    df = qa_paired_frame(a, b)
    assert list(df["question_id"]) == ["q1", "q2", "q3", "q4", "q5", "q6"]
    assert list(df["outcome"]) == ["both correct", "A wins", "A wins", "B wins", "both wrong", "both correct"]
    assert list(df["a_score"]) == pytest.approx([1, 1, 1, 0, 0.4, 0.8])
    assert list(df["b_score"]) == pytest.approx([1, 0, 0, 1, 0, 1])
    assert df.loc[3, "a_failure"] == "no answer" and df["a_answer"].isna()[3]
    assert list(df["category_name"][:2]) == ["multi_hop", "multi_hop"]
    pairs = paired_questions(a, b)
    assert (pairs.only_a, pairs.only_b) == (1, 1)


def test_filters_match_the_pmb_compare(pair: tuple[LoadedRun, LoadedRun]) -> None:
    df = qa_paired_frame(*pair)
    assert list(filter_pairs(df, QA_TERMS, "differences")["question_id"]) == ["q2", "q3", "q4"]
    assert list(filter_pairs(df, QA_TERMS, "a_wins")["question_id"]) == ["q2", "q3"]
    assert list(filter_pairs(df, QA_TERMS, "b_wins")["question_id"]) == ["q4"]
    assert list(filter_pairs(df, QA_TERMS, "both_fail")["question_id"]) == ["q5"]
    assert list(filter_pairs(df, QA_TERMS, "all", "Q6")["question_id"]) == ["q6"]
    assert list(filter_pairs(df, QA_TERMS, "a_wins", "question q3")["question_id"]) == ["q3"]
    assert list(filter_pairs(df, QA_TERMS, "all")) == list(df.columns)
    with pytest.raises(ValueError, match="filter must be one of"):
        filter_pairs(df, QA_TERMS, "nope")  # type: ignore[arg-type]


def test_statistics_by_hand(pair: tuple[LoadedRun, LoadedRun]) -> None:
    a, b = pair
    rep = qa_compare_stats(a, b, seed=SEED, n_resamples=2000)
    m = rep.overall.mcnemar
    assert (m.n, m.both_passed, m.b, m.c, m.both_failed) == (6, 2, 2, 1, 1)
    # min(b, c) = 1 of 3 discordant: p = 2 * (1 + 3) / 8 = 1.
    assert m.p_value == 1.0
    assert (rep.only_a, rep.only_b) == (1, 1)
    assert rep.overall.outcome.estimate == pytest.approx((4 - 3) / 6)
    assert rep.overall.value.estimate == pytest.approx((4.2 - 3.0) / 6)
    # Same draw as a paired bootstrap of the same arrays alone.
    ref = paired_bootstraps([([1, 1, 1, 0, 0.4, 0.8], [1, 0, 0, 1, 0, 1])], seed=SEED, n_resamples=2000)[0]
    assert (rep.overall.value.ci_low, rep.overall.value.ci_high) == (ref.ci_low, ref.ci_high)
    cat1, cat2 = rep.categories
    assert (cat1.scope, cat1.category, cat1.n, cat1.mcnemar.b, cat1.mcnemar.c) == ("1 multi_hop", "1", 3, 2, 0)
    assert cat1.mcnemar.p_value == 0.5  # 2 * 1/4
    # Category 1: A - B = 1, 0, 0 correct... differences 0, 1, 1 -> estimate 2/3.
    assert cat1.outcome.estimate == pytest.approx(2 / 3)
    assert (cat2.scope, cat2.mcnemar.b, cat2.mcnemar.c, cat2.mcnemar.p_value) == ("2 temporal", 0, 1, 1.0)
    # Holm over (0.5, 1.0): 2 * 0.5 = 1, max(1, 1 * 1) = 1.
    assert (cat1.holm_p, cat2.holm_p) == (1.0, 1.0)
    assert rep.overall.holm_p is None
    frame = stats_frame(rep)
    assert list(frame["scope"]) == ["all questions", "1 multi_hop", "2 temporal"]
    assert list(frame[["b", "c", "both_correct", "both_wrong"]].iloc[0]) == [2, 1, 2, 1]
    assert frame["accuracy_tied"].iloc[0]


def test_constant_difference_gives_a_point_interval_not_tied() -> None:
    a = loaded("A", [q(f"q{i}", "1", 1) for i in range(5)])
    b = loaded("B", [q(f"q{i}", "1", 0) for i in range(5)])
    rep = qa_compare_stats(a, b, seed=1, n_resamples=100, method="bca")
    s = rep.overall
    assert (s.outcome.ci_low, s.outcome.ci_high) == (1.0, 1.0)
    assert not s.outcome.statistically_tied and s.value is not None and not s.value.statistically_tied
    assert s.mcnemar.p_value == 2 / 32
    assert "BCa" in rep.interval_method and rep.seed == 1 and rep.n_resamples == 100


def test_question_detail_has_every_verdict(pair: tuple[LoadedRun, LoadedRun]) -> None:
    view = qa_question_detail(*pair, "q5")
    assert (view.question, view.gold_answer, view.category, view.category_name) == (
        "question q5?",
        "gold q5",
        "2",
        "temporal",
    )
    assert (view.a.correct, round(view.a.score, 9), view.b.correct) == (False, 0.4, False)
    assert view.a.verdicts.to_dict("records") == [
        {
            "judge": "j1",
            "score": 2.0,
            "scale": "rubric-0-5",
            "rescaled": 0.4,
            "passes": False,
            "model": None,
            "label": None,
        }
    ]
    assert qa_question_detail(*pair, "q4").a.failure == "no answer"
    with pytest.raises(ValueError, match="'only-a' is not scored in both"):
        qa_question_detail(*pair, "only-a")


def test_default_pair_skips_runs_without_a_comparable_partner() -> None:
    alone = loaded("alone", [q("q1", "1", 1)], adv=True)
    best = loaded("best", [q("q1", "1", 1), q("q2", "1", 1)])
    second = loaded("second", [q("q1", "1", 1), q("q2", "1", 0)])
    third = loaded("third", [q("q1", "1", 0)])
    a, b = default_pair([third, alone, second, best]) or (None, None)
    assert (a, b) == (best, second)
    assert default_pair([alone, best]) is None


# --- Real public data ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_runs() -> dict[str, LoadedRun]:
    """Every QA run of ../shared/data by ``<benchmark>|<display name>``."""
    require(SHARED_DATA / "memobase")
    return {f"{r.meta.benchmark}|{r.display_name}": r for r in load_qa(SHARED_DATA).runs}


def real_report(runs: dict[str, LoadedRun], a: str, b: str) -> tuple[PairedReport, tuple[int, ...]]:
    """A against B at the page's defaults, and the overall ``(n, both correct, b, c, both wrong)``."""
    rep = qa_compare_stats(runs[a], runs[b], seed=SEED, n_resamples=10_000)
    m = rep.overall.mcnemar
    return rep, (m.n, m.both_passed, m.b, m.c, m.both_failed)


def test_memobase_0710_vs_0503(real_runs: dict[str, LoadedRun]) -> None:
    rep, counts = real_report(
        real_runs, "locomo|memobase (memobase_eval_0710_3000)", "locomo|memobase (memobase_eval_0503_3000)"
    )
    m = rep.overall.mcnemar
    # 1,167 and 1,092 of 1,540 correct (the importer tests' totals): 961 + 206 and 961 + 131.
    assert counts == (1540, 961, 206, 131, 242)
    assert m.p_value == pytest.approx(binomtest(131, 337, 0.5).pvalue, rel=1e-9)
    assert f"{m.p_value:.3g}" == "5.2e-05"
    acc = rep.overall.outcome
    assert acc.estimate == pytest.approx(75 / 1540)
    assert (round(acc.ci_low, 4), round(acc.ci_high, 4)) == (0.0253, 0.0721)
    assert not acc.statistically_tied
    frame = stats_frame(rep)
    assert list(frame["scope"]) == ["all questions", "1 multi_hop", "2 temporal", "3 open_domain", "4 single_hop"]
    assert list(frame["n"]) == [1540, 282, 321, 96, 841]
    open_domain = frame[frame["category"] == "3"].iloc[0]
    assert (open_domain["b"], open_domain["c"], bool(open_domain["accuracy_tied"])) == (6, 11, True)
    single_hop = frame[frame["category"] == "4"].iloc[0]
    assert single_hop["holm_p"] == pytest.approx(4 * binomtest(72, 189, 0.5).pvalue)
    v = verdict(rep)
    assert (v.a_count, v.b_count, v.real) == (1167, 1092, True)
    assert verdict_sentence(v) == (
        "memobase (memobase_eval_0710_3000) answers 1,167 of 1,540 questions correctly, "
        "memobase (memobase_eval_0503_3000) 1,092 of 1,540: memobase (memobase_eval_0710_3000) is better by 4.9 pp "
        "(95% interval +2.5 to +7.2 pp); McNemar p < 0.001 — a real difference."
    )


def test_longmemeval_s_cognitive_memory_vs_naive_rag_is_tied(real_runs: dict[str, LoadedRun]) -> None:
    rep, counts = real_report(real_runs, "longmemeval-s|cognitive_memory", "longmemeval-s|naive_rag")
    m = rep.overall.mcnemar
    assert counts == (500, 292, 71, 58, 79)
    assert m.p_value == pytest.approx(binomtest(58, 129, 0.5).pvalue, rel=1e-9)
    assert not m.significant
    s = rep.overall.value
    assert s.estimate == pytest.approx(0.026)
    assert (round(s.ci_low, 4), round(s.ci_high, 4)) == (-0.02, 0.07)
    assert s.statistically_tied
    ssa = next(c for c in rep.categories if c.category == "single-session-assistant")
    assert (ssa.n, ssa.mcnemar.b, ssa.mcnemar.c) == (56, 1, 13)
    assert ssa.mcnemar.p_value == 2 * (1 + 14) / 2**14  # C(14,0) + C(14,1)
    assert ssa.holm_p == pytest.approx(5 * ssa.mcnemar.p_value)
    assert not ssa.outcome.statistically_tied
    v = verdict(rep)
    assert v.leader == "cognitive_memory" and not v.real
    assert verdict_sentence(v).endswith("McNemar p = 0.291 — not a real difference.")


def test_real_runs_differing_in_category_5_are_refused(real_runs: dict[str, LoadedRun]) -> None:
    with pytest.raises(ValueError, match="category 5"):
        qa_paired_frame(real_runs["locomo|supermemory"], real_runs["locomo|zep"])
    assert np.isclose(real_runs["locomo|zep"].score.accuracy or 0, 1208 / 1540)


def test_outcome_table_holds_the_paired_frame_numbers(pair: tuple[LoadedRun, LoadedRun]) -> None:
    frame = qa_paired_frame(*pair)
    table = outcome_table(paired_questions(*pair))
    assert list(table.columns) == ["item", "category", "a", "b", "a_value", "b_value"]
    assert table["item"].tolist() == frame["question_id"].tolist()
    assert table["category"].tolist() == frame["category"].tolist()
    assert (table["a"].tolist(), table["b"].tolist()) == (frame["a_correct"].tolist(), frame["b_correct"].tolist())
    assert (table["a_value"].tolist(), table["b_value"].tolist()) == (
        frame["a_score"].tolist(),
        frame["b_score"].tolist(),
    )
