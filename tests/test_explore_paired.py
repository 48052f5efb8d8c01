"""The one paired comparison: a paired outcome table in, one report out; many pairs at once; the same numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from memeval_core.explore.compare import PMB_TERMS
from memeval_core.explore.paired import compare_pairs, paired_stats, stats_frame, verdict
from memeval_core.explore.qa_compare import QA_TERMS
from memeval_core.stats.bootstrap import paired_bootstraps
from memeval_core.stats.mcnemar import mcnemar_exact


def _table(seed: int, n: int, categories: tuple[str | None, ...] = ("x", "y", None)) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a_value = rng.random(n)
    b_value = np.clip(a_value - 0.1 + rng.normal(scale=0.2, size=n), 0, 1)
    a_value[rng.random(n) < 0.2] = np.nan
    return pd.DataFrame(
        {
            "item": [f"i{k}" for k in range(n)],
            "category": pd.Series([categories[k % len(categories)] for k in range(n)], dtype=object),
            "a": rng.random(n) < 0.7,
            "b": rng.random(n) < 0.5,
            "a_value": a_value,
            "b_value": b_value,
        }
    )


def test_every_scope_is_the_pair_by_pair_computation() -> None:
    table = _table(1, 60)
    rep = paired_stats(table, a="A", b="B", benchmark="suite", terms=QA_TERMS, seed=4, n_resamples=999)
    assert [s.scope for s in (rep.overall, *rep.categories)] == ["all questions", "x", "y"]
    assert [s.category for s in (rep.overall, *rep.categories)] == [None, "x", "y"]
    for s in (rep.overall, *rep.categories):
        rows = table if s.category is None else table[table["category"] == s.category]
        assert s.mcnemar == mcnemar_exact(rows["a"].to_numpy(), rows["b"].to_numpy())
        share = paired_bootstraps(
            [(rows["a"].to_numpy(float), rows["b"].to_numpy(float))], seed=4, n_resamples=999,
            statistics=[QA_TERMS.outcome_statistic],
        )[0]  # fmt: skip
        assert s.outcome == share  # bit for bit: 0/1 outcomes resampled through counts give the gathered means
        both = rows.dropna(subset=["a_value", "b_value"])
        assert s.n_value == len(both) < len(rows)
        value = paired_bootstraps(
            [(both["a_value"], both["b_value"])], seed=4, n_resamples=999, statistics=[QA_TERMS.value_statistic]
        )[0]
        assert s.value == value
    # Holm over the two categories only; the overall scope is not adjusted.
    assert rep.overall.holm_p is None
    raw = [c.mcnemar.p_value for c in rep.categories]
    assert [c.holm_p for c in rep.categories] == [min(1.0, max(2 * min(raw), p)) for p in raw]


def test_category_order_labels_and_a_scope_without_values() -> None:
    table = _table(2, 30, ("b", "a"))
    table.loc[table["category"] == "a", "a_value"] = np.nan
    rep = paired_stats(
        table, a="A", b="B", benchmark="s", terms=PMB_TERMS, seed=0, n_resamples=100, category_order=("a", "z"),
        category_labels={"a": "a label"},
    )  # fmt: skip
    assert [(c.scope, c.category) for c in rep.categories] == [("a label", "a"), ("b", "b")]
    assert rep.categories[0].value is None and rep.categories[0].n_value == 0
    frame = stats_frame(rep)
    assert list(frame.columns[:3]) == ["scope", "n", "both_passed"] and "n_precision" in frame.columns
    assert pd.isna(frame.loc[1, "precision_diff"]) and pd.isna(frame.loc[1, "precision_tied"])
    qa = stats_frame(paired_stats(table, a="A", b="B", benchmark="s", terms=QA_TERMS, seed=0, n_resamples=100))
    assert list(qa.columns[:4]) == ["scope", "category", "n", "both_correct"] and "n_score" not in qa.columns
    assert verdict(rep).items == "cases" and verdict(rep).how == ""
    with pytest.raises(ValueError, match="no case in common"):
        paired_stats(table.iloc[:0], a="A", b="B", benchmark="s", terms=PMB_TERMS, seed=0)


def test_many_pairs_are_each_pair_alone_and_holm_across_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    import memeval_core.stats.bootstrap as bootstrap

    monkeypatch.setattr(bootstrap, "COUNT_FROM_ROWS", 2)  # the six pairs' 0/1 outcomes resampled through counts
    rng = np.random.default_rng(8)
    runs = rng.random((4, 50)) < np.array([[0.3], [0.5], [0.6], [0.9]])
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    # Rows of a pair need not be together; pairs keep the order they are first met.
    table = pd.DataFrame(
        {
            "pair": np.tile([f"{i}-{j}" for i, j in pairs], 50),
            "a": np.stack([runs[i] for i, _ in pairs]).T.ravel(),
            "b": np.stack([runs[j] for _, j in pairs]).T.ravel(),
        }
    )
    out = compare_pairs(table, PMB_TERMS, seed=3, n_resamples=500)
    assert out["pair"].tolist() == [f"{i}-{j}" for i, j in pairs]
    for (i, j), row in zip(pairs, out.itertuples(index=False), strict=True):
        m = mcnemar_exact(runs[i], runs[j])
        assert (row.n, row.both_passed, row.b, row.c, row.both_failed, row.mcnemar_p) == (
            50, m.both_passed, m.b, m.c, m.both_failed, m.p_value,
        )  # fmt: skip
        alone = paired_bootstraps([(runs[i].astype(float), runs[j].astype(float))], seed=3, n_resamples=500)[0]
        assert (row.pass_rate_diff, row.pass_rate_ci_low, row.pass_rate_ci_high, row.pass_rate_se) == (
            alone.estimate, alone.ci_low, alone.ci_high, alone.standard_error,
        )  # fmt: skip
        ref = stats.bootstrap(
            (runs[i].astype(float) - runs[j].astype(float),), np.mean, n_resamples=500, method="percentile",
            rng=np.random.default_rng(3),
        )  # fmt: skip
        assert (row.pass_rate_ci_low, row.pass_rate_ci_high) == tuple(ref.confidence_interval)
    raw = out["mcnemar_p"].to_numpy()
    assert (out["holm_p"].to_numpy() >= raw).all() and out["holm_p"].min() == min(1.0, 6 * raw.min())
    tests_only = compare_pairs(table, QA_TERMS)
    assert list(tests_only.columns) == ["pair", "n", "both_correct", "b", "c", "both_wrong", "mcnemar_p", "holm_p"]
    assert compare_pairs(table.iloc[:0], PMB_TERMS, seed=1).empty


def test_a_table_without_values_has_outcome_statistics_only() -> None:
    table = _table(5, 24).drop(columns=["a_value", "b_value"])
    rep = paired_stats(table, a="A", b="B", benchmark="s", terms=PMB_TERMS, seed=2, n_resamples=300)
    assert all(s.value is None and s.n_value == 0 for s in (rep.overall, *rep.categories))
    assert rep.overall.outcome == paired_bootstraps(
        [(table["a"].to_numpy(float), table["b"].to_numpy(float))], seed=2, n_resamples=300,
        statistics=[PMB_TERMS.outcome_statistic],
    )[0]  # fmt: skip
    assert stats_frame(rep)["precision_diff"].isna().all()
