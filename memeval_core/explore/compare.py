"""Compare two runs of the same suite case by case: the paired table, one case opened, statistics.

Cases are paired on ``(case_id, turn_index)``; only cases both runs reported are compared.

Statistics (:func:`compare_stats`), overall and per category, each with its method named:

- pass/fail: exact McNemar test (:mod:`memeval_core.stats.mcnemar`) with the discordant counts
  ``b`` (A passed, B failed) and ``c`` (B passed, A failed); across categories the p-values are
  Holm-adjusted (:mod:`memeval_core.stats.holm`) over the categories with at least one paired case;
- pass rate: paired bootstrap interval of ``mean(passed_A) - mean(passed_B)``;
- precision: paired bootstrap interval of ``mean(precision_A) - mean(precision_B)`` over the cases
  where *both* runs have a non-null precision (a null precision means nothing was returned and
  nothing was expected: there is no precision to compare); None when no case qualifies.

Every bootstrap starts from ``numpy.random.default_rng(seed)`` afresh, so each category's interval
is reproducible on its own, whatever other categories exist. "Statistically tied" = the interval
includes zero.

The answer a comparison leads with (:class:`Verdict`, :func:`verdict_sentence`): who passes more, by
how many percentage points (with the pass-rate interval), and whether the difference is real (McNemar
significant *and* the interval excludes zero).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from memeval_core import labels
from memeval_core.explore.case_view import CaseView, case_view
from memeval_core.explore.categories import ordered_categories
from memeval_core.pmb.case_table import CaseTable, StringPool
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.rescore import ScoredCase
from memeval_core.pmb.run import Benchmark, PmbRun
from memeval_core.stats.bootstrap import BootstrapMethod, BootstrapReport, paired_bootstrap
from memeval_core.stats.holm import holm_adjust
from memeval_core.stats.mcnemar import McNemarReport, mcnemar_exact

_TURN_LIMIT = 2**31
PairFilter = Literal["all", "differences", "a_wins", "b_wins", "both_fail"]
PAIR_FILTERS: tuple[PairFilter, ...] = ("all", "differences", "a_wins", "b_wins", "both_fail")
OUTCOMES = ("both passed", "A wins", "B wins", "both failed")

PAIR_COLUMNS = [
    "case_id",
    "turn_index",
    "label",
    "category",
    "description",
    "a_passed",
    "b_passed",
    "outcome",
    "a_precision",
    "b_precision",
    "a_recall",
    "b_recall",
    "a_latency_ms",
    "b_latency_ms",
]


def case_keys(run: PmbRun, pool: StringPool | None = None) -> NDArray[np.int64]:
    """One int64 per case identifying ``(case_id, turn_index)``, comparable between runs coded in ``pool``.

    ``pool`` defaults to the run's own; a case id another pool has never seen gets a key no case of that pool has.
    """
    t = run.table
    codes = t.column("case_id").astype(np.int64)
    if pool is not None and pool is not t.pool:
        strings = t.pool.strings
        known = [pool.code_of(strings[c]) for c in codes.tolist()]
        codes = np.fromiter((-1 if k is None else k for k in known), np.int64, len(known))
    turns = t.column("turn_index")
    present = t.present("turn_index")
    if present.any() and (turns[present].min() < 0 or turns[present].max() >= _TURN_LIMIT):
        raise ValueError(f"{run.identity.source}: turn indices must be in [0, {_TURN_LIMIT})")
    # Low 32 bits: 0 for a single-turn case, turn + 1 for a session turn.
    return (codes << 32) | np.where(present, turns + 1, 0)


def _sorted_unique(run: PmbRun, keys: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``keys`` sorted and the sorting order; a ValueError when a key repeats (a case reported twice)."""
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    if ordered.size > 1 and bool(np.any(ordered[1:] == ordered[:-1])):
        raise ValueError(f"{run.identity.source}: a case (case id and turn) appears twice")
    return ordered, order


def paired_rows(run_a: PmbRun, run_b: PmbRun) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Row numbers of the cases both runs reported, as (rows of A, matching rows of B) in A's order."""
    _same_suite(run_a, run_b)
    keys_a = case_keys(run_a)
    _sorted_unique(run_a, keys_a)
    own_b = case_keys(run_b)
    sorted_b, order = _sorted_unique(run_b, own_b)
    if run_b.table.pool is not run_a.table.pool:
        # Codes of another pool: recode B's case ids into A's pool (unknown ids match nothing in A).
        keys_b = case_keys(run_b, run_a.table.pool)
        order = np.argsort(keys_b, kind="stable")
        sorted_b = keys_b[order]
    pos = np.searchsorted(sorted_b, keys_a)
    inside = pos < sorted_b.size
    found = np.zeros(keys_a.size, dtype=bool)
    found[inside] = sorted_b[pos[inside]] == keys_a[inside]
    return np.flatnonzero(found).astype(np.int64), order[pos[found]].astype(np.int64)


