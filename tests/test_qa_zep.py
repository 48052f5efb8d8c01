from __future__ import annotations

import json
from pathlib import Path

import pytest
from _data import SHARED_DATA, require
from _qa_data import MFLOW, real, write
from _qa_oracle import loaded_score

from memeval_core.errors import IngestError
from memeval_core.qa.importers import zep
from memeval_core.qa.ingest import load_qa

ROUND1 = MFLOW / "locomo-zep" / "results" / "round1_20e20n"


def test_grades_plus_responses_is_one_run() -> None:
    grades = real(ROUND1 / "zep_locomo_grades.json")
    responses = real(ROUND1 / "zep_locomo_responses.json")
    assert zep.sniff(grades.data, grades.rel) and zep.sniff_responses(responses.data)
    assert not zep.sniff(responses.data, responses.rel)
    (run,) = zep.load(grades, responses)
    s = loaded_score(run)
    assert (s.n_questions, s.correct) == (1540, 1208)
    assert run.questions[0].latency_ms == pytest.approx(7854.372978210449)
    assert " + " in (run.run.source_file or "")


def test_ingest_merges_the_pair_and_joins() -> None:
    load = load_qa(require(MFLOW / "locomo-zep"), datasets=SHARED_DATA / "locomo")
    assert not load.errors
    (r,) = load.runs
    assert r.score.correct == 1208 and r.meta.system == "zep"
    assert r.join is not None and r.join.by_key["conversation+position"] == 1540
    assert r.score.categories["2"].n == 321  # categories come from the join; the files have none
    assert r.meta.answer_model == "gpt-5-mini"  # from config/system_config.json
    assert "top-k not stated" in r.not_publishable_because


def _grades(answer: str) -> dict[str, list[dict[str, object]]]:
    return {"locomo_experiment_user_0": [{"question": "q", "answer": answer, "golden_answer": "g", "grade": True}]}


def test_responses_of_another_run_are_rejected(tmp_path: Path) -> None:
    g = write(tmp_path, "g.json", json.dumps(_grades("a")))
    r = write(
        tmp_path,
        "r.json",
        json.dumps(
            {"locomo_experiment_user_0": [{"question": "q", "answer": "b", "golden_answer": "g", "duration_ms": 1}]}
        ),
    )
    assert not zep.matches(g, r)
    with pytest.raises(IngestError, match="does not match"):
        zep.load(g, r)


def test_empty_answer_fails_and_bad_grade_errors(tmp_path: Path) -> None:
    (run,) = zep.load(write(tmp_path, "g.json", json.dumps(_grades(""))))
    assert loaded_score(run).failures == 1
    bad = _grades("a")
    bad["locomo_experiment_user_0"][0]["grade"] = "x"
    with pytest.raises(IngestError) as exc:
        zep.load(write(tmp_path, "b.json", json.dumps(bad)))
    assert exc.value.path == "$.locomo_experiment_user_0[0].grade"
