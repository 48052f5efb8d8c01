"""Paired comparison of A against B, for PMB cases and QA questions alike: one table in, one report out.

The input is a *paired outcome table* (:data:`TABLE_COLUMNS`), one row per item both runs have, in A's order:
``item`` (id), ``category`` (None: in the overall scope only), ``a`` and ``b`` (outcome: passed / correct),
``a_value`` and ``b_value`` (optional: a number per item, e.g. precision or score; NaN when absent). The
adapters build it from their runs (:func:`memeval_core.explore.compare.outcome_table` for PMB,
:func:`memeval_core.explore.qa_compare.outcome_table` for QA); :class:`Terms` carries their words.

Statistics (:func:`paired_stats`), overall and per category, each with its method named:

- outcomes: exact McNemar test (:mod:`memeval_core.stats.mcnemar`) with the discordant counts ``b`` (A right,
  B wrong) and ``c`` (B right, A wrong); across categories the p-values are Holm-adjusted
  (:mod:`memeval_core.stats.holm`);
- share right: paired bootstrap interval of ``mean(a) - mean(b)``;
- value: paired bootstrap interval of ``mean(a_value) - mean(b_value)`` over the items where *both* values are
  present; None when no item qualifies.

Every bootstrap starts from ``numpy.random.default_rng(seed)`` afresh, so each scope's interval is reproducible
on its own, whatever other scopes exist; scopes of one size share the draw (:func:`paired_bootstraps`).
"Statistically tied" = the interval includes zero.

Many pairs at once (:func:`compare_pairs`: one run against all others, or every pair of many runs): the same
table with a ``pair`` column, one McNemar test per pair, Holm across the pairs, and optionally each pair's
bootstrap interval of the share right.

The answer a comparison leads with (:class:`Verdict`, :func:`verdict_sentence`): who gets more right, by how
many percentage points (with the interval), and whether the difference is real (McNemar significant *and* the
interval excludes zero).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from memeval_core import labels
from memeval_core.explore.categories import ordered_categories
from memeval_core.stats.bootstrap import BootstrapMethod, BootstrapReport, paired_bootstraps
from memeval_core.stats.holm import holm_adjust
from memeval_core.stats.mcnemar import McNemarReport, mcnemar_exact, mcnemar_from_counts

TABLE_COLUMNS = ("item", "category", "a", "b", "a_value", "b_value")
"""Columns of a paired outcome table (:func:`compare_pairs` adds ``pair``)."""

PairFilter = Literal["all", "differences", "a_wins", "b_wins", "both_fail"]
PAIR_FILTERS: tuple[PairFilter, ...] = ("all", "differences", "a_wins", "b_wins", "both_fail")
MULTIPLE_TESTING = "Holm step-down over the categories' McNemar p-values"


@dataclass(frozen=True)
class Terms:
    """The words of one kind of comparison: what the items are, what being right is called, the column names."""

    items: str
    """What is counted: ``cases`` or ``questions``."""
    everything: str
    """The overall scope: ``all cases`` or ``all questions``."""
    verb: str
    """What a system does to an item it gets right: ``passes`` or ``answers`` (with :attr:`how`)."""
    how: str
    """Follows the items in a sentence: `` correctly`` for questions, else empty."""
    right: str
    """Suffix of the outcome columns of the adapter's paired frame: ``passed`` (``a_passed``) or ``correct``."""
    search: tuple[str, str]
    """Columns of the paired frame a text search looks in: the id and the text."""
    both_right: str
    """Column of the items both got right: ``both_passed`` or ``both_correct``."""
    both_wrong: str
    """Column of the items both got wrong: ``both_failed`` or ``both_wrong``."""
    outcome: str
    """Column prefix of the share-right interval: ``pass_rate`` or ``accuracy``."""
    outcome_statistic: str
    """What the share-right interval estimates."""
    value: str
    """Column prefix of the value interval: ``precision`` or ``score``."""
    value_statistic: str
    """What the value interval estimates."""
    category_column: bool
    """The statistics frame has the raw ``category`` code beside the scope (QA)."""
    value_count: bool
    """The statistics frame counts the items with both values, ``n_<value>`` (PMB: precision can be null)."""


