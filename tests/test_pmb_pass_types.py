from __future__ import annotations

from memeval_core.pmb.pass_types import classify_pass


def test_failed_case_has_no_pass_type() -> None:
    assert classify_pass(False, 1.0, "Alias resolution") is None


def test_positive_precision_is_active_in_any_category() -> None:
    assert classify_pass(True, 1.0, "Scope disambiguation") == "active_retrieval"


def test_zero_precision_is_not_active() -> None:
    # isolation-user-scoping passes with precision 0.0 (no gold set): structural, not active.
    assert classify_pass(True, 0.0, "Cross-user isolation") == "structural"


def test_structural_vs_trivially_empty_by_category() -> None:
    assert classify_pass(True, None, "Budget eviction and capacity") == "structural"
    assert classify_pass(True, None, "Design boundary cases") == "trivially_empty"
    assert classify_pass(True, None, "Cold start behavior") == "trivially_empty"
    assert classify_pass(True, None, "Session-level noise isolation") == "trivially_empty"
