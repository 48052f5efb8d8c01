"""A pydantic model rebuilt from its state: the same object as unpickling with pydantic's own __setstate__ gives."""

from __future__ import annotations

import pickle

from pydantic import BaseModel, ConfigDict, field_validator

from memeval_core.model_state import restore, state_of


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    name: str
    score: float = 0.0

    @field_validator("score")
    @classmethod
    def _in_range(cls, v: float) -> float:
        if not 0 <= v <= 1:
            raise ValueError("out of range")
        return v


def test_restore_rebuilds_the_same_state_as_pydantic_unpickling() -> None:
    model = _Model.model_validate({"name": "a", "note": [1]})
    rebuilt = restore(_Model, *state_of(model))
    by_pydantic = pickle.loads(pickle.dumps(model))
    assert type(rebuilt) is _Model and rebuilt == model == by_pydantic
    assert state_of(rebuilt) == state_of(by_pydantic)
    assert rebuilt.model_fields_set == {"name", "note"} and rebuilt.model_extra == {"note": [1]}
    assert all(a is b for a, b in zip(state_of(rebuilt), state_of(model), strict=True))  # the objects, not copies


def test_restore_validates_nothing_as_unpickling_does() -> None:
    d = {"name": "a", "score": 7.0}
    odd = restore(_Model, d, None, {"name", "score"}, None)
    assert odd.score == 7.0 and odd.__dict__ is d