@dataclass(frozen=True)
class ScopeStats:
    """Statistics of A against B over one set of paired items (all, or one category)."""

    scope: str
    """:attr:`Terms.everything` or the category's label."""
    category: str | None
    """Raw category code; None for the overall scope."""
    n: int
    """Paired items."""
    mcnemar: McNemarReport
    """Exact McNemar test on the outcomes (``b`` = A right and B wrong, ``c`` = the reverse)."""
    holm_p: float | None
    """Categories: McNemar p Holm-adjusted across the categories; None for the overall scope."""
    outcome: BootstrapReport
    """Paired bootstrap interval of the difference in share right (A - B)."""
    n_value: int
    """Paired items where both values are present."""
    value: BootstrapReport | None
    """Paired bootstrap interval of the difference in mean value (A - B); None when ``n_value = 0``."""


@dataclass(frozen=True)
class PairedReport:
    """A against B, overall and per category, with the methods and their parameters."""

    a: str
    """Display name of A."""
    b: str
    """Display name of B."""
    benchmark: str
    """Suite or benchmark compared."""
    terms: Terms
    """The words of this kind of comparison."""
    seed: int
    """Seed of every bootstrap (``numpy.random.default_rng(seed)``)."""
    n_resamples: int
    """Bootstrap resamples."""
    alpha: float
    """Level: intervals have confidence ``1 - alpha``; McNemar verdicts use ``p < alpha``."""
    test: str
    """Method of the test on the outcomes."""
    interval_method: str
    """Method of the bootstrap intervals."""
    multiple_testing: str
    """Adjustment across categories."""
    overall: ScopeStats
    """All paired items."""
    categories: tuple[ScopeStats, ...]
    """One per category with paired items, in the order given (see :func:`paired_stats`)."""
    includes_adversarial: bool | None = None
    """QA on LoCoMo: category 5 is scored in both runs; None otherwise."""
    only_a: int = 0
    """Items only A has (not compared)."""
    only_b: int = 0
    """Items only B has (not compared)."""


def _bools(table: pd.DataFrame, column: str) -> NDArray[np.bool_]:
    return table[column].to_numpy(dtype=bool)


def _values(table: pd.DataFrame, column: str) -> NDArray[np.float64]:
    """A value column as floats; all NaN when the table has none (no value to compare)."""
    if column not in table:
        return np.full(len(table), np.nan)
    return table[column].to_numpy(dtype=np.float64)


def _scope_stats(
    scopes: Sequence[tuple[str, str | None, NDArray[np.int64]]],
    table: pd.DataFrame,
    terms: Terms,
    *,
    seed: int,
    n_resamples: int,
    alpha: float,
    method: BootstrapMethod,
) -> list[ScopeStats]:
    """McNemar and both intervals of every scope (label, category, rows of ``table``); scopes share draws."""
    a, b = _bools(table, "a"), _bools(table, "b")
    a_value, b_value = (_values(table, f"{side}_value") for side in "ab")
    both = ~np.isnan(a_value) & ~np.isnan(b_value)
    valued = [rows[both[rows]] for _, _, rows in scopes]
    samples = [(a[rows].astype(np.float64), b[rows].astype(np.float64)) for _, _, rows in scopes]
    samples += [(a_value[rows], b_value[rows]) for rows in valued if rows.size]
    names = [terms.outcome_statistic] * len(scopes) + [terms.value_statistic] * (len(samples) - len(scopes))
    reports = paired_bootstraps(
        samples, seed=seed, n_resamples=n_resamples, alpha=alpha, method=method, statistics=names
    )
    # The outcome intervals in scope order, then the value intervals of the scopes that have values.
    outcomes, values = reports[: len(scopes)], iter(reports[len(scopes) :])
    return [
        ScopeStats(
            scope=label,
            category=category,
            n=rows.size,
            mcnemar=mcnemar_exact(a[rows], b[rows], alpha=alpha),
            holm_p=None,
            outcome=outcome,
            n_value=vrows.size,
            value=next(values) if vrows.size else None,
        )
        for (label, category, rows), outcome, vrows in zip(scopes, outcomes, valued, strict=True)
    ]


