from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from memeval_core.qa.importers import native
from memeval_core.qa.ingest import load_qa, read_source
from memeval_core.qa.models import SCHEMA_VERSION, QaQuestion, QaRun, Verdict

RUN = {"benchmark": "locomo", "system": "s", "includes_adversarial": False}


def _q(i: int, **kw: object) -> dict[str, object]:
    return {"benchmark": "locomo", "question_id": f"conv-26-q{i}", "answer": "a", **kw}


def test_round_trip_and_extra_fields_kept() -> None:
    doc = {"schema_version": 1, "run": {**RUN, "harness": "h1"}, "questions": [_q(0, note="n")]}
    run = QaRun.model_validate(doc)
    assert run.run.model_extra == {"harness": "h1"}
    assert run.questions[0].model_extra == {"note": "n"}
    again = QaRun.model_validate_json(run.model_dump_json())
    assert again == run


def test_missing_version_reads_as_current_and_newer_is_refused() -> None:
    assert QaRun.model_validate({"run": RUN, "questions": []}).schema_version == SCHEMA_VERSION
    with pytest.raises(ValidationError, match="newer than this memeval"):
        QaRun.model_validate({"schema_version": SCHEMA_VERSION + 1, "run": RUN, "questions": []})
    with pytest.raises(ValidationError, match="does not exist"):
        QaRun.model_validate({"schema_version": 0, "run": RUN, "questions": []})


def test_verdict_scales() -> None:
    assert Verdict(judge="j", score=4, scale="rubric-0-5").score == 4
    with pytest.raises(ValidationError, match="outside"):
        Verdict(judge="j", score=6, scale="rubric-0-5")
    with pytest.raises(ValidationError, match="binary"):
        Verdict(judge="j", score=0.5, scale="binary")


def test_field_docstrings_become_descriptions() -> None:
    assert "rank order" in (QaQuestion.model_fields["retrieved_ids"].description or "")


def test_native_jsonl(tmp_path: Path) -> None:
    lines = [
        {"schema_version": 1, "run": RUN},
        _q(0, verdicts=[{"judge": "j", "score": 1}]),
        _q(1, answer=None, verdicts=[{"judge": "j", "score": 1}]),
    ]
    (tmp_path / "run.jsonl").write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    src = read_source(tmp_path / "run.jsonl", "run.jsonl")
    assert native.sniff(src.data, src.rel)
    (run,) = native.load(src)
    assert run.run.source_file == "run.jsonl" and len(run.questions) == 2
    (r,) = load_qa(tmp_path).runs
    assert r.score.failures == 1 and r.score.accuracy == 0.5


def test_native_error_points_at_the_line(tmp_path: Path) -> None:
    lines = [{"schema_version": 1, "run": RUN}, _q(0), _q(1, verdicts=[{"judge": "j", "score": 3}])]
    (tmp_path / "run.jsonl").write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    (err,) = load_qa(tmp_path).errors
    assert err.file == "run.jsonl" and err.path.startswith("$[2].verdicts[0]")
    (tmp_path / "run.jsonl").write_text('{"schema_version": 1, "run": {}}\nnot json', encoding="utf-8")
    (err,) = load_qa(tmp_path).errors
    assert err.path == "line 2"


def test_a_verdict_out_of_its_scale_is_reported_at_the_verdict() -> None:
    doc = {"run": RUN, "questions": [_q(0, verdicts=[{"judge": "j", "score": 1}, {"judge": "k", "score": 0.5}])]}
    with pytest.raises(ValidationError) as info:
        QaRun.model_validate(doc)
    (error,) = info.value.errors()
    assert error["loc"] == ("questions", 0, "verdicts", 1) and error["type"] == "value_error"
    assert error["msg"] == "Value error, a binary verdict must be 0 or 1, got 0.5"
    # model_construct promises no checks: an unchecked verdict can still be built (scoring copes with it).
    assert Verdict.model_construct(judge="j", score=-0.5, scale="unit").score == -0.5
