"""Shared verdicts, validation errors of assembled runs, the join's copies; a loaded run still pickles."""

from __future__ import annotations

import pickle
from typing import TypeVar

import pytest
from _qa_oracle import join

from memeval_core.errors import IngestError
from memeval_core.qa import locomo
from memeval_core.qa.importers._common import Source, binary_verdict, build_run, graded_verdict
from memeval_core.qa.ingest import LoadedRun
from memeval_core.qa.models import QaQuestion, QaRun, RunMeta, Verdict
from memeval_core.qa.retrieval_metrics import qa_queries, qa_summaries

T = TypeVar("T")


def _state(q: QaQuestion | QaRun | Verdict) -> tuple[object, ...]:
    return (type(q), q.__dict__, q.__pydantic_extra__, q.__pydantic_fields_set__, q.__pydantic_private__)


def _round_trip(x: T) -> T:
    back: T = pickle.loads(pickle.dumps(x, protocol=pickle.HIGHEST_PROTOCOL))
    return back


def test_retrieval_metrics_of_pickled_runs_match() -> None:
    meta = RunMeta(benchmark="locomo", system="s")
    v = Verdict(judge="j", score=1)
    qs = [
        QaQuestion(
            benchmark="locomo",
            question_id="a",
            answer="x",
            verdicts=[v],
            retrieved_ids=["1", "2"],
            gold_evidence_ids=["2"],
        ),
        QaQuestion(benchmark="locomo", question_id="b", answer="x", verdicts=[v], gold_evidence_ids=["3"]),
        QaQuestion(benchmark="locomo", question_id="c", scored=False, retrieved_ids=["3"], gold_evidence_ids=["3"]),
    ]
    with_ids = QaRun(run=meta, questions=qs)
    unscored_ids = QaRun(run=meta, questions=[qs[1], qs[2]])
    for run, expected in ((with_ids, True), (unscored_ids, False)):
        loaded = LoadedRun.of(run, "id", "s")
        back = _round_trip(loaded)
        assert qa_summaries([back]) == qa_summaries([loaded])
        assert (qa_queries(loaded) is not None) is expected  # only a scored question's ids count


def test_equal_verdicts_are_shared_but_keep_their_set_fields() -> None:
    src = Source("f.json", "0" * 64, None)
    a = binary_verdict(src, True, ["x"], "j", "m", "YES")
    b = binary_verdict(src, 1, ["y"], "j", "m", "YES")
    assert a is not None and a is b
    assert binary_verdict(src, 1, ["y"], "j", "m", "NO") is not a
    graded = graded_verdict(src, 1, ["z"], "j", "unit", "m")
    assert graded is not None and graded is not a
    assert graded.model_fields_set == {"judge", "score", "scale", "model"}
    assert a.model_fields_set == {"judge", "score", "scale", "model", "label"}
    zero = binary_verdict(src, 0, ["z"], "k")
    negative_zero = binary_verdict(src, -0.0, ["z"], "k")
    assert zero is not None and negative_zero is not None
    assert repr(zero.score) == "0.0" and repr(negative_zero.score) == "-0.0"
    with pytest.raises(IngestError, match=r"f\.json: \$\.z: .*rubric-0-5"):
        graded_verdict(src, 7, ["z"], "j", "rubric-0-5")


def test_build_run_names_the_field_of_the_record() -> None:
    src = Source("f.json", "0" * 64, None)
    good = {"benchmark": "b", "question_id": "q0"}
    with pytest.raises(IngestError, match=r"^f\.json: \$\.tokens: "):
        build_run(
            src, {"benchmark": "b", "system": "s"}, [good, {"benchmark": "b", "question_id": "q1", "tokens": "x"}]
        )
    with pytest.raises(IngestError, match=r"^f\.json: \$\.top_k: "):
        build_run(src, {"benchmark": "b", "system": "s", "top_k": "x"}, [good])


def test_join_copies_like_model_copy() -> None:
    ds = locomo.LocomoDataset(
        (locomo.LocomoQuestion(0, "conv-26", 0, 0, "When did it  happen?", "May", ("D1:3",), "2"),), "l.json", "0"
    )
    q = QaQuestion(benchmark="locomo", question_id="x", question="when did it happen?", answer="May", extra_field=[1])
    run = QaRun(run=RunMeta(benchmark="locomo", system="s"), questions=[q])
    joined, report = join(run, ds)
    assert report.joined == 1
    update = {
        "question_id": "conv-26-q0",
        "conversation": "conv-26",
        "question_index": 0,
        "question": "when did it happen?",
        "category": "2",
        "category_name": "temporal",
        "gold_evidence_ids": ["D1:3"],
        "gold_answer": "May",
    }
    assert _state(joined.questions[0]) == _state(q.model_copy(update=update))
    assert joined.questions[0].__pydantic_extra__ is not q.__pydantic_extra__


def test_join_of_a_partly_matching_run_keeps_order_and_copies_like_model_copy() -> None:
    ds = locomo.LocomoDataset(
        (
            locomo.LocomoQuestion(0, "conv-26", 0, 0, "First?", "A", ("D1:1",), "1"),
            locomo.LocomoQuestion(0, "conv-26", 1, 1, "Second?", "B", ("D1:2",), "2"),
        ),
        "l.json",
        "0",
    )
    qs = [
        QaQuestion(benchmark="locomo", question_id="x", question="nothing like it", answer="?"),
        QaQuestion(benchmark="locomo", question_id="conv-26-q1", question="Second?", answer="b", note=2),
        QaQuestion(benchmark="locomo", question_id="y", question="second?", answer="b again"),  # its text is taken
        QaQuestion(benchmark="locomo", question_id="z", question="First?", answer="a", category="4"),
    ]
    joined, report = join(QaRun(run=RunMeta(benchmark="locomo", system="s"), questions=qs), ds)
    assert report.joined == 2 and report.duplicates == 0 and report.category_conflicts == 1
    assert report.unmatched == ("x", "y")
    assert [q.question_id for q in joined.questions] == ["x", "conv-26-q1", "y", "conv-26-q0"]
    assert joined.questions[0] is qs[0] and joined.questions[2] is qs[2]
    for got, q, hit in ((joined.questions[1], qs[1], ds.questions[1]), (joined.questions[3], qs[3], ds.questions[0])):
        update = {
            "question_id": hit.question_id,
            "conversation": hit.sample_id,
            "question_index": hit.qa_index,
            "question": q.question,
            "category": hit.category,
            "category_name": locomo.category_name(hit.category),
            "gold_evidence_ids": list(hit.evidence),
            "gold_answer": hit.answer,
        }
        assert _state(got) == _state(q.model_copy(update=update))
        assert got.__pydantic_fields_set__ is not q.__pydantic_fields_set__


class _Node:
    me: _Node
