"""Bootstrap intervals over items: reproducible by seed, weights-resampling equals index resampling,
sensible coverage on real judge data."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _data import SHARED_DATA, require

from memeval_core.agreement.intervals import (
    BootstrapReport,
    agreement_terms,
    bootstrap,
    bootstrap_kendall_tau,
    bootstrap_many,
    resampled_together,
    resampled_values,
)
from memeval_core.agreement.kappa import cohen_kappa_terms, fleiss_kappa_terms
from memeval_core.agreement.krippendorff_alpha import krippendorff_alpha_terms
from memeval_core.agreement.rank_correlation import kendall_tau_b

AUDIT = SHARED_DATA / "locomo-audit" / "ap-baseline"
JUDGE = SHARED_DATA / "cognitive-memory-benchmarks" / "locomo" / "results" / "current_sdk_20260505"


def audit_verdicts(version: str) -> np.ndarray:
    """(1540 x 3) verdicts of the three gpt-4o-mini judge runs."""
    data = json.loads((require(AUDIT / version / "ap_eval_results_scored.json")).read_text())
    items = [item for conv in sorted(data["detailed_results"]) for item in data["detailed_results"][conv]]
    return np.array([[item["llm_judgments"][f"judgment_{j}"] for j in (1, 2, 3)] for item in items], dtype=float)


def _hand_verdicts() -> np.ndarray:
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 2, 120)
    verdicts = np.where(rng.random((120, 3)) < 0.85, truth[:, None], 1 - truth[:, None]).astype(float)
    return verdicts


@pytest.mark.parametrize(
    ("statistic", "direct"),
    [
        ("fleiss_kappa", lambda v: fleiss_kappa_terms(v).value()),
        ("krippendorff_alpha_nominal", lambda v: krippendorff_alpha_terms(v, "nominal").value()),
        ("krippendorff_alpha_interval", lambda v: krippendorff_alpha_terms(v, "interval").value()),
        ("cohen_kappa", lambda v: cohen_kappa_terms(v[:, 0], v[:, 1]).value()),
    ],
)
def test_weighted_resamples_equal_recomputing_on_index_resamples(statistic: str, direct: object) -> None:
    verdicts = _hand_verdicts()
    terms = agreement_terms(verdicts, statistic)  # type: ignore[arg-type]
    rng = np.random.default_rng(9)
    for _ in range(20):
        index = rng.integers(0, len(verdicts), len(verdicts))
        weights = np.bincount(index, minlength=len(verdicts)).astype(float)
        assert callable(direct)
        expected = direct(verdicts[index])
        assert terms.finish((weights @ terms.features)[None, :])[0] == pytest.approx(expected, abs=1e-12)


def test_same_seed_same_report_different_seed_different_values() -> None:
    verdicts = _hand_verdicts()
    a = bootstrap(agreement_terms(verdicts, "fleiss_kappa"), seed=1, n_resamples=500, alpha=0.05)
    b = bootstrap(agreement_terms(verdicts, "fleiss_kappa"), seed=1, n_resamples=500, alpha=0.05)
    c = bootstrap(agreement_terms(verdicts, "fleiss_kappa"), seed=2, n_resamples=500, alpha=0.05)
    assert a == b
    assert (a.low, a.high) != (c.low, c.high)
    assert isinstance(a, BootstrapReport)
    assert a.estimate == fleiss_kappa_terms(verdicts).value()
    assert a.low < a.estimate < a.high
    assert (a.n_resamples, a.n_items, a.seed, a.alpha, a.method) == (500, 120, 1, 0.05, "percentile")


def test_interval_is_the_percentiles_of_the_resamples() -> None:
    verdicts = _hand_verdicts()
    terms = agreement_terms(verdicts, "raw_agreement")
    values = resampled_values(terms, seed=4, n_resamples=1000)
    report = bootstrap(terms, seed=4, n_resamples=1000, alpha=0.1)
    assert report.low == pytest.approx(float(np.quantile(values, 0.05)), abs=1e-15)
    assert report.high == pytest.approx(float(np.quantile(values, 0.95)), abs=1e-15)
    assert report.standard_error == pytest.approx(float(values.std(ddof=1)), abs=1e-15)


def test_undefined_resamples_are_counted() -> None:
    # Rater b disagrees once in 20 items: many resamples miss that item and have one category only for b.
    a = [1.0] * 19 + [0.0]
    b = [1.0] * 20
    terms = agreement_terms(np.column_stack([a, b]), "cohen_kappa")
    report = bootstrap(terms, seed=3, n_resamples=400, alpha=0.05)
    assert report.estimate == 0.0  # p_o = p_e = 0.95
    assert 0 < report.n_undefined < 400


def test_many_statistics_at_once_give_each_its_own_bootstrap() -> None:
    v = _hand_verdicts()
    terms = [agreement_terms(v, "fleiss_kappa"), agreement_terms(v[:40], "raw_agreement"),
             agreement_terms(v[:0], "unanimity"), agreement_terms(v, "unanimity")]  # fmt: skip
    many = bootstrap_many(terms, seed=11, n_resamples=500, alpha=0.1)
    alone = [bootstrap(t, seed=11, n_resamples=500, alpha=0.1) for t in terms]
    assert [repr(r) for r in many] == [repr(r) for r in alone]  # equal to the last bit, NaN included
    # The numbers of the code before bootstrap and the judges' bootstrap_many shared their draws (d6aa254).
    pinned = [(many[i].low, many[i].high, many[i].standard_error) for i in (0, 1, 3)]
    assert pinned == [
        (0.2323837587604221, 0.4312315240344509, 0.06063869874134996),
        (0.5499999999999999, 0.7166666666666666, 0.05177847922361479),
        (0.43333333333333335, 0.5833333333333334, 0.04493848934419096),
    ]
    assert many[2].n_undefined == 500 and many[2].n_items == 0
    with pytest.raises(ValueError, match="same items"):
        resampled_together(terms[:2], seed=11, n_resamples=10)
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_many(terms, seed=11, n_resamples=0, alpha=0.1)


def test_kendall_tau_bootstrap() -> None:
    rng = np.random.default_rng(8)
    quality = np.array([0.9, 0.7, 0.5, 0.3])
    scores_a = (rng.random((300, 4)) < quality).astype(float)
    scores_b = (rng.random((300, 4)) < quality).astype(float)
    scores_b[0, 0] = np.nan
    report = bootstrap_kendall_tau(scores_a, scores_b, seed=5, n_resamples=300, alpha=0.05)
    expected = kendall_tau_b(np.nanmean(scores_a, axis=0), np.nanmean(scores_b, axis=0))
    assert report.estimate == pytest.approx(expected, abs=1e-12)
    assert report.low <= report.estimate <= report.high <= 1.0


def test_bad_parameters_named() -> None:
    verdicts = _hand_verdicts()
    with pytest.raises(ValueError, match="alpha must be in"):
        bootstrap(agreement_terms(verdicts, "fleiss_kappa"), seed=1, n_resamples=10, alpha=1.5)
    with pytest.raises(ValueError, match="n_resamples must be >= 1"):
        bootstrap(agreement_terms(verdicts, "fleiss_kappa"), seed=1, n_resamples=0, alpha=0.05)
    with pytest.raises(ValueError, match="two distinct columns"):
        bootstrap(agreement_terms(verdicts, "cohen_kappa", (0, 0)), seed=1, n_resamples=10, alpha=0.05)
    with pytest.raises(ValueError, match="unknown statistic"):
        bootstrap(agreement_terms(verdicts, "accuracy"), seed=1, n_resamples=10, alpha=0.05)  # type: ignore[arg-type]


def test_locomo_audit_fleiss_interval() -> None:
    verdicts = audit_verdicts("v2")
    report = bootstrap(agreement_terms(verdicts, "fleiss_kappa"), seed=20260401, n_resamples=2000, alpha=0.05)
    assert report.estimate == pytest.approx(0.9610801911732014, abs=1e-12)
    assert report.n_items == 1540 and report.n_undefined == 0
    assert 0.94 < report.low < report.estimate < report.high < 0.98


def test_cognitive_memory_kappa_interval_is_wide_on_50_items() -> None:
    data = json.loads(require(JUDGE / "judge_reliability.json").read_text())
    verdicts = np.array([[r["original_verdict"], r["alt_verdict"]] for r in data["all_results"]], dtype=float)
    report = bootstrap(agreement_terms(verdicts, "cohen_kappa"), seed=42, n_resamples=4000, alpha=0.05)
    assert round(report.estimate, 4) == 0.8792
    assert report.high - report.low > 0.15
    assert report.low < 0.8 and report.high == pytest.approx(1.0, abs=0.05)
