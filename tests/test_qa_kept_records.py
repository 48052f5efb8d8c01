from __future__ import annotations

import math
import pickle
from typing import Any

import pytest
from _data import SHARED_DATA, require
from pydantic import TypeAdapter, ValidationError

from memeval_core.qa.importers import _common
from memeval_core.qa.ingest import load_qa
from memeval_core.qa.kept_records import KEPT_TYPES, kept_questions
from memeval_core.qa.models import QaQuestion, QaRun, Verdict

_VALIDATE = TypeAdapter(list[QaQuestion]).validate_python
RIGHT = Verdict(judge="j", score=1.0)


def _record(i: int, **kw: Any) -> dict[str, Any]:
    return {"benchmark": "locomo", "question_id": f"q{i}", "answer": "a", "verdicts": [RIGHT], **kw}


def _same_as_validation(records: list[dict[str, Any]]) -> None:
    """kept_questions builds exactly what validation builds: values, field order, fields set, extras, pickle."""
    kept = kept_questions(records)
    assert kept is not None
    validated = _VALIDATE(records)
    assert kept == validated
    for k, v in zip(kept, validated, strict=True):
        assert type(k) is QaQuestion
        assert list(k.__dict__) == list(v.__dict__)
        assert k.model_fields_set == v.model_fields_set and k.model_extra == v.model_extra
        assert list(k.model_fields_set) == list(v.model_fields_set)  # the same order of insertion
        assert pickle.dumps(k) == pickle.dumps(v) and repr(k) == repr(v)
        assert list(k.model_dump()) == list(v.model_dump()) and k.model_dump_json() == v.model_dump_json()
        assert pickle.loads(pickle.dumps(k)) == v


def test_every_field_of_the_model_has_its_kept_types() -> None:
    assert set(KEPT_TYPES) == set(QaQuestion.model_fields)


def test_records_of_exact_types_are_built_as_validation_builds_them() -> None:
    full = {
        "question": "what?",
        "conversation": "conv-26",
        "question_index": 3,
        "category": "2",
        "category_name": "temporal",
        "kind": "temporal",
        "gold_answer": None,
        "retrieved_ids": ["D1:2", "D1:3"],
        "gold_evidence_ids": [],
        "latency_ms": 0.0,
        "retrieval_latency_ms": None,
        "tokens": 12,
        "error": False,
        "error_message": None,
        "scored": True,
        "is_abstention": None,
        "abstained": True,
        "mpa": 1.0,
        "faa": 0.0,
    }
    _same_as_validation([_record(0, **full), _record(1, **{**full, "latency_ms": 1e12, "mpa": None})])
    _same_as_validation([_record(0), _record(1, verdicts=[])])


def test_extra_keys_stay_extra_in_their_order() -> None:
    records = [_record(i, note=f"n{i}", metrics={"r@5": 0.5}) for i in range(3)]
    _same_as_validation(records)
    kept = kept_questions(records)
    assert kept is not None and list(kept[0].model_extra or {}) == ["note", "metrics"]
    assert "note" not in kept[0].__dict__


@pytest.mark.parametrize(
    "change",
    [
        {"latency_ms": 5},  # an int: validation converts it to a float
        {"latency_ms": -1.0},
        {"latency_ms": math.nan},
        {"latency_ms": math.inf},
        {"mpa": 1.5},
        {"faa": -0.0 - 1e-9},
        {"question_index": True},  # a bool is no int here
        {"tokens": 2.0},
        {"scored": 1},
        {"answer": type("Text", (str,), {})("a")},  # a str subclass becomes a str
        {"gold_evidence_ids": ["D1:1", 3]},
        {"retrieved_ids": ("D1:1",)},
        {"verdicts": [{"judge": "j", "score": 1}]},  # a dict: validation builds the Verdict
        {"verdicts": [Verdict.model_construct(judge="j", score=0.5, scale="binary")]},  # fails its check
        {"question": None},
    ],
)
def test_anything_validation_would_convert_or_refuse_is_left_to_validation(change: dict[str, Any]) -> None:
    records = [_record(0), _record(1, **change)]
    assert kept_questions(records) is None


def test_records_of_other_shapes_are_left_to_validation() -> None:
    assert kept_questions([]) is None
    assert kept_questions([_record(0), [("benchmark", "locomo")]]) is None
    no_verdicts = {k: v for k, v in _record(1).items() if k != "verdicts"}  # the default list is copied
    assert kept_questions([no_verdicts]) is None
    no_id = {k: v for k, v in _record(1).items() if k != "question_id"}
    assert kept_questions([no_id]) is None
    reordered = dict(reversed(list(_record(1).items())))
    _same_as_validation([_record(0), reordered])  # a field's place in the record does not matter
    with_extra = [_record(0, note="a", tag="b"), dict(reversed(list(_record(1, note="a", tag="b").items())))]
    assert kept_questions(with_extra) is None  # extras keep each record's order
    assert kept_questions([_record(0), {**_record(1), "note": "n"}]) is None
    assert kept_questions([_record(0, note="n"), _record(1, tag="t")]) is None  # as many keys, not the same
    assert kept_questions([_record(0), _record(1, note="n")]) is None
    assert kept_questions([_record(0, mpa=None, extra_field=1)]) is not None
    assert kept_questions([{**_record(0), 3: "x"}]) is None  # a key that is no string
    assert kept_questions([_record(0, **{"\ud800": 1})]) is None  # validation cannot read it as UTF-8
    with pytest.raises(ValidationError):
        _VALIDATE([_record(0, **{"\ud800": 1})])


def test_build_run_reports_what_validation_reports() -> None:
    src = _common.Source("r.json", "0" * 64, None)
    meta = {"benchmark": "locomo", "system": "s"}
    with pytest.raises(Exception, match=r"r\.json: \$\.latency_ms") as info:
        _common.build_run(src, meta, [_record(0), _record(1, latency_ms=-2.0)])
    assert "greater than or equal to 0" in str(info.value)
    run = _common.build_run(src, meta, [_record(0), _record(1, latency_ms=2)])
    assert run.questions[1].latency_ms == 2.0 and type(run.questions[1].latency_ms) is float
    with pytest.raises(ValidationError):
        QaRun.model_validate({"run": meta, "questions": [_record(0, verdicts=[{"judge": "j", "score": 2}])]})


def test_every_shared_run_is_built_as_validation_builds_it(monkeypatch: pytest.MonkeyPatch) -> None:
    require(SHARED_DATA)
    monkeypatch.setenv("MEMEVAL_WORKERS", "1")
    seen: list[int] = []

    def checked(records: list[dict[str, Any]]) -> list[QaQuestion] | None:
        kept = kept_questions(records)
        if kept is not None:
            validated = _VALIDATE(records)
            assert kept == validated
            assert [list(q.__dict__) for q in kept] == [list(q.__dict__) for q in validated]
            assert [list(q.model_fields_set) for q in kept] == [list(q.model_fields_set) for q in validated]
            assert [q.model_extra for q in kept] == [q.model_extra for q in validated]
            seen.append(len(kept))
        return kept

    monkeypatch.setattr(_common, "kept_questions", checked)
    load = load_qa(SHARED_DATA)
    # Every importer of the shared data assembles records of exact types: all of them take the fast path.
    assert len(seen) >= 40 and sum(seen) >= 15_000
    assert len(load.runs) >= 25
