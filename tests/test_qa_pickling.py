"""The fast paths of the QA load: lazily unpickled runs, shared verdicts, the join's copies, GC pausing."""

from __future__ import annotations

import gc
import pickle
import threading
from pathlib import Path

import pytest
from _data import SHARED_DATA, require

from memeval_core.errors import IngestError
from memeval_core.qa import locomo
from memeval_core.qa.importers._common import Source, binary_verdict, build_run, graded_verdict
from memeval_core.qa.ingest import LoadedRun, QaLoad, gc_paused, load_qa
from memeval_core.qa.models import QaQuestion, QaRun, RunMeta, Verdict
from memeval_core.qa.scoring import score_run


@pytest.fixture(scope="module")
def everything() -> QaLoad:
    return load_qa(require(SHARED_DATA))


def _state(q: QaQuestion | QaRun | Verdict) -> tuple[object, ...]:
    return (type(q), q.__dict__, q.__pydantic_extra__, q.__pydantic_fields_set__, q.__pydantic_private__)


def test_pickled_load_round_trips_exactly(everything: QaLoad) -> None:
    back = pickle.loads(pickle.dumps(everything, protocol=pickle.HIGHEST_PROTOCOL))
    assert len(back.runs) == len(everything.runs)
    assert back.errors == everything.errors and back.skipped == everything.skipped
    assert back.disputed == everything.disputed and back.locomo == everything.locomo
    for a, b in zip(everything.runs, back.runs, strict=True):
        assert "_payload" in b.__dict__ and "run" not in b.__dict__  # not materialised yet
        assert b.run_id == a.run_id and "run" not in b.__dict__  # plain fields do not materialise
        assert b == a  # dataclass equality reads run and score
        assert "_payload" not in b.__dict__
        assert b.score == a.score
        assert _state(b.run) == _state(a.run)
        assert [_state(q) for q in b.run.questions] == [_state(q) for q in a.run.questions]
        assert b.run.model_dump(mode="json") == a.run.model_dump(mode="json")


def test_lazy_run_pickles_again_without_materialising(everything: QaLoad) -> None:
    once = pickle.loads(pickle.dumps(everything.runs[0]))
    twice = pickle.loads(pickle.dumps(once))
    assert "_payload" in once.__dict__  # re-pickling reused the payload
    assert twice == everything.runs[0]


def test_lazy_run_materialises_once_across_threads(everything: QaLoad) -> None:
    lazy = pickle.loads(pickle.dumps(everything.runs[0]))
    seen: list[object] = []
    threads = [threading.Thread(target=lambda: seen.append(lazy.run)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 4 and all(s is lazy.run for s in seen)
    with pytest.raises(AttributeError):
        _ = lazy.no_such_attribute


def test_run_that_does_not_fit_rows_still_pickles() -> None:
    meta = RunMeta(benchmark="locomo", system="s")
    q = QaQuestion(benchmark="locomo", question_id="a", answer="x", verdicts=[Verdict(judge="j", score=1)], note=1)
    odd = QaQuestion.model_construct(question_id="b", benchmark="locomo")  # __dict__ in another order
    run = QaRun(run=meta, questions=[q, odd])
    loaded = LoadedRun(run, "id", "s", score_run(run), None, False, ())
    back = pickle.loads(pickle.dumps(loaded))
    assert [_state(x) for x in back.run.questions] == [_state(x) for x in run.questions]
    assert back == loaded


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


def test_load_leaves_the_collector_on(tmp_path: Path) -> None:
    load_qa(tmp_path)
    assert gc.isenabled()
