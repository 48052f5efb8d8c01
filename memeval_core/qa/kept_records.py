"""Questions built column by column from importer records that validation would keep exactly as they are.

An importer assembles one dict per question and :func:`memeval_core.qa.importers._common.build_run`
validates the run. For the shared data that is 16,000 questions at about 5 µs each, most of it spent
building the instances one by one. When every value of every field already has the exact type (and lies
in the range) that validation accepts and returns unchanged, the result of validation is known: these
values, the defaults of the missing fields, every key present as set. :func:`kept_questions`
then checks each field once over all records (``set(map(type, column))``, ``min``/``max``/``sum`` of a
numeric column) and builds the instances with C-level ``map`` calls.

Anything else returns None and the caller validates as before, so every accepted run is equal to what
pydantic builds and every error is pydantic's own: a value of another type (an ``int`` for a float field,
which validation converts; a ``str`` subclass; a bool for an int), an out-of-range or non-finite number,
a list item that is not a ``str``, a verdict that fails its scale check, a missing required field or a
missing field whose default is mutable, records that are not dicts or whose keys differ (in set, or in the
order of keys that are not fields).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from itertools import chain, repeat
from operator import itemgetter
from typing import Any, Final

from memeval_core.qa.lazy import build_objects
from memeval_core.qa.models import QaQuestion, Verdict

_NONE: type = type(None)
_STR: Final = frozenset[type]({str})
_OPT_STR: Final = frozenset[type]({str, _NONE})
_OPT_INT: Final = frozenset[type]({int, _NONE})
_BOOL: Final = frozenset[type]({bool})
_OPT_BOOL: Final = frozenset[type]({bool, _NONE})
_OPT_FLOAT: Final = frozenset[type]({float, _NONE})
_OPT_LIST: Final = frozenset[type]({list, _NONE})
_LIST: Final = frozenset[type]({list})

KEPT_TYPES: Final[dict[str, frozenset[type]]] = {
    "benchmark": _STR,
    "question_id": _STR,
    "question": _STR,
    "conversation": _OPT_STR,
    "question_index": _OPT_INT,
    "category": _OPT_STR,
    "category_name": _OPT_STR,
    "kind": _OPT_STR,
    "gold_answer": _OPT_STR,
    "answer": _OPT_STR,
    "retrieved_ids": _OPT_LIST,
    "gold_evidence_ids": _OPT_LIST,
    "verdicts": _LIST,
    "latency_ms": _OPT_FLOAT,
    "retrieval_latency_ms": _OPT_FLOAT,
    "tokens": _OPT_INT,
    "error": _BOOL,
    "error_message": _OPT_STR,
    "scored": _BOOL,
    "is_abstention": _OPT_BOOL,
    "abstained": _OPT_BOOL,
    "mpa": _OPT_FLOAT,
    "faa": _OPT_FLOAT,
}
"""Per field of :class:`QaQuestion`: the exact classes whose values validation keeps as they are."""

_UPPER: Final[dict[str, float]] = {"latency_ms": math.inf, "retrieval_latency_ms": math.inf, "mpa": 1.0, "faa": 1.0}
"""Float fields: every value must be finite, at least 0 and at most this."""

_STR_ITEMS: Final = ("retrieved_ids", "gold_evidence_ids")
"""``list[str]`` fields."""

_REQUIRED: Final = frozenset(n for n, f in QaQuestion.model_fields.items() if f.is_required())
_MUTABLE_DEFAULT: Final = frozenset(
    n for n, f in QaQuestion.model_fields.items() if not f.is_required() and isinstance(f.default, list | dict | set)
)
_NEEDED: Final = _REQUIRED | _MUTABLE_DEFAULT
"""Fields a record must have: validation reports the required ones missing, and copies mutable defaults."""
_DEFAULTS: Final[dict[str, Any]] = {
    n: (None if f.is_required() else f.default) for n, f in QaQuestion.model_fields.items()
}
"""Every field in declaration order (the order of a validated instance's ``__dict__``)."""


def kept_questions(records: Sequence[Any]) -> list[QaQuestion] | None:
    """The :class:`QaQuestion` of each record, as validation would build it, or None to leave it to validation.

    Lists (ids, verdicts) are taken over rather than copied as validation copies them: an importer's
    records are built for the one run, and questions are frozen. The keys are taken to be the ``str``
    objects they look like (the first record's are checked; importers write them as literals).
    """
    if not records or set(map(type, records)) != {dict}:
        return None
    keys = tuple(records[0])
    if not set(keys) >= _NEEDED or set(map(type, keys)) != {str} or set(map(len, records)) != {len(keys)}:
        return None
    extra = [k for k in keys if k not in _DEFAULTS]
    # Validation keeps extra keys in each record's order (a field's place in a record does not matter), and
    # refuses a key it cannot read as UTF-8 (a lone surrogate, which a JSON escape can make).
    if extra and (len(set(map(tuple, records))) != 1 or not _utf8("".join(extra))):
        return None
    try:
        # With as many keys as the first record, a record holding all of them holds no other.
        columns = {key: list(map(itemgetter(key), records)) for key in keys}
    except KeyError:
        return None
    for key in keys:
        if key in _DEFAULTS and not _column_kept(key, columns[key]):
            return None
    n = len(records)
    dicts = list(map(_DEFAULTS.__or__, records))
    for key in extra:
        deque(map(dict.pop, dicts, repeat(key)), 0)
    if extra:
        values = zip(*(columns[k] for k in extra), strict=True)
        extras: Any = map(dict, map(zip, repeat(extra), values))
    else:
        extras = map(dict.copy, repeat({}, n))
    # Validation adds the fields present in declaration order, then the extra keys: the same order of
    # insertion gives the same set, down to its iteration order (and so its repr and pickle).
    fields_set = [k for k in _DEFAULTS if k in records[0]] + extra
    return build_objects(
        QaQuestion,
        dicts,
        ("__pydantic_fields_set__", map(set, repeat(fields_set, n))),
        ("__pydantic_extra__", extras),
        ("__pydantic_private__", repeat(None, n)),
    )


def _utf8(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _column_kept(key: str, column: list[Any]) -> bool:
    """Whether validation keeps every value of this field's column as it is."""
    classes = set(map(type, column))
    if key not in KEPT_TYPES or not classes <= KEPT_TYPES[key]:  # a field added to the model but not here
        return False
    present = [v for v in column if v is not None] if _NONE in classes else column
    if not present:
        return True
    if key in _UPPER:
        # sum() is NaN or infinite when any value is (or, harmlessly, when the values overflow together).
        return min(present) >= 0.0 and max(present) <= _UPPER[key] and math.isfinite(sum(present))
    if key in _STR_ITEMS:
        return set(map(type, chain.from_iterable(present))) <= _STR
    if key == "verdicts":
        return _verdicts_kept(present)
    return True


def _verdicts_kept(lists: list[list[Any]]) -> bool:
    """Every item a :class:`Verdict` that passes the check validation runs again on instances."""
    # A run shares a handful of interned verdicts among thousands of questions: each is checked once.
    distinct = dict(zip(map(id, chain.from_iterable(lists)), chain.from_iterable(lists), strict=True)).values()
    if not set(map(type, distinct)) <= {Verdict}:
        return False
    try:
        for verdict in distinct:
            verdict._score_in_scale()
    except ValueError:
        return False
    return True
