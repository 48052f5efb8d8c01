from __future__ import annotations

from memeval_core.rounding import js_round, ms, ratio


def test_half_rounds_up_like_javascript() -> None:
    # Math.round(0.5) == 1 and Math.round(-0.5) == -0 in JavaScript: half toward +infinity.
    assert js_round(0.00005, 4) == 0.0001
    assert js_round(2.5, 0) == 3.0
    assert js_round(-2.5, 0) == -2.0


def test_ratio_and_ms() -> None:
    assert ratio(0.05583333) == 0.0558
    assert ratio(None) is None
    assert ms(13.494805) == 13.49
