"""JavaScript number behaviour the harness's figures depend on."""

from __future__ import annotations

import math


def math_round(x: float) -> float:
    """``Math.round``: the nearest integer, halves towards +inf (``x - floor(x)`` is exact, unlike ``x + 0.5``)."""
    low = math.floor(x)
    return float(low + 1 if x - low >= 0.5 else low)


def js_round(value: float, digits: int) -> float:
    """``Math.round(value * 10**digits) / 10**digits``, as the harness rounds its figures."""
    scale = 10.0**digits
    return math_round(value * scale) / scale


def js_sum(values: list[float]) -> float:
    """``values.reduce((s, v) => s + v, 0)``: left to right, not compensated."""
    total = 0.0
    for v in values:
        total += v
    return total