def _same_suite(run_a: PmbRun, run_b: PmbRun) -> Benchmark:
    if run_a.identity.benchmark != run_b.identity.benchmark:
        raise ValueError(
            f"cannot pair {run_a.identity.source} ({run_a.identity.benchmark}) "
            f"with {run_b.identity.source} ({run_b.identity.benchmark}): different suites"
        )
    return run_a.identity.benchmark


def paired_cases(run_a: PmbRun, run_b: PmbRun) -> list[tuple[ScoredCase, ScoredCase]]:
    """Cases both runs reported, as (A, B) pairs in A's order."""
    rows_a, rows_b = paired_rows(run_a, run_b)
    return list(zip(run_a.table.cases(rows_a), run_b.table.cases(rows_b), strict=True))


def paired_frame(run_a: PmbRun, run_b: PmbRun) -> pd.DataFrame:
    """One row per case both runs reported, in A's order.

    Columns: ``case_id, turn_index`` (nullable Int64; NA for single-turn), ``label, category,
    description, a_passed, b_passed, outcome`` (``both passed`` / ``A wins`` / ``B wins`` /
    ``both failed``), ``a_precision, b_precision, a_recall, b_recall`` (NaN when null),
    ``a_latency_ms, b_latency_ms``.
    """
    rows_a, rows_b = paired_rows(run_a, run_b)
    ta, tb = run_a.table, run_b.table
    a_passed = ta.column("passed")[rows_a]
    b_passed = tb.column("passed")[rows_b]
    outcome = np.select(
        [a_passed & b_passed, a_passed, b_passed], ["both passed", "A wins", "B wins"], default="both failed"
    )
    turn = pd.array(ta.column("turn_index")[rows_a], dtype="Int64")
    turn[~ta.present("turn_index")[rows_a]] = pd.NA
    # Straight from the two runs' columns: no case objects.
    frame = pd.DataFrame(
        {
            "case_id": ta.texts("case_id", rows_a),
            "turn_index": turn,
            "label": ta.texts("label", rows_a),
            "category": ta.texts("category", rows_a),
            "description": ta.texts("description", rows_a),
            "a_passed": a_passed,
            "b_passed": b_passed,
            "outcome": outcome.astype(object),
            "a_precision": _values_or_nan(ta, "precision", rows_a),
            "b_precision": _values_or_nan(tb, "precision", rows_b),
            "a_recall": _values_or_nan(ta, "recall", rows_a),
            "b_recall": _values_or_nan(tb, "recall", rows_b),
            "a_latency_ms": ta.column("latency_ms")[rows_a],
            "b_latency_ms": tb.column("latency_ms")[rows_b],
        },
        columns=PAIR_COLUMNS,
    )
    frame["turn_index"] = frame["turn_index"].astype("Int64")
    frame["a_passed"] = frame["a_passed"].astype(bool)
    frame["b_passed"] = frame["b_passed"].astype(bool)
    for col in ("a_precision", "b_precision", "a_recall", "b_recall", "a_latency_ms", "b_latency_ms"):
        frame[col] = frame[col].astype("float64")
    return frame


def _values_or_nan(table: CaseTable, name: str, rows: NDArray[np.int64]) -> NDArray[np.float64]:
    """An optional number column at ``rows``, NaN where it is absent."""
    return np.where(table.present(name)[rows], table.column(name)[rows], np.nan)


def filter_pairs(frame: pd.DataFrame, which: PairFilter = "all", text: str = "") -> pd.DataFrame:
    """Rows of :func:`paired_frame` that match an outcome filter and a text search.

    ``which``: ``all``; ``differences`` (exactly one passed); ``a_wins``; ``b_wins``;
    ``both_fail``. ``text``: case-insensitive literal substring of the case id or the description
    (blank matches everything).
    """
    if which not in PAIR_FILTERS:
        raise ValueError(f"filter must be one of {PAIR_FILTERS}, got {which!r}")
    a, b = frame["a_passed"], frame["b_passed"]
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
        hit = frame["case_id"].str.casefold().str.contains(needle, regex=False) | frame[
            "description"
        ].str.casefold().str.contains(needle, regex=False)
        mask = mask & hit
    return frame[mask]


def case_detail(
    run_a: PmbRun, run_b: PmbRun, fixture: PmbFixture, case_id: str, turn_index: int | None = None
) -> CaseView:
    """One case opened for A and B: query, expectation, classified ids per tier, failures."""
    _same_suite(run_a, run_b)
    return case_view((run_a, run_b), fixture, case_id, turn_index)


