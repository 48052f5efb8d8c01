"""All-pairs McNemar and paired bootstrap equal the pair-by-pair functions with the same seed."""

from __future__ import annotations

import itertools
from math import comb

import numpy as np
import pytest

from memeval_core.stats.all_pairs import all_pairs, mcnemar_p_values, resample_counts
from memeval_core.stats.bootstrap import paired_bootstrap
from memeval_core.stats.mcnemar import mcnemar_exact, mcnemar_exact_p


def _runs(seed: int, runs: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Scores in [0, 1] with a per-run skill and per-item difficulty, and passes = score >= 0.5."""
    rng = np.random.default_rng(seed)
    skill = rng.uniform(0.2, 0.8, size=(runs, 1))
    difficulty = rng.normal(scale=0.2, size=(1, n))
    scores = np.clip(skill - difficulty + rng.normal(scale=0.25, size=(runs, n)), 0, 1)
    return scores, scores >= 0.5


def test_resample_counts_count_every_index() -> None:
    idx = np.array([[0, 0, 2], [1, 2, 1]])
    assert resample_counts(idx, 3).tolist() == [[2.0, 0.0, 1.0], [0.0, 2.0, 1.0]]


def test_mcnemar_p_values_match_the_exact_integer_sum() -> None:
    b = np.array([0, 0, 1, 3, 10, 25, 40, 120, 700, 5])
    c = np.array([0, 4, 1, 9, 2, 25, 80, 60, 650, 0])
    got = mcnemar_p_values(b, c)
    want = [mcnemar_exact_p(int(x), int(y)) for x, y in zip(b, c, strict=True)]
    # The incomplete beta function is accurate to a few 1e-12 relative (m = 1350 here): far below any alpha.
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=0)
    # Hand check: b=3, c=9 -> 2 * (C(12,0)+C(12,1)+C(12,2)+C(12,3)) / 2^12.
    assert got[3] == pytest.approx(2 * sum(comb(12, i) for i in range(4)) / 2**12, rel=1e-13)
    assert got[0] == 1.0 and got[5] == 1.0


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_every_pair_equals_the_pair_by_pair_functions(method: str) -> None:
    scores, passed = _runs(11, runs=6, n=57)
    rep = all_pairs(scores, passed, seed=2026, n_resamples=3000, alpha=0.1, method=method)  # type: ignore[arg-type]
    assert rep.n_pairs == 15 and rep.n_items == 57
    for a, b in itertools.combinations(range(6), 2):
        ref = paired_bootstrap(scores[a], scores[b], seed=2026, n_resamples=3000, alpha=0.1, method=method)  # type: ignore[arg-type]
        got = rep.bootstrap(a, b)
        assert got.method == ref.method and (got.seed, got.n_resamples, got.alpha, got.n) == (2026, 3000, 0.1, 57)
        assert got.estimate == pytest.approx(ref.estimate, rel=1e-12, abs=1e-15)
        assert got.ci_low == pytest.approx(ref.ci_low, rel=1e-12, abs=1e-14)
        assert got.ci_high == pytest.approx(ref.ci_high, rel=1e-12, abs=1e-14)
        assert got.standard_error == pytest.approx(ref.standard_error, rel=1e-10)
        m_ref = mcnemar_exact(passed[a].tolist(), passed[b].tolist(), alpha=0.1)
        m_got = rep.mcnemar(a, b)
        assert (m_got.both_passed, m_got.b, m_got.c, m_got.both_failed) == (
            m_ref.both_passed,
            m_ref.b,
            m_ref.c,
            m_ref.both_failed,
        )
        assert m_got.p_value == pytest.approx(m_ref.p_value, rel=1e-10)
        assert m_got.pass_rate_difference == m_ref.pass_rate_difference
        assert m_got.significant == m_ref.significant


def test_pass_rates_are_bit_identical() -> None:
    # 0/1 scores: sums are exact integers, so the replicates, and so the interval, are the same floats.
    _, passed = _runs(5, runs=4, n=200)
    x = passed.astype(float)
    rep = all_pairs(x, passed, seed=9, n_resamples=2000)
    for a, b in itertools.combinations(range(4), 2):
        ref = paired_bootstrap(x[a], x[b], seed=9, n_resamples=2000)
        got = rep.bootstrap(a, b)
        assert (got.estimate, got.ci_low, got.ci_high) == (ref.estimate, ref.ci_low, ref.ci_high)


def test_constant_differences_give_point_intervals_and_labels_name_pairs() -> None:
    scores = np.array([[1.0, 0.0, 1.0], [0.0, -1.0, 0.0], [1.0, 0.0, 1.0]])
    passed = np.array([[1, 0, 1], [0, 0, 0], [1, 0, 1]])
    rep = all_pairs(scores, passed, seed=1, n_resamples=50, method="bca", labels=["x", "y", "z"])
    xy = rep.bootstrap(0, 1)
    assert (xy.estimate, xy.ci_low, xy.ci_high) == (1.0, 1.0, 1.0)
    assert xy.statistic == "mean difference (x - y)"
    xz = rep.bootstrap(0, 2)
    assert (xz.ci_low, xz.ci_high) == (0.0, 0.0) and xz.statistically_tied
    assert rep.mcnemar(0, 2).p_value == 1.0
    assert rep.mcnemar(0, 1).b == 2 and rep.mcnemar(0, 1).c == 0
    assert rep.p_holm.shape == (3,)
    assert [rep.index(a, b) for a, b in [(0, 1), (0, 2), (1, 2)]] == [0, 1, 2]


def test_bad_input_is_refused() -> None:
    scores, passed = _runs(1, runs=3, n=10)
    with pytest.raises(ValueError, match="at least 2 runs"):
        all_pairs(scores[:1], passed[:1], seed=0)
    with pytest.raises(ValueError, match="shape"):
        all_pairs(scores, passed[:, :5], seed=0)
    with pytest.raises(ValueError, match="non-finite"):
        all_pairs(np.where(scores > 0.5, np.nan, scores), passed, seed=0)
    with pytest.raises(ValueError, match="0/1"):
        all_pairs(scores, scores, seed=0)
    with pytest.raises(ValueError, match="alpha"):
        all_pairs(scores, passed, seed=0, alpha=1.5)
    with pytest.raises(ValueError, match="labels"):
        all_pairs(scores, passed, seed=0, labels=["a"])
    rep = all_pairs(scores, passed, seed=0, n_resamples=10)
    with pytest.raises(ValueError, match="a < b"):
        rep.index(2, 1)
