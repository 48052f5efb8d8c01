"""A pydantic model's pickled state, and the model rebuilt from it without pydantic's ``__setstate__``.

Warm starts unpickle thousands of models (PMB per-belief timings and per-category breakdowns, every QA run's
metadata): one call that sets the four state attributes directly costs a fraction of pydantic's
``__setstate__``, and gives the same object.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

State = tuple[dict[str, Any], dict[str, Any] | None, set[str], dict[str, Any] | None]
"""``__dict__``, ``__pydantic_extra__``, ``__pydantic_fields_set__`` and ``__pydantic_private__``."""


def state_of(model: BaseModel) -> State:
    """What :func:`restore` needs to rebuild ``model`` (the objects themselves, not copies)."""
    return (model.__dict__, model.__pydantic_extra__, model.__pydantic_fields_set__, model.__pydantic_private__)


def restore(
    cls: type[M], d: dict[str, Any], extra: dict[str, Any] | None, fields_set: set[str], private: dict[str, Any] | None
) -> M:
    """An instance of ``cls`` with this state, built without ``__init__`` or validation (as unpickling does)."""
    model = cls.__new__(cls)
    setattr_ = object.__setattr__
    setattr_(model, "__dict__", d)
    setattr_(model, "__pydantic_extra__", extra)
    setattr_(model, "__pydantic_fields_set__", fields_set)
    setattr_(model, "__pydantic_private__", private)
    return model
