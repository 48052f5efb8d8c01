"""The columnar load against the readable per-row rules: same scores, summaries, joins and errors."""

from __future__ import annotations

from functools import cache

import pytest
from _data import SHARED_DATA, require
from _qa_data import LOCOMO_JSON
from _qa_oracle import join, questions_table, score_question, summarize

from memeval_core.errors import IngestError
from memeval_core.qa import locomo
from memeval_core.qa.columns import ColumnRun, columns_from_dicts, columns_of, rows, validate_columns
from memeval_core.qa.importers._common import Source, build_run
from memeval_core.qa.ingest import QaLoad, load_qa
from memeval_core.qa.models import QaQuestion, QaRun, RunMeta, Verdict
from memeval_core.qa.scoring import score_columns, summarize_table
from memeval_core.qa.table import SCORE_COLUMNS, table_of


@cache
def _shared_load() -> QaLoad:
    """Every QA run of the shared data, loaded the columnar way."""
    return load_qa(require(SHARED_DATA), require(LOCOMO_JSON).parent)


def test_columnar_scores_and_summaries_match_the_per_row_rules_on_the_shared_data() -> None:
    load = _shared_load()
    assert len(load.runs) > 10
    for loaded in load.runs:
        questions = loaded.run.questions
        expected = tuple(score_question(q) for q in questions)
        assert loaded.question_scores == expected, loaded.run_id
        oracle = summarize(questions, expected)
        assert loaded.score == oracle, loaded.run_id
        # Dicts compare without order; the pages show them in order.
        assert list(loaded.score.categories) == list(oracle.categories)
        assert list(loaded.score.per_judge_accuracy) == list(oracle.per_judge_accuracy)
        assert list(loaded.score.failure_reasons) == list(oracle.failure_reasons)


def test_columnar_join_matches_the_model_join_on_the_shared_data() -> None:
    ds = locomo.load_locomo(require(LOCOMO_JSON))
    runs = [r.run for r in _shared_load().runs if r.meta.benchmark == locomo.BENCHMARK]
    assert runs
    for run in runs:
        by_models, report = join(run, ds)
        by_columns, column_report = locomo.join_columns(ColumnRun.of(run), ds)
        assert column_report == report
        assert by_columns.questions == by_models.questions


def _odd_questions() -> list[QaQuestion]:
    v = Verdict(judge="j", score=-0.0, scale="unit")
    rubric = Verdict(judge="k", score=4, scale="rubric-0-5")
    q = QaQuestion
    return [
        q(benchmark="b", question_id="a", answer="x", verdicts=[v, rubric], mpa=0.5, faa=0.2, custom="kept"),
        q(benchmark="b", question_id="b", scored=False, error=True),
        q(benchmark="b", question_id="c", answer="I don't know", kind="abstention", verdicts=[v, v]),
        q(benchmark="b", question_id="d", answer=" ", category="abstention", verdicts=[rubric]),
        q(benchmark="b", question_id="e", answer="y", category="abstention", kind="temporal", verdicts=[rubric]),
        q(benchmark="b", question_id="f", answer="y", category="2", category_name="two", verdicts=[v, rubric, v]),
        q(benchmark="b", question_id="g", answer="y", category="10", verdicts=[rubric], latency_ms=3.0),
        q(benchmark="b", question_id="h", answer="y", category="2", verdicts=[]),
        q(benchmark="b", question_id="i", scored=False, answer="y", category="2"),
    ]


def test_columnar_scores_of_odd_questions_match_the_per_row_rules() -> None:
    questions = _odd_questions()
    columns = columns_of(questions)
    scores = score_columns(columns)
    expected = [score_question(q) for q in questions]
    for name, _ in SCORE_COLUMNS:
        assert scores[name] == [getattr(s, name) for s in expected], name
    table = table_of(columns, scores)
    assert table.equals(questions_table(questions, expected))
    assert summarize_table(table) == summarize(questions, expected)
    assert summarize_table(table.slice(0, 0)) == summarize([], [])


def test_columns_round_trip_through_records() -> None:
    questions = _odd_questions()
    columns = columns_of(questions)
    assert validate_columns(columns_from_dicts(rows(columns))) == columns
    assert ColumnRun(RunMeta(benchmark="b", system="s"), columns).questions == questions
    # Records with different fields (and unknown ones) become the same columns as the models give.
    records = [{"benchmark": "b", "question_id": "a", "note": 1}, {"question_id": "b", "benchmark": "b"}]
    models = [QaQuestion.model_validate(r) for r in records]
    assert validate_columns(columns_from_dicts(records)) == columns_of(models)


@pytest.mark.parametrize(
    ("record", "where"),
    [
        ({"benchmark": "b"}, r"\$\.question_id: Field required"),
        ({"benchmark": "b", "question_id": "q", "latency_ms": -1}, r"\$\.latency_ms: Input should be greater"),
        ({"benchmark": "b", "question_id": "q", "latency_ms": 1e307}, r"\$\.latency_ms: Input should be less"),
        ({"benchmark": "b", "question_id": "q", "verdicts": [{"judge": "j", "score": 2}]}, r"\$\.verdicts\[0\]: Value"),
    ],
)
def test_build_run_names_the_first_bad_record_as_the_model_would(record: dict[str, object], where: str) -> None:
    src = Source("f.json", "0" * 64, None)
    good = {"benchmark": "b", "question_id": "g"}
    with pytest.raises(IngestError, match=rf"^f\.json: {where}"):
        build_run(src, {"benchmark": "b", "system": "s"}, [good, record])
    run = build_run(src, {"benchmark": "b", "system": "s"}, [good])
    assert QaRun(run=run.run, questions=run.questions) == QaRun(
        run=run.run, questions=[QaQuestion(benchmark="b", question_id="g")]
    )
