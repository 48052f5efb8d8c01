"""The fast paths of the QA load: per-question data packed until first read after unpickling, shared verdicts,
the join's copies, GC pausing."""

from __future__ import annotations

import copy
import dataclasses
import gc
import pickle
import threading
import weakref
from pathlib import Path
from typing import TypeVar

import pytest
from _data import SHARED_DATA, require

from memeval_core.errors import IngestError
from memeval_core.qa import leaderboard, locomo
from memeval_core.qa.importers._common import Source, binary_verdict, build_run, graded_verdict
from memeval_core.qa.ingest import LoadedRun, QaLoad, gc_paused, load_qa
from memeval_core.qa.models import QaQuestion, QaRun, RunMeta, Verdict, questions_packed, records_retrieved_ids
from memeval_core.qa.retrieval_metrics import qa_summaries
from memeval_core.qa.scoring import RunScore, combine_repeats, score_run, scores_packed
from memeval_core.workers import WORKERS_ENV

T = TypeVar("T")


class SubQuestion(QaQuestion):
    """A question type the packed layout does not cover (it travels as plain pickle, still packed)."""


@pytest.fixture(scope="module")
def everything() -> QaLoad:
    # Serially: runs scored in worker processes arrive packed, and these tests start from unpacked ones.
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(WORKERS_ENV, "1")
        return load_qa(require(SHARED_DATA))


def _state(q: QaQuestion | QaRun | Verdict) -> tuple[object, ...]:
    return (type(q), q.__dict__, q.__pydantic_extra__, q.__pydantic_fields_set__, q.__pydantic_private__)


def _packed(r: LoadedRun) -> tuple[bool, bool]:
    return questions_packed(r.run), scores_packed(r.score)


def _round_trip(x: T) -> T:
    back: T = pickle.loads(pickle.dumps(x, protocol=pickle.HIGHEST_PROTOCOL))
    return back


def test_pickled_load_round_trips_exactly(everything: QaLoad) -> None:
    back = _round_trip(everything)
    assert len(back.runs) == len(everything.runs)
    assert back.errors == everything.errors and back.skipped == everything.skipped
    assert back.disputed == everything.disputed and back.locomo == everything.locomo
    for a, b in zip(everything.runs, back.runs, strict=True):
        assert _packed(b) == (True, True)  # nothing per-question built yet
        assert _packed(a) == (False, False)
        assert "questions" not in b.run.__dict__ and "questions" not in b.score.__dict__
        assert b.run.run == a.run.run and b.run.schema_version == a.run.schema_version
        assert _packed(b) == (True, True)
        assert b == a  # dataclass equality reads run and score: unpacks both
        assert _packed(b) == (False, False)
        assert b.score == a.score
        assert _state(b.run) == _state(a.run)
        assert list(b.run.__dict__) == list(a.run.__dict__) and list(b.score.__dict__) == list(a.score.__dict__)
        assert [_state(q) for q in b.run.questions] == [_state(q) for q in a.run.questions]
        assert [(type(s), s.__dict__) for s in b.score.questions] == [(type(s), s.__dict__) for s in a.score.questions]
        assert type(b.run.questions) is list and type(b.score.questions) is tuple
        assert b.run.model_dump(mode="json") == a.run.model_dump(mode="json")


def test_run_level_reads_leave_the_questions_packed(everything: QaLoad) -> None:
    back = _round_trip(everything)
    runs = list(back.runs)
    # What the QA leaderboard page reads: rows (repeats combined), failure reasons, retrieval summaries.
    by_benchmark = {r.run.run.benchmark for r in runs}
    rows = [row for b in sorted(by_benchmark) for row in leaderboard.rows(runs, b)]
    assert len(rows) >= len(by_benchmark)
    assert qa_summaries(runs) == qa_summaries(everything.runs)
    for r in runs:
        s, m = r.score, r.run.run
        _ = (s.accuracy, s.n_questions, s.n_unscored, s.correct, s.majority_accuracy, s.failures, s.failure_reasons)
        _ = (s.judges, s.n_judges, s.per_judge_accuracy, s.categories, s.kinds, s.fama, s.latency_ms)
        _ = (m.system, m.benchmark, m.variant, m.answer_model, m.judge_models, m.top_k, m.includes_adversarial)
        _ = (r.run_id, r.display_name, r.join, r.publishable, r.not_publishable_because, r.accuracy_without_disputed)
        assert _packed(r) == (True, True)
    expected = [row for b in sorted(by_benchmark) for row in leaderboard.rows(list(everything.runs), b)]
    assert rows == expected
    # Reading one kind of per-question data unpacks that kind only.
    first = runs[0]
    assert first.score.questions == everything.runs[0].score.questions
    assert _packed(first) == (True, False)
    assert first.run.questions == everything.runs[0].run.questions
    assert _packed(first) == (False, False)


