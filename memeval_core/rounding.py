"""The one rounding rule memeval uses for every number it states.

PMB's harness rounds with JavaScript's ``Math.round(x * 10**n) / 10**n`` (half up, toward +inf);
memeval states numbers the same way so that re-derived values compare equal to stated ones.
Ratios (precision, recall, pass rate, drift) keep 4 decimals, milliseconds 2.
"""

from __future__ import annotations

import math

RATIO_DECIMALS = 4
MS_DECIMALS = 2
MAX_MS = 1e12
"""The longest duration a file may state, in milliseconds (about 32 years): a larger one is an error in the file.
Bounding it keeps every sum and rounding of durations finite (``value * 10**decimals`` cannot overflow)."""


def js_round(value: float, decimals: int) -> float:
    """Round like ``Math.round(value * 10**decimals) / 10**decimals`` in JavaScript."""
    scale = 10.0**decimals
    return math.floor(value * scale + 0.5) / scale


def ratio(value: float | None) -> float | None:
    """Round a ratio in [0, 1] to 4 decimals; None stays None."""
    return None if value is None else js_round(value, RATIO_DECIMALS)


def ms(value: float | None) -> float | None:
    """Round a duration in milliseconds to 2 decimals; None stays None."""
    return None if value is None else js_round(value, MS_DECIMALS)
