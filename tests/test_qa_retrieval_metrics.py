"""Ranking metrics of QA runs: hand-computed values and the shared QA samples."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _data import SHARED_DATA, require

from memeval_core.qa import retrieval_metrics as rm
from memeval_core.qa.ingest import LoadedRun, load_qa
from memeval_core.qa.models import QaQuestion, QaRun, RunMeta, Verdict


def _q(qid: str, retrieved: list[str] | None, gold: list[str] | None, scored: bool = True) -> QaQuestion:
    return QaQuestion(
        benchmark="toy",
        question_id=qid,
        answer="a",
        verdicts=[Verdict(judge="j", score=1)],
        retrieved_ids=retrieved,
        gold_evidence_ids=gold,
        scored=scored,
    )


def _loaded(questions: list[QaQuestion]) -> LoadedRun:
    run = QaRun(run=RunMeta(benchmark="toy", system="s"), questions=questions)
    return LoadedRun.of(run, "s-id", "s")


def test_qa_run_by_hand() -> None:
    run = _loaded(
        [
            # gold b at rank 2 of 3: P@5 = 1/5, R@5 = 1, RR = 1/2, NDCG = (1/log2 3) / (1/log2 2), F1 = 2·.2·1/1.2.
            _q("q0", ["a", "b", "c"], ["b"]),
            # no retrieved ids in a run that records them: retrieved nothing, every metric 0, still counted.
            _q("q1", None, ["x"]),
            # no gold: undefined, left out of the means.
            _q("q2", ["a"], None),
            # outside the scored set: not a query at all.
            _q("q3", ["z"], ["z"], scored=False),
        ]
    )
    queries = rm.qa_queries(run)
    assert queries is not None
    assert queries.query_ids == ("q0", "q1", "q2") and queries.n_without_ids == 1
    s = queries.scores
    np.testing.assert_allclose(s.precision[:2], [0.2, 0.0])
    np.testing.assert_allclose(s.recall[:2], [1.0, 0.0])
    np.testing.assert_allclose(s.mrr[:2], [0.5, 0.0])
    np.testing.assert_allclose(s.ndcg[:2], [1 / math.log2(3), 0.0])
    np.testing.assert_allclose(s.f1[:2], [1 / 3, 0.0])
    assert all(math.isnan(getattr(s, m)[2]) for m in ("precision", "recall", "mrr", "ndcg", "f1"))
    means = rm.summarize(queries).means
    assert (means.n_queries, means.n_scored, means.k) == (3, 2, 5)
    assert means.precision == pytest.approx(0.1)
    assert means.recall == pytest.approx(0.5)
    assert means.mrr == pytest.approx(0.25)
    assert means.ndcg == pytest.approx(0.5 / math.log2(3))
    assert means.f1 == pytest.approx(1 / 6)
    assert set(rm.qa_summaries([run])) == {"s-id"}
    assert rm.qa_queries(run, k=1) is not None


def test_qa_run_without_ids_has_no_retrieval_metrics() -> None:
    run = _loaded([_q("q0", None, ["b"]), _q("q1", None, None)])
    assert rm.qa_queries(run) is None
    assert rm.qa_summaries([run]) == {}


def test_no_shared_qa_sample_records_retrieved_ids() -> None:
    # The samples keep retrieved *text* (cognitive-memory retrieved_contents, mflow memories, zep context)
    # or MemoryBench's own per-question metrics, never ranked ids: nothing to re-derive.
    load = load_qa(require(SHARED_DATA))
    assert len(load.runs) == 28
    assert rm.qa_summaries(load.runs) == {}
    joined = [r for r in load.runs if any(q.gold_evidence_ids for q in r.run.questions)]
    assert len(joined) == 9  # LoCoMo runs carry gold evidence ids from locomo10.json, but no ranking to score