def test_lazy_run_pickles_again_without_unpacking(everything: QaLoad) -> None:
    once = _round_trip(everything.runs[0])
    twice = _round_trip(once)
    assert _packed(once) == (True, True)  # re-pickling reused the packs
    assert _packed(twice) == (True, True)
    assert twice == everything.runs[0]


def test_unpacked_questions_are_pickled_from_the_objects_not_the_old_pack() -> None:
    meta = RunMeta(benchmark="b", system="s")
    run = QaRun(run=meta, questions=[QaQuestion(benchmark="b", question_id="a", answer="x")])
    back = _round_trip(run)
    back.questions.append(QaQuestion(benchmark="b", question_id="b"))  # the list itself is mutable
    again = _round_trip(back)
    assert [q.question_id for q in again.questions] == ["a", "b"]


def test_unpacking_is_once_across_threads(everything: QaLoad) -> None:
    for _ in range(3):
        lazy = _round_trip(everything.runs[-1])
        barrier = threading.Barrier(8)
        seen: list[object] = []

        def read(
            which: str, r: LoadedRun = lazy, barrier: threading.Barrier = barrier, seen: list[object] = seen
        ) -> None:
            barrier.wait()
            seen.append(r.run.questions if which == "run" else r.score.questions)

        threads = [threading.Thread(target=read, args=("run" if i % 2 else "score",)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(seen) == 8
        assert {id(x) for x in seen} == {id(lazy.run.questions), id(lazy.score.questions)}
        assert lazy == everything.runs[-1]
    with pytest.raises(AttributeError):
        _ = lazy.no_such_attribute  # type: ignore[attr-defined]


def test_pickling_while_another_thread_unpacks_loses_nothing(everything: QaLoad) -> None:
    original = everything.runs[0]
    for _ in range(10):
        lazy = _round_trip(original)
        barrier = threading.Barrier(4)
        pickled: list[bytes] = []

        def unpack(r: LoadedRun = lazy, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            _ = (r.run.questions, r.score.questions)

        def dump(r: LoadedRun = lazy, barrier: threading.Barrier = barrier, out: list[bytes] = pickled) -> None:
            barrier.wait()
            out.append(pickle.dumps(r, protocol=pickle.HIGHEST_PROTOCOL))

        threads = [threading.Thread(target=f) for f in (unpack, dump, unpack, dump)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(pickled) == 2
        for blob in pickled:
            assert pickle.loads(blob) == original


def test_packed_objects_behave_like_the_originals(everything: QaLoad) -> None:
    a = everything.runs[0]

    def packed_run() -> QaRun:
        r = _round_trip(a.run)
        assert questions_packed(r)
        return r

    def packed_score() -> RunScore:
        s = _round_trip(a.score)
        assert scores_packed(s)
        return s

    assert packed_run().model_dump() == a.run.model_dump()
    assert packed_run().model_dump_json() == a.run.model_dump_json()
    assert repr(packed_run()) == repr(a.run) and str(packed_run()) == str(a.run)
    assert list(packed_run()) == list(a.run)
    assert packed_run() == a.run and a.run == packed_run() and packed_run() == packed_run()
    assert packed_run().model_copy(update={"schema_version": 1}) == a.run.model_copy(update={"schema_version": 1})
    assert copy.copy(packed_run()) == a.run and copy.deepcopy(packed_run()) == a.run
    assert packed_run().__getstate__() == a.run.__getstate__()
    assert records_retrieved_ids(packed_run()) == records_retrieved_ids(a.run)
    with pytest.raises(TypeError):
        hash(packed_run())
    with pytest.raises(AttributeError):
        _ = packed_run().no_such_attribute
    assert packed_score() == a.score and repr(packed_score()) == repr(a.score)
    assert dataclasses.asdict(packed_score()) == dataclasses.asdict(a.score)
    assert dataclasses.replace(packed_score(), fama=0.5) == dataclasses.replace(a.score, fama=0.5)
    assert copy.copy(packed_score()) == a.score and copy.deepcopy(packed_score()) == a.score
    with pytest.raises(AttributeError):
        _ = packed_score().no_such_attribute  # type: ignore[attr-defined]


def test_retrieval_metrics_of_packed_runs_match() -> None:
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
        loaded = LoadedRun(run, "id", "s", score_run(run), None, False, ())
        back = _round_trip(loaded)
        assert records_retrieved_ids(run) is expected and records_retrieved_ids(back.run) is expected
        assert qa_summaries([back]) == qa_summaries([loaded])
        assert questions_packed(back.run) is not expected  # only a run that records ids is unpacked


def test_repeats_without_per_question_means_read_no_questions(everything: QaLoad) -> None:
    back = _round_trip(everything)
    scores = [r.score for r in back.runs[:3]]
    spread = combine_repeats(scores, per_question=False)
    assert all(scores_packed(s) for s in scores)
    full = combine_repeats([r.score for r in everything.runs[:3]])
    assert spread == dataclasses.replace(full, per_question={})


def test_run_that_does_not_fit_the_packed_layout_still_pickles() -> None:
    meta = RunMeta(benchmark="locomo", system="s")
    q = QaQuestion(benchmark="locomo", question_id="a", answer="x", verdicts=[Verdict(judge="j", score=1)], note=1)
    odd = QaQuestion.model_construct(question_id="b", benchmark="locomo")  # __dict__ in another order

    run = QaRun(run=meta, questions=[q, odd])
    loaded = LoadedRun(run, "id", "s", score_run(run), None, False, ())
    back = _round_trip(loaded)
    assert [_state(x) for x in back.run.questions] == [_state(x) for x in run.questions]
    assert back == loaded
    odd_run = QaRun.model_construct(run=meta, questions=[q])
    object.__setattr__(odd_run, "__dict__", {"questions": [q], "run": meta, "schema_version": 1})  # questions first
    assert list(_round_trip(odd_run).__dict__) == ["questions", "run", "schema_version"]
    assert _round_trip(odd_run) == odd_run
    assert not questions_packed(_round_trip(odd_run))
    sub_run = QaRun(run=meta, questions=[SubQuestion(benchmark="b", question_id="s")])
    back_sub = _round_trip(sub_run)
    assert questions_packed(back_sub) and type(back_sub.questions[0]) is SubQuestion and back_sub == sub_run


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
    joined, report = locomo.join(run, ds)
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
    joined, report = locomo.join(QaRun(run=RunMeta(benchmark="locomo", system="s"), questions=qs), ds)
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


def test_gc_paused_restores_the_previous_state() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError
    assert gc.isenabled()


class _Node:
    me: _Node


def test_gc_paused_leaves_what_it_allocated_to_the_full_collection() -> None:
    with gc_paused():
        keep = [[i] for i in range(100_000)]
        node = _Node()
        node.me = node  # garbage in a cycle: only the cyclic collector frees it
        ref = weakref.ref(node)
        del node
    # The next young collection has nothing to traverse (it would have had 100,000 lists)...
    assert gc.get_count()[0] < 1_000 and gc.get_freeze_count() == 0
    assert len(keep) == 100_000 and ref() is not None
    gc.collect()
    assert ref() is None  # ...and a full collection still frees the cycle.


def test_load_leaves_the_collector_on(tmp_path: Path) -> None:
    load_qa(tmp_path)
    assert gc.isenabled()


def test_gc_paused_leaves_objects_the_host_froze_alone() -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        with gc_paused():
            _ = [[i] for i in range(1_000)]
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_alternating_sets_of_fields_round_trip_per_question() -> None:
    meta = RunMeta(benchmark="locomo", system="s")
    plain = {"benchmark": "locomo", "answer": "x"}
    qs = [
        QaQuestion(question_id="a", **plain),
        QaQuestion(question_id="b", latency_ms=3.0, **plain),
        QaQuestion(question_id="c", **plain),
        QaQuestion(question_id="d", latency_ms=None, **plain),  # set, though equal to the default
        QaQuestion(question_id="e", latency_ms=1.0, **plain),
    ]
    back = _round_trip(QaRun(run=meta, questions=qs))
    assert questions_packed(back)
    assert [q.model_fields_set for q in back.questions] == [q.model_fields_set for q in qs]
    assert [_state(q) for q in back.questions] == [_state(q) for q in qs]


def test_a_run_without_questions_and_a_run_with_retrieved_ids_round_trip() -> None:
    meta = RunMeta(benchmark="locomo", system="s")
    empty = QaRun(run=meta, questions=[])
    assert _round_trip(empty) == empty and _round_trip(empty).questions == []
    ids = QaQuestion(benchmark="locomo", question_id="a", retrieved_ids=["D1:1"], scored=False)
    unscored = _round_trip(QaRun(run=meta, questions=[ids]))
    assert not records_retrieved_ids(unscored)  # only scored questions count
    scored = _round_trip(QaRun(run=meta, questions=[ids.model_copy(update={"scored": True}), ids]))
    assert questions_packed(scored) and records_retrieved_ids(scored) and questions_packed(scored)
