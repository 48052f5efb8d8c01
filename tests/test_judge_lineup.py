"""Judged runs folded back into the runs they re-judge, and the judge-sensitivity table."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from memeval_core.judge.lineup import PUBLISHED, fold, plan, rejudge_of, sensitivity
from memeval_core.qa.ingest import QaRunHeader
from memeval_core.qa.judges import is_multi_judge, judge_accuracy, panels
from memeval_core.results import load_qa_results
from tests.judge_standin import KEY, MODEL, StandIn, rejudged_results, rule

JUDGE = f"{MODEL}/mem0-locomo"
RUBRIC = f"{MODEL}/rubric-0-5"


@pytest.fixture(scope="module")
def rejudged(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as mp, StandIn() as s:
        mp.setenv("OPENAI_API_KEY", KEY)
        mp.setenv("MEMEVAL_CACHE_DIR", "off")
        yield rejudged_results(shared_data, tmp_path_factory.mktemp("rejudged"), s.url)


def test_judged_files_load_as_second_runs_carrying_both_judges(rejudged: Path) -> None:
    runs = load_qa_results(rejudged, None, cache_dir=None).runs
    judged = [r for r in runs if rejudge_of(r) is not None]
    assert len(runs) == 6 and len(judged) == 4
    for r in judged:
        assert r.meta.system == "memobase" and ", judged by " in (r.meta.variant or "")
        assert r.score.judges[0] == "llm_score" and is_multi_judge(r)


def test_fold_puts_every_rejudge_on_the_original_questions(rejudged: Path) -> None:
    runs = load_qa_results(rejudged, None, cache_dir=None).runs
    originals = {r.run_id: r for r in runs if rejudge_of(r) is None}
    folded = fold(runs)
    assert {r.run_id for r in folded.runs} == set(originals)
    for r in folded.runs:
        before = originals[r.run_id]
        assert folded.added[r.run_id] == (JUDGE, RUBRIC)
        assert r.score.judges == ("llm_score", JUDGE, RUBRIC)
        assert folded.published[r.run_id] == before.score.accuracy
        assert len(folded.folded_from[r.run_id]) == 2
        acc = {a.judge: a.accuracy for a in judge_accuracy(r)}
        assert acc["llm_score"] == before.score.accuracy
        pairs = [(q, s) for q, s in zip(before.run.questions, before.question_scores, strict=True) if s.scored]
        expected = sum(s.failure is None and rule(q.gold_answer or "", q.answer or "") for q, s in pairs) / len(pairs)
        assert acc[JUDGE] == expected
        # The rubric stand-in gives 5 where the rule holds and 1 elsewhere: rescaled 1.0 and 0.2.
        assert acc[RUBRIC] == pytest.approx(expected + 0.2 * (1 - expected))
    # One panel of two runs now shares the same three judges: the Judges page can rank them.
    assert list(panels(folded.runs)) == [("locomo", False, tuple(sorted(("llm_score", JUDGE, RUBRIC))))]


def test_the_plan_names_the_runs_a_fold_reads_whole(rejudged: Path) -> None:
    runs = load_qa_results(rejudged, None, cache_dir=None).runs
    judged = {r.run_id: rejudge_of(r) for r in runs}
    want = {r.run_id: tuple(j for j, b in judged.items() if b and b["original_run_id"] == r.run_id) for r in runs}
    assert plan(runs) == {k: v for k, v in want.items() if v} and len(plan(runs)) == 2
    headers = [QaRunHeader(**{f.name: getattr(r, f.name) for f in dataclasses.fields(QaRunHeader)}) for r in runs]
    with pytest.raises(ValueError, match="must be read whole"):
        fold(headers)  # every run here joins a fold: as headers they cannot
    lone = [h for h in headers if judged[h.run_id]][:1]  # a judged run whose original is absent folds nowhere
    assert plan(lone) == {} and fold(lone).runs == tuple(lone)


def test_a_judged_run_without_its_original_stays_on_its_own(rejudged: Path, tmp_path: Path) -> None:
    only = tmp_path / "only"
    only.mkdir()
    for f in (rejudged / "judged").glob("*.json"):
        shutil.copyfile(f, only / f.name)
    runs = load_qa_results(only, None, cache_dir=None).runs
    folded = fold(runs)
    assert len(folded.runs) == 4 and not folded.added


def test_sensitivity_lists_each_run_under_each_judge(rejudged: Path) -> None:
    folded = fold(load_qa_results(rejudged, None, cache_dir=None).runs)
    (table,) = sensitivity(folded)
    assert table.group == "locomo (without category 5)"
    assert table.judges == (PUBLISHED, JUDGE, RUBRIC)
    rows = table.rows()
    assert [r["display_name"] for r in rows] == [
        "memobase (memobase_eval_0710_3000)",
        "memobase (memobase_eval_0503_3000)",
    ]
    for row in rows:
        values = [row[f"accuracy ({j})"] for j in table.judges]
        assert row["spread"] == pytest.approx(max(values) - min(values))
        assert {row[f"rank ({j})"] for j in table.judges} <= {1, 2}
    taus = {(t["judge_a"], t["judge_b"]): t for t in table.tau_rows()}
    assert set(taus) == {(PUBLISHED, JUDGE), (PUBLISHED, RUBRIC), (JUDGE, RUBRIC)}
    assert all(t["n_runs"] == 2 and t["kendall_tau_b"] in (-1.0, 1.0) for t in taus.values())
    assert table.complete_runs() == table.run_ids
