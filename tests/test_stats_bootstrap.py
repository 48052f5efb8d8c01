"""Paired bootstrap intervals: equal to scipy's for the same seed, degenerate and bad input handled."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from memeval_core.stats.bootstrap import paired_bootstraps


def _data(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.uniform(size=n)
    b = np.clip(a - 0.1 + rng.normal(scale=0.2, size=n), 0, 1)
    return a, b


@pytest.mark.parametrize(("seed", "n", "n_resamples"), [(0, 10, 999), (7, 77, 5000), (20260627, 43, 10_000)])
@pytest.mark.parametrize(("method", "scipy_method"), [("percentile", "percentile"), ("bca", "BCa")])
def test_equals_scipy_with_same_seed(seed: int, n: int, n_resamples: int, method: str, scipy_method: str) -> None:
    # Same index matrix as scipy (one rng.integers(0, n, (n_resamples, n)) call, no batching): exact agreement.
    a, b = _data(seed + 1, n)
    rep = paired_bootstraps([(a, b)], seed=seed, n_resamples=n_resamples, alpha=0.05, method=method)[0]  # type: ignore[arg-type]
    ref = stats.bootstrap(
        (a - b,),
        np.mean,
        n_resamples=n_resamples,
        method=scipy_method,
        rng=np.random.default_rng(seed),
        vectorized=True,
        confidence_level=0.95,
    )
    assert rep.ci_low == pytest.approx(ref.confidence_interval.low, rel=1e-12, abs=1e-15)
    assert rep.ci_high == pytest.approx(ref.confidence_interval.high, rel=1e-12, abs=1e-15)
    assert rep.standard_error == pytest.approx(ref.standard_error, rel=1e-12)
    assert rep.estimate == pytest.approx(float(np.mean(a - b)))
    assert (rep.seed, rep.n_resamples, rep.alpha, rep.n) == (seed, n_resamples, 0.05, n)


def test_binary_pass_rate_difference_equals_scipy() -> None:
    a = np.array([1, 1, 1, 0, 1, 0, 1, 1, 0, 1] * 5, dtype=float)
    b = np.array([0, 1, 0, 0, 1, 0, 0, 1, 0, 0] * 5, dtype=float)
    rep = paired_bootstraps([(a, b)], seed=3, n_resamples=4000)[0]
    ref = stats.bootstrap((a - b,), np.mean, n_resamples=4000, method="percentile", rng=np.random.default_rng(3))
    assert (rep.ci_low, rep.ci_high) == (ref.confidence_interval.low, ref.confidence_interval.high)
    assert rep.estimate == pytest.approx(0.4)
    assert not rep.statistically_tied


def test_constant_difference_gives_point_interval() -> None:
    rep = paired_bootstraps([([1.0, 1.0, 1.0], [0.0, 0.0, 0.0])], seed=1, n_resamples=100)[0]
    assert (rep.estimate, rep.ci_low, rep.ci_high) == (1.0, 1.0, 1.0)
    assert not rep.statistically_tied
    same = paired_bootstraps([([0.5, 0.2], [0.5, 0.2])], seed=1, n_resamples=100, method="bca")[0]
    assert (same.ci_low, same.ci_high) == (0.0, 0.0)
    assert same.statistically_tied


def test_tied_when_interval_includes_zero() -> None:
    a = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    b = [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    rep = paired_bootstraps([(a, b)], seed=11, n_resamples=2000)[0]
    assert rep.estimate == 0.0
    assert rep.ci_low < 0 < rep.ci_high
    assert rep.statistically_tied


def test_seed_reproducible_and_matters() -> None:
    a, b = _data(5, 30)
    r1 = paired_bootstraps([(a, b)], seed=42, n_resamples=500)[0]
    r2 = paired_bootstraps([(a, b)], seed=42, n_resamples=500)[0]
    r3 = paired_bootstraps([(a, b)], seed=43, n_resamples=500)[0]
    assert (r1.ci_low, r1.ci_high) == (r2.ci_low, r2.ci_high)
    assert (r1.ci_low, r1.ci_high) != (r3.ci_low, r3.ci_high)


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        paired_bootstraps([([1.0, 2.0], [1.0])], seed=0)[0]
    with pytest.raises(ValueError, match="no paired cases"):
        paired_bootstraps([([], [])], seed=0)[0]
    with pytest.raises(ValueError, match="non-finite"):
        paired_bootstraps([([1.0, float("nan")], [1.0, 2.0])], seed=0)[0]
    with pytest.raises(ValueError, match="alpha"):
        paired_bootstraps([([1.0], [0.0])], seed=0, alpha=0)[0]
    with pytest.raises(ValueError, match="n_resamples"):
        paired_bootstraps([([1.0], [0.0])], seed=0, n_resamples=0)[0]
    with pytest.raises(ValueError, match="method"):
        paired_bootstraps([([1.0], [0.0])], seed=0, method="basic")[0]  # type: ignore[arg-type]


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_drawing_in_blocks_gives_the_one_shot_result(method: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import memeval_core.stats.bootstrap as bootstrap

    rng = np.random.default_rng(5)
    a, b = rng.random(301), rng.random(301)
    monkeypatch.setattr(bootstrap, "_BLOCK_VALUES", 10**12)
    one_shot = bootstrap.paired_bootstraps([(a, b)], seed=9, n_resamples=2_001, method=method)[0]  # type: ignore[arg-type]
    monkeypatch.setattr(bootstrap, "_BLOCK_VALUES", 301 * 7)  # blocks of 7 rows, the last one shorter
    assert bootstrap.paired_bootstraps([(a, b)], seed=9, n_resamples=2_001, method=method)[0] == one_shot  # type: ignore[arg-type]


def test_resample_counts_count_every_index() -> None:
    from memeval_core.stats.bootstrap import resample_counts

    idx = np.array([[0, 0, 2], [1, 2, 2]], dtype=np.int64)
    assert resample_counts(idx, 3).tolist() == [[2.0, 0.0, 1.0], [0.0, 1.0, 2.0]]


def test_whole_number_rows_through_counts_equal_the_gathered_means(monkeypatch: pytest.MonkeyPatch) -> None:
    import memeval_core.stats.bootstrap as bootstrap

    rng = np.random.default_rng(2)
    d = np.stack([rng.integers(-1, 2, 257).astype(float), rng.random(257), rng.integers(0, 2, 257).astype(float)])
    monkeypatch.setattr(bootstrap, "_BLOCK_VALUES", 257 * 11)
    idx = np.random.default_rng(6).integers(0, 257, size=(300, 257), dtype=np.int64)
    for count_from in (1, 2, 3):  # both whole-number rows counted, then gathered like the other one
        monkeypatch.setattr(bootstrap, "COUNT_FROM_ROWS", count_from)
        theta = bootstrap.replicates(d, seed=6, n_resamples=300)
        for row in range(3):
            assert np.array_equal(theta[row], d[row][idx].mean(axis=-1))


def test_many_pairs_report_each_as_alone() -> None:
    a, b = _data(3, 40)
    pairs = [(a, b), (a[:20], b[:20]), (np.round(a), np.round(b)), (b, a)]
    many = paired_bootstraps(pairs, seed=5, n_resamples=700, method="bca", statistics=["w", "x", "y", "z"])
    for (x, y), got, name in zip(pairs, many, "wxyz", strict=True):
        assert got == paired_bootstraps([(x, y)], seed=5, n_resamples=700, method="bca", statistics=[name])[0]
    with pytest.raises(ValueError, match="statistic names"):
        paired_bootstraps(pairs, seed=5, statistics=["one"])