@dataclass(frozen=True)
class PairedStats:
    """Statistics of A against B over one set of paired cases (all, or one category)."""

    scope: str
    """``all cases`` or the category name."""
    n: int
    """Paired cases."""
    mcnemar: McNemarReport
    """Exact McNemar test on pass/fail."""
    holm_p: float | None
    """Categories: McNemar p Holm-adjusted across the categories; None for the overall scope."""
    pass_rate: BootstrapReport
    """Paired bootstrap interval of the pass-rate difference (A - B)."""
    n_precision: int
    """Paired cases where both precisions are non-null."""
    precision: BootstrapReport | None
    """Paired bootstrap interval of the mean-precision difference (A - B); None when ``n_precision = 0``."""


@dataclass(frozen=True)
class ComparisonReport:
    """A against B, overall and per category, with the methods and their parameters."""

    a: str
    """Display name of A."""
    b: str
    """Display name of B."""
    benchmark: Benchmark
    """Suite compared."""
    seed: int
    """Seed of every bootstrap (``numpy.random.default_rng(seed)``)."""
    n_resamples: int
    """Bootstrap resamples."""
    alpha: float
    """Level: intervals have confidence ``1 - alpha``; McNemar verdicts use ``p < alpha``."""
    pass_test: str
    """Method of the pass/fail test."""
    interval_method: str
    """Method of the bootstrap intervals."""
    multiple_testing: str
    """Adjustment across categories."""
    overall: PairedStats
    """All paired cases."""
    categories: tuple[PairedStats, ...]
    """One per category with paired cases, in benchmark order."""


def _stats(
    scope: str,
    pairs: Sequence[tuple[ScoredCase, ScoredCase]],
    *,
    seed: int,
    n_resamples: int,
    alpha: float,
    method: BootstrapMethod,
) -> PairedStats:
    a_pass = np.array([a.passed for a, _ in pairs], dtype=np.float64)
    b_pass = np.array([b.passed for _, b in pairs], dtype=np.float64)
    prec = [(a.precision, b.precision) for a, b in pairs if a.precision is not None and b.precision is not None]
    return PairedStats(
        scope=scope,
        n=len(pairs),
        mcnemar=mcnemar_exact([a.passed for a, _ in pairs], [b.passed for _, b in pairs], alpha=alpha),
        holm_p=None,
        pass_rate=paired_bootstrap(
            a_pass,
            b_pass,
            seed=seed,
            n_resamples=n_resamples,
            alpha=alpha,
            method=method,
            statistic="pass rate difference (A - B)",
        ),
        n_precision=len(prec),
        precision=(
            paired_bootstrap(
                [x for x, _ in prec],
                [y for _, y in prec],
                seed=seed,
                n_resamples=n_resamples,
                alpha=alpha,
                method=method,
                statistic="mean precision difference (A - B), cases where both precisions are non-null",
            )
            if prec
            else None
        ),
    )


def compare_stats(
    run_a: PmbRun,
    run_b: PmbRun,
    *,
    seed: int,
    n_resamples: int = 10_000,
    alpha: float = 0.05,
    method: BootstrapMethod = "percentile",
    category_order: Sequence[str] = (),
) -> ComparisonReport:
    """McNemar, bootstrap intervals and Holm-adjusted category p-values of A against B.

    ``category_order`` orders the per-category results (pass :attr:`PmbFixture.category_order`);
    categories it does not list follow in the order they appear.
    """
    benchmark = _same_suite(run_a, run_b)
    pairs = paired_cases(run_a, run_b)
    if not pairs:
        raise ValueError(f"{run_a.identity.source} and {run_b.identity.source} have no case in common")
    overall = _stats("all cases", pairs, seed=seed, n_resamples=n_resamples, alpha=alpha, method=method)
    by_cat: dict[str, list[tuple[ScoredCase, ScoredCase]]] = {}
    for p in pairs:
        by_cat.setdefault(p[0].category, []).append(p)
    cats = [
        _stats(c, by_cat[c], seed=seed, n_resamples=n_resamples, alpha=alpha, method=method)
        for c in ordered_categories(by_cat, category_order)
    ]
    adjusted = holm_adjust([s.mcnemar.p_value for s in cats])
    cats = [
        PairedStats(s.scope, s.n, s.mcnemar, float(h), s.pass_rate, s.n_precision, s.precision)
        for s, h in zip(cats, adjusted, strict=True)
    ]
    return ComparisonReport(
        a=run_a.identity.display_name,
        b=run_b.identity.display_name,
        benchmark=benchmark,
        seed=seed,
        n_resamples=n_resamples,
        alpha=alpha,
        pass_test=overall.mcnemar.method,
        interval_method=overall.pass_rate.method,
        multiple_testing="Holm step-down over the categories' McNemar p-values",
        overall=overall,
        categories=tuple(cats),
    )


