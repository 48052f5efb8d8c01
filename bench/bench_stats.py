"""Exact McNemar + 10,000-resample paired bootstrap for every pair among R runs over N items.

Side by side in one run: the paired comparison (:func:`memeval_core.explore.paired.compare_pairs`, the one path
the app's statistics take) over a paired outcome table of all pairs, against ``scipy.stats`` pair by pair
(``binomtest`` + ``bootstrap`` of the pass-rate difference with the same seed, which draws the same indices).
scipy over all 4,950 pairs would take hours, so it is timed on an evenly spaced sample of pairs and its
per-pair time is extrapolated to all pairs (the JSON says how many pairs were timed). The sampled pairs'
results are compared value by value.

For information, on the same sampled pairs: memeval's pair-by-pair functions, and the bootstrap of a
continuous per-item score (not whole numbers, so each pair gathers its resamples, as scipy does) through
:func:`memeval_core.stats.bootstrap.paired_bootstraps` and through scipy.

    python -m bench.bench_stats [--quick]
"""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from bench.common import parse_args, peak_rss_mib, ratio, report, timed
from memeval_core.explore.compare import PMB_TERMS
from memeval_core.explore.paired import compare_pairs
from memeval_core.stats.bootstrap import paired_bootstraps
from memeval_core.stats.mcnemar import mcnemar_exact

SEED = 20260101


