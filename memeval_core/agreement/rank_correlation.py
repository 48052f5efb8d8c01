"""How far two rankings of runs agree: Kendall's tau-b, and who leads under each.

Runs are ranked by a score (higher is better), e.g. mean accuracy under judge A and under judge B.
For ``R`` runs and every pair ``i < j``: ``s_x = sign(x_i − x_j)``, ``s_y = sign(y_i − y_j)``;
concordant minus discordant pairs is ``Σ s_x s_y`` and Kendall's tau-b is

``τ_b = Σ s_x s_y / sqrt(Σ |s_x| · Σ |s_y|) = (n_c − n_d) / sqrt((n_0 − n_1)(n_0 − n_2))``

(``n_0`` all pairs, ``n_1``/``n_2`` pairs tied in x/y). NaN when either ranking is all ties. Same as
``scipy.stats.kendalltau`` (variant "b").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from memeval_core.agreement.kappa import FloatArray, ItemTerms, safe_divide


def kendall_tau_b_rows(x: FloatArray, y: FloatArray) -> FloatArray:
    """Kendall's tau-b of each row pair: ``x`` and ``y`` of shape ``(B, runs)`` give ``B`` values."""
    upper = np.triu_indices(x.shape[1], k=1)
    sx = np.sign(x[:, :, None] - x[:, None, :])[:, upper[0], upper[1]]
    sy = np.sign(y[:, :, None] - y[:, None, :])[:, upper[0], upper[1]]
    return safe_divide((sx * sy).sum(axis=1), np.sqrt(np.abs(sx).sum(axis=1) * np.abs(sy).sum(axis=1)))


def kendall_tau_b(x: Any, y: Any) -> float:
    """Kendall's tau-b between two score vectors over the same runs (aligned 1-D, no missing values)."""
    xs = np.asarray(x, dtype=np.float64)
    ys = np.asarray(y, dtype=np.float64)
    if xs.ndim != 1 or xs.shape != ys.shape:
        raise ValueError(f"x and y must be 1-D of equal length, got shapes {xs.shape} and {ys.shape}")
    if np.isnan(xs).any() or np.isnan(ys).any():
        raise ValueError("x and y must not contain NaN: every run needs a score in both rankings")
    return float(kendall_tau_b_rows(xs[None, :], ys[None, :])[0])


def kendall_tau_terms(scores_a: Any, scores_b: Any) -> ItemTerms:
    """Item terms of tau-b between run means: ``scores_a``/``scores_b`` are ``(items x runs)`` per-item scores
    (e.g. 0/1 verdicts) under two conditions; NaN = no score (left out of that run's mean)."""
    a = np.asarray(scores_a, dtype=np.float64)
    b = np.asarray(scores_b, dtype=np.float64)
    if a.ndim != 2 or a.shape != b.shape:
        raise ValueError(f"scores_a and scores_b must be (items x runs) of equal shape, got {a.shape} and {b.shape}")
    runs = a.shape[1]
    features = np.column_stack([np.nan_to_num(a), ~np.isnan(a), np.nan_to_num(b), ~np.isnan(b)]).astype(np.float64)

    def finish(sums: FloatArray) -> FloatArray:
        mean_a = safe_divide(sums[:, :runs], sums[:, runs : 2 * runs])
        mean_b = safe_divide(sums[:, 2 * runs : 3 * runs], sums[:, 3 * runs :])
        # A run with no score in a resample has no rank: the whole comparison is undefined there.
        undefined = np.isnan(mean_a).any(axis=1) | np.isnan(mean_b).any(axis=1)
        tau = kendall_tau_b_rows(np.nan_to_num(mean_a), np.nan_to_num(mean_b))
        tau[undefined] = np.nan
        return tau

    return ItemTerms("kendall_tau_b", features, finish)


@dataclass(frozen=True)
class LeaderChanges:
    """How the ranking of the same runs changes between two scorings a and b (higher score ranks first)."""

    leaders_a: tuple[str, ...]
    """Run(s) with the top score under a (several on a tie), sorted by id."""
    leaders_b: tuple[str, ...]
    """Run(s) with the top score under b."""
    leader_changed: bool
    """True iff the sets of leaders differ."""
    swapped_pairs: tuple[tuple[str, str], ...]
    """Pairs ``(x, y)`` with x strictly ahead of y under a and strictly behind under b."""
    n_pairs: int
    """All pairs of runs, ``R (R − 1) / 2``."""
    tau_b: float
    """Kendall's tau-b between the two scorings."""


def _leaders(scores: Mapping[str, float]) -> tuple[str, ...]:
    top = max(scores.values())
    return tuple(sorted(run for run, value in scores.items() if value == top))


def leader_changes(scores_a: Mapping[str, float], scores_b: Mapping[str, float]) -> LeaderChanges:
    """Compare two scorings of the same runs (run id -> score): leaders, swapped pairs, tau-b."""
    if set(scores_a) != set(scores_b):
        only_a = sorted(set(scores_a) - set(scores_b))
        only_b = sorted(set(scores_b) - set(scores_a))
        raise ValueError(f"both scorings must cover the same runs; only in a: {only_a}, only in b: {only_b}")
    if not scores_a:
        raise ValueError("no runs to compare")
    runs = sorted(scores_a)
    x = np.array([scores_a[r] for r in runs], dtype=np.float64)
    y = np.array([scores_b[r] for r in runs], dtype=np.float64)
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("scores must not be NaN")
    i, j = np.triu_indices(len(runs), k=1)
    sx, sy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
    swapped = np.flatnonzero(sx * sy < 0)
    pairs = tuple((runs[i[p]], runs[j[p]]) if sx[p] > 0 else (runs[j[p]], runs[i[p]]) for p in swapped.tolist())
    leaders_a, leaders_b = _leaders(scores_a), _leaders(scores_b)
    return LeaderChanges(
        leaders_a=leaders_a,
        leaders_b=leaders_b,
        leader_changed=leaders_a != leaders_b,
        swapped_pairs=pairs,
        n_pairs=len(i),
        tau_b=kendall_tau_b(x, y) if len(runs) > 1 else float("nan"),
    )