def stats_frame(report: ComparisonReport) -> pd.DataFrame:
    """The report as one row per scope (``all cases`` first, then categories).

    Columns: ``scope, n, both_passed, b, c, both_failed, mcnemar_p, holm_p, pass_rate_diff,
    pass_rate_ci_low, pass_rate_ci_high, pass_rate_tied, n_precision, precision_diff,
    precision_ci_low, precision_ci_high, precision_tied`` (precision columns NaN/NA without pairs).
    """
    rows = []
    for s in (report.overall, *report.categories):
        p = s.precision
        rows.append(
            {
                "scope": s.scope,
                "n": s.n,
                "both_passed": s.mcnemar.both_passed,
                "b": s.mcnemar.b,
                "c": s.mcnemar.c,
                "both_failed": s.mcnemar.both_failed,
                "mcnemar_p": s.mcnemar.p_value,
                "holm_p": s.holm_p,
                "pass_rate_diff": s.pass_rate.estimate,
                "pass_rate_ci_low": s.pass_rate.ci_low,
                "pass_rate_ci_high": s.pass_rate.ci_high,
                "pass_rate_tied": s.pass_rate.statistically_tied,
                "n_precision": s.n_precision,
                "precision_diff": None if p is None else p.estimate,
                "precision_ci_low": None if p is None else p.ci_low,
                "precision_ci_high": None if p is None else p.ci_high,
                "precision_tied": None if p is None else p.statistically_tied,
            }
        )
    frame = pd.DataFrame(rows)
    for col in ("holm_p", "precision_diff", "precision_ci_low", "precision_ci_high"):
        frame[col] = frame[col].astype("float64")
    frame["precision_tied"] = frame["precision_tied"].astype("boolean")
    return frame


def win_tie_loss(runs: Sequence[PmbRun], chosen: str, *, alpha: float = 0.05) -> pd.DataFrame:
    """The chosen run (display name) against every other run of its suite, case by case.

    Per paired case: win = chosen passed and the other failed; loss = the reverse; the rest are
    ties (both passed / both failed). ``mcnemar_p`` is the exact McNemar p of the pair
    (``b = wins``, ``c = losses``); ``holm_p`` adjusts those p-values across the other runs.
    Columns: ``chosen, other, other_run_id, n, wins, losses, ties_both_passed, ties_both_failed,
    mcnemar_p, holm_p``; rows in run order.
    """
    matches = [r for r in runs if r.identity.display_name == chosen]
    if not matches:
        raise ValueError(f"no run is called {chosen!r}")
    suites = {r.identity.benchmark for r in matches}
    if len(matches) > 1:
        raise ValueError(f"{chosen!r} names runs of several suites ({sorted(suites)}); pass the runs of one suite")
    me = matches[0]
    rows = []
    keys_me = case_keys(me)
    _sorted_unique(me, keys_me)
    for other in runs:
        if other is me or other.identity.benchmark != me.identity.benchmark:
            continue
        if other.table.pool is me.table.pool and np.array_equal(case_keys(other), keys_me):
            # The usual case: both report the same cases in the same order; no sorting needed.
            mine, theirs = me.table.column("passed"), other.table.column("passed")
        else:
            rows_me, rows_other = paired_rows(me, other)
            mine = me.table.column("passed")[rows_me]
            theirs = other.table.column("passed")[rows_other]
        rep = mcnemar_exact(mine, theirs, alpha=alpha)
        rows.append(
            {
                "chosen": chosen,
                "other": other.identity.display_name,
                "other_run_id": other.identity.run_id,
                "n": rep.n,
                "wins": rep.b,
                "losses": rep.c,
                "ties_both_passed": rep.both_passed,
                "ties_both_failed": rep.both_failed,
                "mcnemar_p": rep.p_value,
            }
        )
    columns = [
        "chosen",
        "other",
        "other_run_id",
        "n",
        "wins",
        "losses",
        "ties_both_passed",
        "ties_both_failed",
        "mcnemar_p",
        "holm_p",
    ]
    frame = pd.DataFrame(rows, columns=columns[:-1])
    frame["holm_p"] = holm_adjust(frame["mcnemar_p"].to_numpy(dtype=np.float64))
    return frame[columns]


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


def verdict(report: ComparisonReport) -> Verdict:
    """The verdict of a PMB comparison: passes, the pass-rate gap and McNemar over all paired cases."""
    s = report.overall
    return Verdict(report.a, report.b, "cases", "passes", s.mcnemar, s.pass_rate)


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