def paired_stats(
    table: pd.DataFrame,
    *,
    a: str,
    b: str,
    benchmark: str,
    terms: Terms,
    seed: int,
    n_resamples: int = 10_000,
    alpha: float = 0.05,
    method: BootstrapMethod = "percentile",
    category_order: Sequence[str] = (),
    category_labels: Mapping[str, str] | None = None,
    includes_adversarial: bool | None = None,
    only_a: int = 0,
    only_b: int = 0,
) -> PairedReport:
    """McNemar, bootstrap intervals and Holm-adjusted category p-values of A against B (module docstring).

    ``category_order`` orders the categories (those it does not list follow in the order the table meets them);
    ``category_labels`` names a category's scope (default: the category itself).
    """
    if table.empty:
        raise ValueError(f"{a} and {b} have no {terms.items[:-1]} in common")
    codes, present = pd.factorize(table["category"], use_na_sentinel=True)
    position = {str(c): k for k, c in enumerate(present)}
    labels_of = category_labels or {}
    scopes: list[tuple[str, str | None, NDArray[np.int64]]] = [(terms.everything, None, np.arange(len(table)))]
    scopes += [
        (labels_of.get(c, c), c, np.flatnonzero(codes == position[c]).astype(np.int64))
        for c in ordered_categories(position, category_order)
    ]
    stats = _scope_stats(scopes, table, terms, seed=seed, n_resamples=n_resamples, alpha=alpha, method=method)
    overall, cats = stats[0], stats[1:]
    adjusted = holm_adjust([s.mcnemar.p_value for s in cats])
    return PairedReport(
        a=a,
        b=b,
        benchmark=benchmark,
        terms=terms,
        seed=seed,
        n_resamples=n_resamples,
        alpha=alpha,
        test=overall.mcnemar.method,
        interval_method=overall.outcome.method,
        multiple_testing=MULTIPLE_TESTING,
        overall=overall,
        categories=tuple(
            ScopeStats(s.scope, s.category, s.n, s.mcnemar, float(h), s.outcome, s.n_value, s.value)
            for s, h in zip(cats, adjusted, strict=True)
        ),
        includes_adversarial=includes_adversarial,
        only_a=only_a,
        only_b=only_b,
    )


def _test_cells(m: McNemarReport, holm_p: float | None, terms: Terms) -> dict[str, Any]:
    return {
        "n": m.n,
        terms.both_right: m.both_passed,
        "b": m.b,
        "c": m.c,
        terms.both_wrong: m.both_failed,
        "mcnemar_p": m.p_value,
        "holm_p": holm_p,
    }


def _interval_cells(prefix: str, rep: BootstrapReport | None) -> dict[str, Any]:
    return {
        f"{prefix}_diff": None if rep is None else rep.estimate,
        f"{prefix}_ci_low": None if rep is None else rep.ci_low,
        f"{prefix}_ci_high": None if rep is None else rep.ci_high,
        f"{prefix}_tied": None if rep is None else rep.statistically_tied,
    }


def stats_frame(report: PairedReport) -> pd.DataFrame:
    """The report as one row per scope (overall first, then the categories).

    Columns, with ``o`` = :attr:`Terms.outcome` and ``v`` = :attr:`Terms.value`: ``scope``, ``category`` (when
    :attr:`Terms.category_column`), ``n, <both right>, b, c, <both wrong>, mcnemar_p, holm_p, o_diff, o_ci_low,
    o_ci_high, o_tied``, ``n_v`` (when :attr:`Terms.value_count`), ``v_diff, v_ci_low, v_ci_high, v_tied``
    (value columns NaN/NA without a pair of values).
    """
    t = report.terms
    rows = [
        {
            "scope": s.scope,
            **({"category": s.category} if t.category_column else {}),
            **_test_cells(s.mcnemar, s.holm_p, t),
            **_interval_cells(t.outcome, s.outcome),
            **({f"n_{t.value}": s.n_value} if t.value_count else {}),
            **_interval_cells(t.value, s.value),
        }
        for s in (report.overall, *report.categories)
    ]
    frame = pd.DataFrame(rows)
    for col in ("holm_p", f"{t.value}_diff", f"{t.value}_ci_low", f"{t.value}_ci_high"):
        frame[col] = frame[col].astype("float64")
    frame[f"{t.value}_tied"] = frame[f"{t.value}_tied"].astype("boolean")
    return frame


