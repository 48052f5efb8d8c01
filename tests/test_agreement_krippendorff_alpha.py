"""Krippendorff's alpha (nominal, interval, missing values) against hand values, the krippendorff package and
the real three-verdict LoCoMo-audit data."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from _data import SHARED_DATA, require

from memeval_core.agreement.krippendorff_alpha import krippendorff_alpha_terms

krippendorff = pytest.importorskip("krippendorff")

AUDIT = SHARED_DATA / "locomo-audit" / "ap-baseline"

# Krippendorff (2011) "Computing Krippendorff's alpha-reliability", the 4 observers x 12 units example
# (observers are rows there; we use items x raters, the transpose). None = missing.
K2011_RATERS = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    ],
    dtype=float,
)


def audit_verdicts(version: str) -> np.ndarray:
    """(1540 x 3) verdicts of the three gpt-4o-mini judge runs."""
    data = json.loads((require(AUDIT / version / "ap_eval_results_scored.json")).read_text())
    items = [item for conv in sorted(data["detailed_results"]) for item in data["detailed_results"][conv]]
    return np.array([[item["llm_judgments"][f"judgment_{j}"] for j in (1, 2, 3)] for item in items], dtype=float)


def reference(verdicts: np.ndarray, level: str) -> float:
    return float(krippendorff.alpha(reliability_data=verdicts.T, level_of_measurement=level))


def test_published_example_nominal_and_interval() -> None:
    items = K2011_RATERS.T
    # Published values: nominal 0.743, interval 0.849.
    assert krippendorff_alpha_terms(items, "nominal").value() == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha_terms(items, "interval").value() == pytest.approx(0.849, abs=5e-4)
    assert krippendorff_alpha_terms(items, "nominal").value() == pytest.approx(reference(items, "nominal"), abs=1e-12)
    assert krippendorff_alpha_terms(items, "interval").value() == pytest.approx(reference(items, "interval"), abs=1e-12)


def test_hand_example_two_raters_nominal() -> None:
    # Items (a,b): (1,1), (1,0), (0,0), (0,0). n = 8 values, n_1 = 3, n_0 = 5.
    # Σ_u within = 2 (only item 2 disagrees: m² − Σ n² = 4 − 2 = 2, /(m−1) = 2).
    # alpha = 1 − (n − 1) · 2 / (n² − Σ n_c²) = 1 − 7·2 / (64 − 34) = 1 − 14/30.
    verdicts = [[1, 1], [1, 0], [0, 0], [0, 0]]
    assert krippendorff_alpha_terms(verdicts).value() == pytest.approx(1 - 14 / 30, abs=1e-15)


def test_unpairable_items_are_ignored() -> None:
    base = [[1, 1], [1, 0], [0, 0], [0, 0]]
    with_lonely = [*base, [1, None], [None, None]]
    assert krippendorff_alpha_terms(with_lonely).value() == krippendorff_alpha_terms(base).value()


def test_random_data_with_missing_matches_package() -> None:
    rng = np.random.default_rng(11)
    for raters in (2, 3, 5):
        truth = rng.integers(0, 4, 300)
        verdicts = np.where(rng.random((300, raters)) < 0.7, truth[:, None], rng.integers(0, 4, (300, raters)))
        verdicts = verdicts.astype(float)
        verdicts[rng.random((300, raters)) < 0.15] = np.nan
        for level in ("nominal", "interval"):
            assert krippendorff_alpha_terms(verdicts, level).value() == pytest.approx(
                reference(verdicts, level), abs=1e-12
            )


def test_interval_is_shift_invariant_for_large_values() -> None:
    rng = np.random.default_rng(5)
    values = rng.normal(size=(100, 3))
    shifted = values + 1e9
    assert krippendorff_alpha_terms(shifted, "interval").value() == pytest.approx(
        krippendorff_alpha_terms(values, "interval").value(), abs=1e-9
    )


def test_undefined_when_no_variation() -> None:
    assert math.isnan(krippendorff_alpha_terms([[1, 1], [1, 1]]).value())
    assert math.isnan(krippendorff_alpha_terms([[2.5, 2.5], [2.5, 2.5]], "interval").value())
    assert math.isnan(krippendorff_alpha_terms([[1, None], [None, 0]]).value())


def test_unknown_level_named() -> None:
    with pytest.raises(ValueError, match="level must be 'nominal' or 'interval'"):
        krippendorff_alpha_terms([[1, 0]], "ordinal")  # type: ignore[arg-type]


@pytest.mark.parametrize(("version", "expected"), [("v1", 0.9589158472105549), ("v2", 0.9610886153742472)])
def test_locomo_audit_three_judge_runs(version: str, expected: float) -> None:
    verdicts = audit_verdicts(version)
    alpha = krippendorff_alpha_terms(verdicts, "nominal").value()
    assert alpha == pytest.approx(reference(verdicts, "nominal"), abs=1e-12)
    assert alpha == pytest.approx(expected, abs=1e-12)
    # For binary verdicts interval and nominal alpha coincide.
    assert krippendorff_alpha_terms(verdicts, "interval").value() == pytest.approx(alpha, abs=1e-12)
