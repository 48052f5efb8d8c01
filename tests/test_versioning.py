from __future__ import annotations

import pytest

from memeval_core.versioning import migrate


def test_steps_through_each_migration() -> None:
    steps = {1: lambda d: {"schema_version": 2, "b": d["a"]}, 2: lambda d: {**d, "c": d["b"] * 2}}
    assert migrate({"schema_version": 1, "a": 3}, 3, steps) == {"schema_version": 3, "b": 3, "c": 6}
    assert migrate({"x": 1}, 3, steps) == {"x": 1, "schema_version": 3}
    assert migrate([1], 3, steps) == [1]


@pytest.mark.parametrize(
    ("version", "message"), [(True, "integer"), ("2", "integer"), (4, "newer"), (0, "does not exist")]
)
def test_refuses_bad_versions(version: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        migrate({"schema_version": version}, 3, {})