def compare_pairs(
    table: pd.DataFrame,
    terms: Terms,
    *,
    alpha: float = 0.05,
    seed: int | None = None,
    n_resamples: int = 10_000,
) -> pd.DataFrame:
    """Many pairs at once: one row per value of the table's ``pair`` column, in order of first appearance.

    Columns: ``pair, n, <both right>, b, c, <both wrong>, mcnemar_p`` (exact McNemar of the pair), ``holm_p``
    (adjusted across the pairs) and, when ``seed`` is given, each pair's bootstrap interval of the share right:
    ``<outcome>_diff, <outcome>_ci_low, <outcome>_ci_high, <outcome>_tied, <outcome>_se``. Pairs of one size
    share the draw, and 0/1 outcomes are resampled through the count matrix, so many pairs cost one matrix
    product (:func:`memeval_core.stats.bootstrap.replicates`).
    """
    columns = ["pair", "n", terms.both_right, "b", "c", terms.both_wrong, "mcnemar_p", "holm_p"]
    if seed is not None:
        columns += [f"{terms.outcome}_{c}" for c in ("diff", "ci_low", "ci_high", "tied", "se")]
    if table.empty:
        return pd.DataFrame([], columns=columns)
    codes, pairs = pd.factorize(table["pair"].to_numpy(), sort=False)  # pairs in order of first appearance
    a, b = _bools(table, "a"), _bools(table, "b")

    def per_pair(rows: NDArray[np.bool_]) -> list[int]:
        return [int(k) for k in np.bincount(codes[rows], minlength=len(pairs))]

    counts = zip(per_pair(np.ones_like(a)), per_pair(a & b), per_pair(a & ~b), per_pair(~a & b), strict=True)
    tests = [mcnemar_from_counts(n, both, x, y, alpha=alpha) for n, both, x, y in counts]
    adjusted = holm_adjust(np.array([t.p_value for t in tests], dtype=np.float64))
    rows = [{"pair": p, **_test_cells(t, float(h), terms)} for p, t, h in zip(pairs, tests, adjusted, strict=True)]
    if seed is not None:
        order = np.argsort(codes, kind="stable")
        bounds = np.cumsum(np.bincount(codes))[:-1]
        reps = paired_bootstraps(
            [
                (x.astype(np.float64), y.astype(np.float64))
                for x, y in zip(np.split(a[order], bounds), np.split(b[order], bounds), strict=True)
            ],
            seed=seed,
            n_resamples=n_resamples,
            alpha=alpha,
            statistics=[terms.outcome_statistic] * len(tests),
        )
        for row, rep in zip(rows, reps, strict=True):
            row.update(_interval_cells(terms.outcome, rep), **{f"{terms.outcome}_se": rep.standard_error})
    return pd.DataFrame(rows, columns=columns)


def filter_pairs(frame: pd.DataFrame, terms: Terms, which: PairFilter = "all", text: str = "") -> pd.DataFrame:
    """Rows of an adapter's paired frame that match an outcome filter and a text search.

    ``which``: ``all``; ``differences`` (exactly one right); ``a_wins``; ``b_wins``; ``both_fail`` (both wrong).
    ``text``: case-insensitive literal substring of either column of :attr:`Terms.search` (blank matches all).
    """
    if which not in PAIR_FILTERS:
        raise ValueError(f"filter must be one of {PAIR_FILTERS}, got {which!r}")
    a, b = frame[f"a_{terms.right}"], frame[f"b_{terms.right}"]
    masks = {
        "all": pd.Series(True, index=frame.index),
        "differences": a != b,
        "a_wins": a & ~b,
        "b_wins": b & ~a,
        "both_fail": ~a & ~b,
    }
    mask = masks[which]
    needle = text.strip().casefold()
    if needle:
        ident, words = (frame[col].str.casefold().str.contains(needle, regex=False) for col in terms.search)
        mask = mask & (ident | words)
    return frame[mask]


def interval_text(low: float | None, high: float | None) -> str:
    """An interval of a difference of rates in percentage points: ``+80.5 to +94.8 pp``; ``—`` when missing."""
    if low is None or high is None or low != low or high != high:
        return labels.MISSING
    return f"{labels.points(low).removesuffix(' pp')} to {labels.points(high)}"


