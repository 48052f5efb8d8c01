"""Ranking metrics of QA and PMB runs: hand-computed values and the real PMB baselines."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from _data import PMB_DIR, SHARED_DATA, require

from memeval_core.pmb.ingest import PmbLoad, load_pmb
from memeval_core.pmb.run import PmbRun
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


@pytest.fixture(scope="module")
def pmb() -> PmbLoad:
    return load_pmb(require(PMB_DIR))


def _run(load: PmbLoad, name: str, benchmark: str) -> PmbRun:
    (run,) = [r for r in load.runs if r.identity.display_name == name and r.identity.benchmark == benchmark]
    return run


def test_tenure_single_turn_returns_exactly_the_gold(pmb: PmbLoad) -> None:
    assert pmb.fixture is not None
    q = rm.pmb_queries(_run(pmb, "tenure", "pmb-single-turn"), pmb.fixture)
    s = q.scores
    defined = s.n_gold > 0
    assert (len(q.query_ids), int(defined.sum())) == (77, 43)
    # Every case with a gold set: tenure's top 5 are gold ids only, so P@5 = min(|G|, 5) / 5.
    np.testing.assert_allclose(s.precision[defined], np.minimum(s.n_gold[defined], 5) / 5)
    assert sorted(np.bincount(s.n_gold[defined]).nonzero()[0].tolist()) == [1, 2, 6, 7]
    assert np.all(s.ndcg[defined] == 1.0) and np.all(s.mrr[defined] == 1.0)
    assert np.isnan(s.precision[~defined]).all()
    means = rm.summarize(q).means
    assert (means.n_queries, means.n_scored) == (77, 43)
    # 32 cases with 1 gold (P@5 0.2), 8 with 2 (0.4), 3 with 6 or 7 (1.0).
    assert means.precision == pytest.approx((32 * 0.2 + 8 * 0.4 + 3 * 1.0) / 43)
    # Recall: 40 complete, two 6-gold cases at 5/6, one 7-gold case at 5/7.
    assert means.recall == pytest.approx((40 + 2 * 5 / 6 + 5 / 7) / 43)
    assert (means.ndcg, means.mrr) == (1.0, 1.0)


def test_tenure_session_and_gbrain_session(pmb: PmbLoad) -> None:
    assert pmb.fixture is not None
    tenure = rm.summarize(rm.pmb_queries(_run(pmb, "tenure", "pmb-session"), pmb.fixture)).means
    assert (tenure.n_queries, tenure.n_scored) == (12, 11)
    assert tenure.precision == pytest.approx((7 * 0.2 + 3 * 0.4 + 0.6) / 11)
    assert (tenure.recall, tenure.ndcg, tenure.mrr) == (1.0, 1.0, 1.0)
    gbrain = rm.summarize(rm.pmb_queries(_run(pmb, "gbrain", "pmb-session"), pmb.fixture)).means
    assert (gbrain.precision, gbrain.recall, gbrain.ndcg, gbrain.mrr, gbrain.f1) == (0.0, 0.0, 0.0, 0.0, 0.0)


def test_mem0_single_turn_against_a_direct_count(pmb: PmbLoad) -> None:
    fixture = pmb.fixture
    assert fixture is not None
    run = _run(pmb, "mem0", "pmb-single-turn")
    gold = rm.pmb_gold(run, fixture)
    direct = []
    for case, g in zip(run.cases, gold, strict=True):
        if g:
            top = list(dict.fromkeys(case.relevant))[:5]
            direct.append(sum(i in set(g) for i in top) / 5)
    means = rm.summarize(rm.pmb_queries(run, fixture)).means
    assert means.n_scored == len(direct) == 43
    assert means.precision == pytest.approx(sum(direct) / len(direct))
    assert round(means.precision or 0.0, 4) == 0.2512
    summaries = rm.pmb_summaries(pmb.runs, fixture)
    assert len(summaries) == 24 and summaries[run.identity.run_id].means == means


def test_unknown_case_names_the_file(pmb: PmbLoad) -> None:
    fixture = pmb.fixture
    assert fixture is not None
    run = _run(pmb, "tenure", "pmb-single-turn")
    case = replace(run.cases[0], case_id="no-such-case")
    broken = PmbRun.from_cases(run.identity, (case,), run.stated, run.ingestion, run.mismatches, run.extra_fields)
    with pytest.raises(ValueError, match=r"retrieval-report-tenure\.json: case 'no-such-case'"):
        rm.pmb_queries(broken, fixture)
