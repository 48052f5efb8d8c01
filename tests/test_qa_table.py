"""A run's questions and scores as one Arrow table: exact round trips, on the shared data and on odd records."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from _data import SHARED_DATA, require
from _qa_data import LOCOMO_JSON
from _qa_oracle import questions_table, score_questions, score_run

from memeval_core.qa import locomo
from memeval_core.qa.importers import mem0_eval
from memeval_core.qa.ingest import LoadedRun, load_qa, read_source
from memeval_core.qa.models import QaQuestion, QaRun, RunMeta, Verdict
from memeval_core.qa.table import SCHEMA, questions_from_table, scores_from_table

MEMOBASE = SHARED_DATA / "memobase/docs/experiments/locomo-benchmark/fixture/memobase/memobase_eval_0503_3000.json"


def _round_trip(run: QaRun) -> None:
    scores = score_questions(run)
    table = questions_table(run.questions, scores)
    assert table.schema == SCHEMA and table.num_rows == len(run.questions)
    assert questions_from_table(table) == run.questions
    assert scores_from_table(table) == scores


def test_a_real_joined_run_round_trips_exactly() -> None:
    path = require(MEMOBASE)
    (run,) = mem0_eval.load(read_source(path, path.name))
    joined, _ = locomo.join_columns(run, locomo.load_locomo(require(LOCOMO_JSON)))
    _round_trip(run)
    _round_trip(joined)


def test_extras_missing_values_and_negative_zero_survive() -> None:
    v = Verdict(judge="j", score=-0.0, scale="unit", note={"why": [1, "x"]})
    rubric = Verdict(judge="k", score=4, scale="rubric-0-5")
    odd = [
        QaQuestion(benchmark="b", question_id="a", answer="x", verdicts=[v, rubric],
                   retrieved_ids=[], gold_evidence_ids=["D1:1"], tokens=12, mpa=0.5, faa=1.0, custom="kept"),
        QaQuestion(benchmark="b", question_id="b", scored=False, error=True, error_message="boom", latency_ms=0.0),
        QaQuestion(benchmark="b", question_id="c", answer="I don't know", kind="abstention", abstained=None),
    ]  # fmt: skip
    run = QaRun(run=RunMeta(benchmark="b", system="s"), questions=odd)
    _round_trip(run)
    back = questions_from_table(questions_table(run.questions, score_questions(run)))
    assert back[0].model_extra == {"custom": "kept"} and back[0].verdicts[0].model_extra == {"note": {"why": [1, "x"]}}
    assert str(back[0].verdicts[0].score) == "-0.0"
    _round_trip(QaRun(run=RunMeta(benchmark="b", system="s"), questions=[]))


def test_questions_and_scores_must_pair_up() -> None:
    run = QaRun(run=RunMeta(benchmark="b", system="s"), questions=[QaQuestion(benchmark="b", question_id="a")])
    with pytest.raises(ValueError, match="1 questions but 0 scores"):
        questions_table(run.questions, ())


def test_a_loaded_run_rebuilds_its_questions_and_scores_from_its_table(tmp_path) -> None:  # type: ignore[no-untyped-def]
    load = load_qa(require(SHARED_DATA / "memobase"), require(LOCOMO_JSON).parent)
    r = load.runs[0]
    assert r.run.run == r.meta and len(r.run.questions) == r.table.num_rows
    assert r.question_scores == score_questions(r.run) and r.score == score_run(r.run)
    # The table is the export's kind of file: it writes to Parquet and reads back equal.
    pq.write_table(r.table, tmp_path / "q.parquet")
    again = pq.read_table(tmp_path / "q.parquet")
    assert again.equals(r.table)
    fresh = LoadedRun.of(r.run, r.run_id, r.display_name)
    assert fresh.table.equals(r.table) and fresh.score == r.score