def synthetic(runs: int, items: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-item scores in [0, 1] (run skill minus item difficulty plus noise) and passes (score >= 0.5)."""
    rng = np.random.default_rng(seed)
    skill = rng.uniform(0.3, 0.7, size=(runs, 1))
    difficulty = rng.normal(scale=0.2, size=(1, items))
    scores = np.clip(skill - difficulty + rng.normal(scale=0.25, size=(runs, items)), 0, 1)
    return scores, scores >= 0.5


def pairs_table(passed: np.ndarray, pairs: list[tuple[int, int]]) -> pd.DataFrame:
    """The paired outcome table of every pair: ``pair`` (its position), ``a`` and ``b`` (passed), item by item."""
    a_rows = np.array([a for a, _ in pairs])
    b_rows = np.array([b for _, b in pairs])
    items = passed.shape[1]
    return pd.DataFrame(
        {
            "pair": np.repeat(np.arange(len(pairs)), items),
            "a": passed[a_rows].ravel(),
            "b": passed[b_rows].ravel(),
        }
    )


def scipy_bootstrap(d: np.ndarray, n_resamples: int) -> Any:
    """scipy's percentile bootstrap of ``mean(d)`` with the benchmark's seed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degenerate distributions warn; the values are still compared
        return stats.bootstrap(
            (d,),
            np.mean,
            n_resamples=n_resamples,
            method="percentile",
            rng=np.random.default_rng(SEED),
            vectorized=True,
            confidence_level=0.95,
        )


def scipy_pair(passed: np.ndarray, a: int, b: int, n_resamples: int) -> dict[str, float]:
    """One pair the way a scipy user would compute it: binomtest on the discordant counts, bootstrap of the mean."""
    only_a = int(np.sum(passed[a] & ~passed[b]))
    only_b = int(np.sum(passed[b] & ~passed[a]))
    m = only_a + only_b
    p = 1.0 if m == 0 else stats.binomtest(only_a, m, 0.5).pvalue
    res = scipy_bootstrap(passed[a].astype(float) - passed[b].astype(float), n_resamples)
    return {
        "p": float(p),
        "low": float(res.confidence_interval.low),
        "high": float(res.confidence_interval.high),
        "se": float(res.standard_error),
    }


def row(method: str, pairs_timed: int, seconds: float, n_pairs: int, scipy_all: float) -> dict[str, Any]:
    """A table row: time over all pairs (measured or extrapolated), per pair, and the ratio to scipy."""
    return {
        "method": method,
        "pairs timed": pairs_timed,
        "seconds (all pairs)": seconds,
        "ms / pair": seconds / n_pairs * 1e3,
        "speed-up vs scipy": ratio(scipy_all, seconds),
    }


def main(argv: list[str] | None = None) -> None:
    """Measure and report."""
    args = parse_args(__doc__ or "", argv)
    runs, items, n_resamples, sample = (5, 60, 500, 4) if args.quick else (100, 2_000, 10_000, 12)
    scores, passed = synthetic(runs, items, SEED)
    pairs = list(itertools.combinations(range(runs), 2))
    sampled = [pairs[i] for i in np.linspace(0, len(pairs) - 1, sample).astype(int)]

    def ours_all() -> pd.DataFrame:
        return compare_pairs(pairs_table(passed, pairs), PMB_TERMS, seed=SEED, n_resamples=n_resamples)

    t_all, out = timed(ours_all, repeat=3)
    t_scipy, ref = timed(lambda: [scipy_pair(passed, a, b, n_resamples) for a, b in sampled], repeat=1)

    def ours_pairwise() -> list[tuple[Any, Any]]:
        return [
            (
                paired_bootstraps(
                    [(passed[a].astype(float), passed[b].astype(float))], seed=SEED, n_resamples=n_resamples
                )[0],
                mcnemar_exact(passed[a], passed[b]),
            )
            for a, b in sampled
        ]

    t_pairwise, _ = timed(ours_pairwise, repeat=1)
    score_pairs = [(scores[a], scores[b]) for a, b in sampled]
    t_scores, ours_scores = timed(lambda: paired_bootstraps(score_pairs, seed=SEED, n_resamples=n_resamples), 1)
    t_scipy_scores, ref_scores = timed(lambda: [scipy_bootstrap(x - y, n_resamples) for x, y in score_pairs], 1)

    diffs: dict[str, float] = {"p": 0.0, "low": 0.0, "high": 0.0, "se": 0.0}
    for (a, b), r in zip(sampled, ref, strict=True):
        got = out.iloc[pairs.index((a, b))]
        mine = {"p": got["mcnemar_p"], "low": got["pass_rate_ci_low"], "high": got["pass_rate_ci_high"]}
        for k, v in {**mine, "se": got["pass_rate_se"]}.items():
            diffs[k] = max(diffs[k], abs(float(v) - r[k]))
    score_diffs = max(
        max(abs(o.ci_low - s.confidence_interval.low), abs(o.ci_high - s.confidence_interval.high))
        for o, s in zip(ours_scores, ref_scores, strict=True)
    )

    n_pairs = len(pairs)
    per_pair = n_pairs / len(sampled)
    scipy_all = t_scipy.best * per_pair
    scipy_scores_all = t_scipy_scores.best * per_pair
    sample_rows = len(sampled)
    rows = [
        row("memeval compare_pairs (paired table of all pairs)", n_pairs, t_all.best, n_pairs, scipy_all),
        row("scipy.stats binomtest + bootstrap, pair by pair", sample_rows, scipy_all, n_pairs, scipy_all),
        row(
            "memeval mcnemar_exact + paired_bootstraps, pair by pair",
            sample_rows,
            t_pairwise.best * per_pair,
            n_pairs,
            scipy_all,
        ),
        row(
            "continuous score: memeval paired_bootstraps (gathered)",
            sample_rows,
            t_scores.best * per_pair,
            n_pairs,
            scipy_scores_all,
        ),
        row(
            "continuous score: scipy.stats bootstrap, pair by pair",
            sample_rows,
            scipy_scores_all,
            n_pairs,
            scipy_scores_all,
        ),
    ]
    details = {
        "runs": runs,
        "items": items,
        "n_resamples": n_resamples,
        "pairs": n_pairs,
        "seed": SEED,
        "statistic": "McNemar on passed, percentile bootstrap of the pass-rate difference",
        "scipy_pairs_timed": len(sampled),
        "scipy_extrapolated": True,
        "compare_pairs_timing": t_all,
        "scipy_sample_timing": t_scipy,
        "pairwise_sample_timing": t_pairwise,
        "continuous_score_timing": t_scores,
        "continuous_score_scipy_timing": t_scipy_scores,
        "speedup_vs_scipy": ratio(scipy_all, t_all.best),
        "target_speedup": 20,
        "max_abs_difference_vs_scipy": diffs,
        "continuous_score_max_abs_difference_vs_scipy": score_diffs,
        "peak_rss_mib": peak_rss_mib(),
    }
    report("bench_stats", args, rows, details)


if __name__ == "__main__":
    main()
