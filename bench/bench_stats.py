"""Exact McNemar + 10,000-resample paired bootstrap for every pair among R runs over N items.

Side by side in one run: :func:`memeval_core.stats.all_pairs.all_pairs` (vectorised, all pairs at once) against
``scipy.stats`` pair by pair (``binomtest`` + ``bootstrap`` with the same seed, which draws the same indices).
scipy over all 4,950 pairs would take hours, so it is timed on an evenly spaced sample of pairs and its
per-pair time is extrapolated to all pairs (the JSON says how many pairs were timed). The sampled pairs'
results are compared value by value.

    python -m bench.bench_stats [--quick]
"""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import numpy as np
from scipy import stats

from bench.common import parse_args, peak_rss_mib, ratio, report, timed
from memeval_core.stats.all_pairs import all_pairs
from memeval_core.stats.bootstrap import paired_bootstrap
from memeval_core.stats.mcnemar import mcnemar_exact

SEED = 20260101


def synthetic(runs: int, items: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-item scores in [0, 1] (run skill minus item difficulty plus noise) and passes (score >= 0.5)."""
    rng = np.random.default_rng(seed)
    skill = rng.uniform(0.3, 0.7, size=(runs, 1))
    difficulty = rng.normal(scale=0.2, size=(1, items))
    scores = np.clip(skill - difficulty + rng.normal(scale=0.25, size=(runs, items)), 0, 1)
    return scores, scores >= 0.5


def scipy_pair(scores: np.ndarray, passed: np.ndarray, a: int, b: int, n_resamples: int) -> dict[str, float]:
    """One pair the way a scipy user would compute it: binomtest on the discordant counts, bootstrap of the mean."""
    only_a = int(np.sum(passed[a] & ~passed[b]))
    only_b = int(np.sum(passed[b] & ~passed[a]))
    m = only_a + only_b
    p = 1.0 if m == 0 else stats.binomtest(only_a, m, 0.5).pvalue
    d = scores[a] - scores[b]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degenerate distributions warn; the values are still compared
        res = stats.bootstrap(
            (d,),
            np.mean,
            n_resamples=n_resamples,
            method="percentile",
            rng=np.random.default_rng(SEED),
            vectorized=True,
            confidence_level=0.95,
        )
    return {
        "p": float(p),
        "low": float(res.confidence_interval.low),
        "high": float(res.confidence_interval.high),
        "se": float(res.standard_error),
    }


def main(argv: list[str] | None = None) -> None:
    """Measure and report."""
    args = parse_args(__doc__ or "", argv)
    runs, items, n_resamples, sample = (5, 60, 500, 4) if args.quick else (100, 2_000, 10_000, 12)
    scores, passed = synthetic(runs, items, SEED)
    pairs = list(itertools.combinations(range(runs), 2))
    sampled = [pairs[i] for i in np.linspace(0, len(pairs) - 1, sample).astype(int)]

    t_all, rep = timed(lambda: all_pairs(scores, passed, seed=SEED, n_resamples=n_resamples), repeat=3)
    t_scipy, ref = timed(lambda: [scipy_pair(scores, passed, a, b, n_resamples) for a, b in sampled], repeat=1)

    def ours_pairwise() -> list[tuple[Any, Any]]:
        return [
            (
                paired_bootstrap(scores[a], scores[b], seed=SEED, n_resamples=n_resamples),
                mcnemar_exact(passed[a].tolist(), passed[b].tolist()),
            )
            for a, b in sampled
        ]

    t_pairwise, _ = timed(ours_pairwise, repeat=1)

    diffs: dict[str, float] = {"p": 0.0, "low": 0.0, "high": 0.0, "se": 0.0}
    for (a, b), r in zip(sampled, ref, strict=True):
        i = rep.index(a, b)
        got = {"p": rep.p_value[i], "low": rep.ci_low[i], "high": rep.ci_high[i], "se": rep.standard_error[i]}
        for k in diffs:
            diffs[k] = max(diffs[k], abs(float(got[k]) - r[k]))

    n_pairs = len(pairs)
    scipy_all = t_scipy.best / len(sampled) * n_pairs
    pairwise_all = t_pairwise.best / len(sampled) * n_pairs
    rows = [
        {
            "method": "memeval all_pairs (vectorised, all pairs)",
            "pairs timed": n_pairs,
            "seconds (all pairs)": t_all.best,
            "ms / pair": t_all.best / n_pairs * 1e3,
            "speed-up vs scipy": ratio(scipy_all, t_all.best),
        },
        {
            "method": "scipy.stats binomtest + bootstrap, pair by pair",
            "pairs timed": len(sampled),
            "seconds (all pairs)": scipy_all,
            "ms / pair": scipy_all / n_pairs * 1e3,
            "speed-up vs scipy": 1.0,
        },
        {
            "method": "memeval mcnemar_exact + paired_bootstrap, pair by pair",
            "pairs timed": len(sampled),
            "seconds (all pairs)": pairwise_all,
            "ms / pair": pairwise_all / n_pairs * 1e3,
            "speed-up vs scipy": ratio(scipy_all, pairwise_all),
        },
    ]
    details = {
        "runs": runs,
        "items": items,
        "n_resamples": n_resamples,
        "pairs": n_pairs,
        "seed": SEED,
        "scipy_pairs_timed": len(sampled),
        "scipy_extrapolated": True,
        "all_pairs_timing": t_all,
        "scipy_sample_timing": t_scipy,
        "pairwise_sample_timing": t_pairwise,
        "speedup_vs_scipy": ratio(scipy_all, t_all.best),
        "target_speedup": 20,
        "max_abs_difference_vs_scipy": diffs,
        "peak_rss_mib": peak_rss_mib(),
    }
    report("bench_stats", args, rows, details)


if __name__ == "__main__":
    main()
