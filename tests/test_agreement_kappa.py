"""Raw agreement, unanimity, Cohen's and Fleiss' kappa against hand values, statsmodels and the real
three-verdict LoCoMo-audit data and the two-verdict cognitive-memory judge-reliability sample."""

from __future__ import annotations

import json
import math
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from _data import SHARED_DATA, require

from memeval_core.agreement.kappa import (
    as_verdict_matrix,
    cohen_kappa_terms,
    fleiss_kappa_terms,
    raw_agreement_terms,
    unanimity_terms,
)

inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")

AUDIT = SHARED_DATA / "locomo-audit" / "ap-baseline"
JUDGE = SHARED_DATA / "cognitive-memory-benchmarks" / "locomo" / "results" / "current_sdk_20260505"


def audit_verdicts(version: str) -> np.ndarray:
    """(1540 x 3) verdicts of the three gpt-4o-mini judge runs on the deliberately wrong ap-baseline answers."""
    data = json.loads((require(AUDIT / version / "ap_eval_results_scored.json")).read_text())
    items = [item for conv in sorted(data["detailed_results"]) for item in data["detailed_results"][conv]]
    return np.array([[item["llm_judgments"][f"judgment_{j}"] for j in (1, 2, 3)] for item in items], dtype=float)


def judge_reliability(path: Path) -> tuple[np.ndarray, dict[str, object]]:
    """(50 x 2) original vs alternative judge verdicts and the file's stated summary."""
    data = json.loads(require(path).read_text())
    verdicts = np.array([[r["original_verdict"], r["alt_verdict"]] for r in data["all_results"]], dtype=float)
    return verdicts, data


def statsmodels_cohen(a: np.ndarray, b: np.ndarray) -> float:
    """statsmodels' cohens_kappa takes a contingency table."""
    categories = np.unique(np.concatenate([a, b]))
    table = np.zeros((len(categories), len(categories)))
    np.add.at(table, (np.searchsorted(categories, a), np.searchsorted(categories, b)), 1)
    return float(inter_rater.cohens_kappa(table).kappa)


def statsmodels_fleiss(verdicts: np.ndarray) -> float:
    table, _ = inter_rater.aggregate_raters(verdicts)
    return float(inter_rater.fleiss_kappa(table, method="fleiss"))


# ------------------------------------------------------------------ hand data


def test_cohen_hand_example() -> None:
    # 10 items: both yes 4, both no 3, a yes/b no 2, a no/b yes 1 -> p_o = 0.7,
    # p_a(yes) = 0.6, p_b(yes) = 0.5 -> p_e = 0.3 + 0.2 = 0.5 -> kappa = 0.4.
    a = [1, 1, 1, 1, 0, 0, 0, 1, 1, 0]
    b = [1, 1, 1, 1, 0, 0, 0, 0, 0, 1]
    assert cohen_kappa_terms(a, b).value() == pytest.approx(0.4, abs=1e-15)
    assert cohen_kappa_terms(a, b).value() == pytest.approx(
        statsmodels_cohen(np.array(a, float), np.array(b, float)), abs=1e-12
    )


def test_cohen_drops_items_missing_either_verdict() -> None:
    a = [1, 1, 0, None, 1]
    b = [1, 0, 0, 1, math.nan]
    # Remaining (1,1), (1,0), (0,0): p_o = 2/3, p_e = 2/3*1/3 + 1/3*2/3 = 4/9 -> (2/3 - 4/9)/(5/9) = 0.4.
    assert cohen_kappa_terms(a, b).value() == pytest.approx(0.4, abs=1e-15)


def test_cohen_three_categories_matches_statsmodels() -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(0, 3, 200).astype(float)
    b = np.where(rng.random(200) < 0.6, a, rng.integers(0, 3, 200)).astype(float)
    assert cohen_kappa_terms(a, b).value() == pytest.approx(statsmodels_cohen(a, b), abs=1e-12)


def test_cohen_undefined_when_one_category_only() -> None:
    assert math.isnan(cohen_kappa_terms([1, 1, 1], [1, 1, 1]).value())


def test_fleiss_hand_example_and_statsmodels() -> None:
    # Classic shape: 4 items x 3 raters.
    verdicts = np.array([[1, 1, 1], [1, 1, 0], [0, 0, 0], [0, 1, 0]], dtype=float)
    # P_i = 1, 1/3, 1, 1/3 -> P̄ = 2/3; p_1 = 6/12 -> P_e = 0.5 -> kappa = 1/3.
    assert fleiss_kappa_terms(verdicts).value() == pytest.approx(1 / 3, abs=1e-15)
    assert fleiss_kappa_terms(verdicts).value() == pytest.approx(statsmodels_fleiss(verdicts), abs=1e-12)
    assert raw_agreement_terms(verdicts).value() == pytest.approx(2 / 3, abs=1e-15)
    assert unanimity_terms(verdicts).value() == 0.5