def with_intervals(frame: pd.DataFrame, prefixes: Sequence[str]) -> pd.DataFrame:
    """``frame`` with a text column ``<prefix>_interval`` after each ``<prefix>_diff``, from its ci_low and ci_high."""
    out = frame.copy()
    for prefix in prefixes:
        lows, highs = out[f"{prefix}_ci_low"], out[f"{prefix}_ci_high"]
        text = [interval_text(lo, hi) for lo, hi in zip(lows, highs, strict=True)]
        out.insert(list(out.columns).index(f"{prefix}_diff") + 1, f"{prefix}_interval", text)
    return out


@dataclass(frozen=True)
class Verdict:
    """The answer a comparison leads with: who gets more right, by how much, and whether it is real."""

    a: str
    """Display name of A."""
    b: str
    """Display name of B."""
    items: str
    """What is counted: ``cases`` or ``questions``."""
    verb: str
    """What a system does to an item it gets right: ``passes`` or ``answers`` (with :attr:`how`)."""
    mcnemar: McNemarReport
    """Exact McNemar test on the paired outcomes."""
    gap: BootstrapReport
    """Paired bootstrap interval of the difference in share right (A - B)."""
    how: str = ""
    """Follows the items in the sentence: `` correctly`` for questions."""

    @property
    def n(self) -> int:
        """Paired items."""
        return self.mcnemar.n

    @property
    def a_count(self) -> int:
        """Items A gets right."""
        return self.mcnemar.b + self.mcnemar.both_passed

    @property
    def b_count(self) -> int:
        """Items B gets right."""
        return self.mcnemar.c + self.mcnemar.both_passed

    @property
    def leader(self) -> str | None:
        """The run that gets more items right; None on a tie."""
        if self.a_count == self.b_count:
            return None
        return self.a if self.a_count > self.b_count else self.b

    @property
    def real(self) -> bool:
        """McNemar is significant and the interval excludes zero."""
        return self.mcnemar.significant and not self.gap.statistically_tied

    @property
    def reality(self) -> Literal["Yes", "No", "Borderline"]:
        """Is the difference real: ``Yes`` (both tests agree it is), ``No`` (neither), else ``Borderline``."""
        if self.real:
            return "Yes"
        return "No" if not self.mcnemar.significant and self.gap.statistically_tied else "Borderline"

    def leader_interval(self) -> tuple[float, float]:
        """The interval of the leader's gap (leader minus the other): A - B, or B - A when B leads."""
        if self.leader == self.b:
            return -self.gap.ci_high, -self.gap.ci_low
        return self.gap.ci_low, self.gap.ci_high


def verdict(report: PairedReport) -> Verdict:
    """The verdict of a comparison: items right, the share-right gap and McNemar over all paired items."""
    s, t = report.overall, report.terms
    return Verdict(report.a, report.b, t.items, t.verb, s.mcnemar, s.outcome, how=t.how)


def p_text(p: float) -> str:
    """``p < 0.001`` or ``p = 0.291`` (the registry's p-value format in a sentence)."""
    shown = labels.p_value(p)
    return f"p {shown}" if shown.startswith("<") else f"p = {shown}"


def verdict_sentence(v: Verdict, name: Callable[[str], str] = str) -> str:
    """One sentence: counts, who is better by how many points (with the interval), and whether it is real.

    ``tenure passes 77 of 77 cases, mem0 9 of 77: tenure is better by 88.3 pp (95% interval +80.5 to +94.8
    pp); McNemar p < 0.001 — a real difference.`` ``name`` formats each run's name (e.g. escapes it).
    """
    head = f"{name(v.a)} {v.verb} {v.a_count:,} of {v.n:,} {v.items}{v.how}, {name(v.b)} {v.b_count:,} of {v.n:,}"
    test = f"McNemar {p_text(v.mcnemar.p_value)}"
    if v.leader is None:
        return f"{head}: neither is better ({test})."
    low, high = v.leader_interval()
    by = labels.points(abs(v.gap.estimate)).removeprefix("+")
    interval = f"{1 - v.gap.alpha:.0%} interval {interval_text(low, high)}"
    if v.reality == "Yes":
        return f"{head}: {name(v.leader)} is better by {by} ({interval}); {test} — a real difference."
    if v.reality == "No":
        return f"{head}: {name(v.leader)} is ahead by {by} ({interval}), but {test} — not a real difference."
    why = "the interval includes zero" if v.gap.statistically_tied else f"McNemar p is not below {v.mcnemar.alpha}"
    return f"{head}: {name(v.leader)} is ahead by {by} ({interval}); {test} — borderline: {why}."
