"""Pass types: what a pass is worth.

- ``active_retrieval``: the case passed with a positive retrieval precision, i.e. the system
  returned the gold beliefs and nothing else. It cannot be had by returning everything or nothing.
- ``structural``: the case passed in a structural category (scope, supersession, type routing,
  persona prelude, budget, ranking, cross-user isolation) without a positive precision.
- ``trivially_empty``: any other pass; a system that returns nothing gets these too.

The category split reproduces the pass types stated by every current upstream baseline report.
Reports written before upstream's "Restructure results json" counted every non-null precision as
active and every other pass as trivially empty; verification flags those.
"""

from __future__ import annotations

from typing import Literal

PassType = Literal["active_retrieval", "structural", "trivially_empty"]
PASS_TYPES: tuple[PassType, ...] = ("active_retrieval", "structural", "trivially_empty")

STRUCTURAL_CATEGORIES = frozenset(
    {
        "Scope disambiguation",
        "Supersession chain exclusion",
        "Type routing and open questions",
        "Persona prelude content",
        "Budget eviction and capacity",
        "Ranking stability",
        "Cross-user isolation",
    }
)


def classify_pass(passed: bool, precision: float | None, category: str) -> PassType | None:
    """Pass type of one case; None when the case failed."""
    if not passed:
        return None
    if precision is not None and precision > 0:
        return "active_retrieval"
    if category in STRUCTURAL_CATEGORIES:
        return "structural"
    return "trivially_empty"