def test_fleiss_drops_incomplete_items() -> None:
    verdicts = np.array([[1, 1, 1], [1, 1, 0], [0, 0, 0], [0, 1, 0], [1, None, 0]], dtype=float)
    assert fleiss_kappa_terms(verdicts).value() == pytest.approx(1 / 3, abs=1e-15)


def test_raw_agreement_uses_items_with_two_or_more_verdicts() -> None:
    verdicts = [[1, 1, None], [1, 0, None], [1, None, None]]
    assert raw_agreement_terms(verdicts).value() == 0.5
    assert unanimity_terms(verdicts).value() == 0.5


def test_pairwise_cohen() -> None:
    verdicts = np.array([[1, 1, 0], [0, 0, 0], [1, 1, 1], [0, 1, 0]], dtype=float)
    for a, b in combinations(range(3), 2):
        kappa = cohen_kappa_terms(verdicts[:, a], verdicts[:, b]).value()
        assert kappa == pytest.approx(statsmodels_cohen(verdicts[:, a], verdicts[:, b]), abs=1e-12)
    # The pair's raw agreement as the judges page computes it: the mean of the per-item "agree" feature.
    first = cohen_kappa_terms(verdicts[:, 0], verdicts[:, 1])
    assert first.features[:, 1].mean() == 0.75 and first.n_items == 4


def test_bad_input_named() -> None:
    with pytest.raises(ValueError, match="2-D"):
        as_verdict_matrix([1, 0, 1])
    with pytest.raises(ValueError, match="at least 2 raters"):
        as_verdict_matrix([[1], [0]])
    with pytest.raises(ValueError, match="numbers, bools, None or NaN"):
        as_verdict_matrix([["yes", "no"]])


# ------------------------------------------------------------------ real data


@pytest.mark.parametrize(
    ("version", "unanimous", "expected_fleiss", "expected_pairs"),
    [
        ("v1", 1522, 0.9589069526115513, (0.9557612077499645, 0.9724060079646295, 0.948681263996019)),
        ("v2", 1498, 0.9610801911732014, (0.9611181244364292, 0.9637909206004703, 0.95834084761046)),
    ],
)
def test_locomo_audit_three_judge_runs(
    version: str, unanimous: int, expected_fleiss: float, expected_pairs: tuple[float, ...]
) -> None:
    verdicts = audit_verdicts(version)
    assert verdicts.shape == (1540, 3)
    # PROVENANCE: v2 has 1,498/1,540 unanimous items.
    assert round(unanimity_terms(verdicts).value() * 1540) == unanimous
    assert fleiss_kappa_terms(verdicts).value() == pytest.approx(statsmodels_fleiss(verdicts), abs=1e-12)
    assert fleiss_kappa_terms(verdicts).value() == pytest.approx(expected_fleiss, abs=1e-12)
    for (a, b), expected in zip(combinations(range(3), 2), expected_pairs, strict=True):
        kappa = cohen_kappa_terms(verdicts[:, a], verdicts[:, b]).value()
        reference = statsmodels_cohen(verdicts[:, a], verdicts[:, b])
        assert kappa == pytest.approx(reference, abs=1e-12)
        assert kappa == pytest.approx(expected, abs=1e-12)


def test_cognitive_memory_judge_reliability_reproduces_stated_kappa() -> None:
    verdicts, data = judge_reliability(JUDGE / "judge_reliability.json")
    summary = data["summary"]
    assert isinstance(summary, dict)
    kappa = cohen_kappa_terms(verdicts[:, 0], verdicts[:, 1]).value()
    # Stated to 4 decimals: 0.8792; ours is 0.879227...
    assert round(kappa, 4) == summary["cohens_kappa"] == 0.8792
    assert kappa == pytest.approx(statsmodels_cohen(verdicts[:, 0], verdicts[:, 1]), abs=1e-12)
    assert raw_agreement_terms(verdicts).value() == pytest.approx(summary["raw_agreement"], abs=1e-15)
    # Per-category kappas are stated unrounded.
    results = data["all_results"]
    assert isinstance(results, list)
    by_category = data["by_category"]
    assert isinstance(by_category, dict)
    for name, stated in by_category.items():
        rows = np.array([r["category_name"] == name for r in results])
        sub = verdicts[rows]
        assert len(sub) == stated["n"]
        assert raw_agreement_terms(sub).value() == pytest.approx(stated["agreement"], abs=1e-12)
        assert cohen_kappa_terms(sub[:, 0], sub[:, 1]).value() == pytest.approx(stated["kappa"], abs=1e-12)
