"""Typed field access and verdicts shared by the QA importers: the exact-type shortcuts must agree with the checks."""

from __future__ import annotations

import math
from typing import Any

import pytest

from memeval_core.errors import IngestError
from memeval_core.qa.importers import _common
from memeval_core.qa.importers._common import Source, binary_verdict, need, number, opt

SRC = Source("runs/r.json", "0" * 64, None)
WHERE: list[int | str] = ["results", 3]


class Text(str):
    """A str subclass: not the exact type, so it takes the full check (and passes it)."""


@pytest.mark.parametrize(
    ("value", "types", "ok"),
    [
        ("a", str, True),
        (Text("a"), str, True),
        (3, (int, str), True),
        ("3", (int, str), True),
        (True, (int, str), False),  # bools never count as numbers
        (True, (bool, int), True),
        (1.5, (int, float), True),
        (1.5, int, False),
        (None, str, False),
        ([], dict, False),
    ],
)
def test_need_and_opt_accept_exactly_what_the_check_allows(value: Any, types: Any, ok: bool) -> None:
    item = {"f": value}
    if ok:
        assert need(SRC, item, "f", WHERE, types) is value
        assert opt(SRC, item, "f", WHERE, types) is value
        return
    with pytest.raises(IngestError, match=r"\$\.results\[3\]\.f: expected") as err:
        need(SRC, item, "f", WHERE, types)
    assert err.value.file == "runs/r.json"
    if value is not None:
        with pytest.raises(IngestError, match="expected"):
            opt(SRC, item, "f", WHERE, types)
    else:
        assert opt(SRC, item, "f", WHERE, types) is None


def test_need_names_a_missing_field_and_opt_allows_it() -> None:
    with pytest.raises(IngestError, match=r"\$\.results\[3\]\.f: missing field 'f'"):
        need(SRC, {}, "f", WHERE, str)
    assert opt(SRC, {}, "f", WHERE, str) is None


@pytest.mark.parametrize(("value", "expected"), [(2, 2.0), (0, 0.0), (1.25, 1.25), (-0.0, -0.0), (None, None)])
def test_number_returns_floats(value: Any, expected: float | None) -> None:
    got = number(SRC, {"t": value}, "t", WHERE)
    assert got == expected and (got is None or type(got) is float)
    if expected is not None:
        assert math.copysign(1.0, got) == math.copysign(1.0, expected)  # type: ignore[arg-type]
    assert number(SRC, {}, "t", WHERE) is None


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (-1, "expected a finite non-negative number, got -1"),
        (-0.5, "expected a finite non-negative number, got -0.5"),
        (math.inf, "expected a finite non-negative number, got inf"),
        (math.nan, "expected a finite non-negative number, got nan"),
        (True, "expected an integer or a number, got True"),
        ("3", "expected an integer or a number, got '3'"),
        # msgspec parses a JSON number beyond any float as an int: an error, not an OverflowError.
        (10**400, "expected a finite non-negative number, got an integer too large for a float"),
    ],
)
def test_number_rejects_what_is_not_a_finite_non_negative_number(value: Any, message: str) -> None:
    with pytest.raises(IngestError, match=rf"\$\.results\[3\]\.t: {message}"):
        number(SRC, {"t": value}, "t", WHERE)


def test_binary_verdicts_are_shared_per_score_judge_model_and_label() -> None:
    a = binary_verdict(SRC, True, WHERE, "j", "m", "YES")
    assert a is not None and a.score == 1.0 and a.label == "YES"
    assert binary_verdict(SRC, True, ["elsewhere"], "j", "m", "YES") is a
    assert binary_verdict(SRC, 1, WHERE, "j", "m", "YES") is a  # the same verdict, interned
    assert binary_verdict(SRC, " 1 ", WHERE, "j", "m", "YES") is a
    assert binary_verdict(SRC, True, WHERE, "j", "m", "NO") is not a
    assert binary_verdict(SRC, True, WHERE, "other", "m", "YES") is not a
    zero, negative_zero = binary_verdict(SRC, 0, WHERE, "k"), binary_verdict(SRC, -0.0, WHERE, "k")
    assert zero is not None and negative_zero is not None
    assert math.copysign(1.0, zero.score) == 1.0 and math.copysign(1.0, negative_zero.score) == -1.0
    assert binary_verdict(SRC, None, WHERE, "k") is None


@pytest.mark.parametrize("value", [2, "yes", 0.5, [], {"a": 1}])
def test_a_bad_binary_verdict_fails_every_time_with_its_location(value: Any) -> None:
    for _ in range(2):
        with pytest.raises(IngestError, match=r"\$\.results\[3\]\.v: a binary verdict must be true/false or 0/1"):
            binary_verdict(SRC, value, [*WHERE, "v"], "j")


def test_a_graded_score_beyond_any_float_is_an_ingest_error() -> None:
    with pytest.raises(IngestError, match="integer too large for a float"):
        _common.graded_verdict(SRC, 10**400, WHERE, "j", "unit")
