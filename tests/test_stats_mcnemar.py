"""Exact McNemar p-values against scipy's binomial test and hand-computed values."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest

from memeval_core.stats.mcnemar import mcnemar_exact, mcnemar_exact_p

PAIRS = [(0, 0), (0, 1), (1, 0), (1, 1), (3, 3), (5, 1), (7, 8), (10, 20), (68, 0), (0, 43), (100, 130), (2, 9)]


@pytest.mark.parametrize(("b", "c"), PAIRS)
def test_matches_scipy_binomtest(b: int, c: int) -> None:
    expected = 1.0 if b + c == 0 else binomtest(min(b, c), b + c, 0.5).pvalue
    assert mcnemar_exact_p(b, c) == pytest.approx(expected, rel=1e-12, abs=0)


def test_hand_computed_values() -> None:
    # b=5, c=1: 2 * (C(6,0) + C(6,1)) / 2^6 = 14/64.
    assert mcnemar_exact_p(5, 1) == 14 / 64
    # 68 discordant cases all one way: 2 / 2^68.
    assert mcnemar_exact_p(68, 0) == 2.0**-67
    assert mcnemar_exact_p(0, 0) == 1.0
    # Balanced discordance caps at 1.
    assert mcnemar_exact_p(4, 4) == 1.0


def test_symmetric_in_b_and_c() -> None:
    assert mcnemar_exact_p(3, 11) == mcnemar_exact_p(11, 3)


def test_report_counts_from_verdicts() -> None:
    a = [True, True, True, False, False, True, False]
    b = [True, False, False, True, False, False, False]
    rep = mcnemar_exact(a, b, alpha=0.05)
    assert (rep.n, rep.both_passed, rep.b, rep.c, rep.both_failed) == (7, 1, 3, 1, 2)
    # b=3, c=1: 2 * (C(4,0) + C(4,1)) / 2^4 = 10/16.
    assert rep.p_value == 10 / 16
    assert rep.pass_rate_difference == pytest.approx(2 / 7)
    assert not rep.significant
    assert "McNemar" in rep.method


def test_significance_uses_alpha() -> None:
    rep = mcnemar_exact([True] * 6, [False] * 6, alpha=0.05)
    assert rep.p_value == pytest.approx(2 / 64)
    assert rep.significant
    assert not mcnemar_exact([True] * 6, [False] * 6, alpha=0.01).significant


def test_empty_pairs_give_p_one() -> None:
    rep = mcnemar_exact([], [])
    assert rep.p_value == 1.0 and rep.n == 0 and rep.pass_rate_difference is None


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        mcnemar_exact([True], [True, False])
    with pytest.raises(ValueError, match="non-negative"):
        mcnemar_exact_p(-1, 2)
    with pytest.raises(ValueError, match="alpha"):
        mcnemar_exact([True], [False], alpha=1.5)
