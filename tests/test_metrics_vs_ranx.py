"""Agreement with ranx and trec_eval (pytrec_eval-terrier) on a seeded synthetic sample of 2,000 queries.

Where the definitions agree (queries with gold, run built from first occurrences) the per-query values are
equal to 1e-12. Where they differ, the difference is asserted:

- queries with no gold: NaN here; ranx scores 0; trec_eval leaves the query out;
- MRR: here and in ranx the first hit must be within the top k (``mrr@5``); trec_eval ``recip_rank`` has no
  cutoff, so it differs exactly for queries whose first hit is below rank 5;
- duplicates: ranx/trec_eval runs are dicts and cannot hold a repeated id. A run built from first occurrences
  equals this package's deduplication; building it with a dict comprehension (last occurrence wins) does not.

ranx compiles with numba on first use (about 25 s, more on a busy machine); the ``ranx`` fixture points
NUMBA_CACHE_DIR at a temp folder so later runs reuse the compiled code.
"""

from __future__ import annotations

import math
import os
import random
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from memeval_core.metrics.evaluate import QueryScores, evaluate

pytestmark = pytest.mark.filterwarnings("ignore:unsafe cast:Warning")

K = 5
N_QUERIES = 2_000
RANX_METRICS = [f"ndcg@{K}", f"precision@{K}", f"recall@{K}", f"mrr@{K}", f"f1@{K}"]
OURS = {"ndcg@5": "ndcg", "precision@5": "precision", "recall@5": "recall", "mrr@5": "mrr", "f1@5": "f1"}


@pytest.fixture(scope="module")
def ranx() -> Iterator[ModuleType]:
    """ranx, imported with NUMBA_CACHE_DIR set to a temp folder (numba reads it at import)."""
    cache = Path(tempfile.gettempdir()) / "memeval-numba-cache"
    cache.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NUMBA_CACHE_DIR", os.environ.get("NUMBA_CACHE_DIR", str(cache)))
        yield pytest.importorskip("ranx")


def _sample() -> tuple[list[list[str]], list[set[str]]]:
    """Ranked lists of 0-20 ids drawn with replacement (so some repeat) and gold sets of 0-6 ids."""
    rng = random.Random(20260401)
    retrieved: list[list[str]] = []
    gold: list[set[str]] = []
    for _ in range(N_QUERIES):
        pool = [f"doc{rng.randrange(10_000)}" for _ in range(25)]
        retrieved.append([rng.choice(pool) for _ in range(rng.choice([0, 1, 3, 5, 8, 12, 20]))])
        gold.append({rng.choice(pool) for _ in range(rng.choice([0, 1, 1, 2, 3, 6]))})
    return retrieved, gold


RETRIEVED, GOLD = _sample()
QIDS = [f"q{i}" for i in range(N_QUERIES)]


def _run_first_occurrence() -> dict[str, dict[str, float]]:
    """Run dict: each id scored by its first rank (higher = better); distinct scores, so no tie-breaking."""
    run: dict[str, dict[str, float]] = {}
    for qid, ranked in zip(QIDS, RETRIEVED, strict=True):
        scores: dict[str, float] = {}
        for position, doc in enumerate(ranked):
            scores.setdefault(doc, float(len(ranked) - position))
        run[qid] = scores
    return run


def _qrels() -> dict[str, dict[str, int]]:
    return {qid: {doc: 1 for doc in sorted(g)} for qid, g in zip(QIDS, GOLD, strict=True)}


@pytest.fixture(scope="module")
def ours() -> QueryScores:
    return evaluate(RETRIEVED, GOLD, k=K)


def test_sample_has_the_edge_cases() -> None:
    assert sum(not g for g in GOLD) > 100
    assert sum(not r for r in RETRIEVED) > 100
    assert sum(len(set(r)) < len(r) for r in RETRIEVED) > 300
    assert sum(0 < len(r) < K for r in RETRIEVED) > 300


def test_equal_to_ranx_where_gold_exists_and_zero_vs_nan_where_not(ranx: Any, ours: QueryScores) -> None:
    qrels = ranx.Qrels(_qrels())
    run = ranx.Run(_run_first_occurrence())
    theirs = ranx.evaluate(qrels, run, RANX_METRICS, return_mean=False, make_comparable=True)
    # ranx orders queries by id; map back to ours.
    order = {qid: i for i, qid in enumerate(run.get_query_ids())}
    index = np.array([order[q] for q in QIDS])
    has_gold = ours.n_gold > 0
    for metric, name in OURS.items():
        reference = np.asarray(theirs[metric])[index]
        mine = getattr(ours, name)
        np.testing.assert_allclose(mine[has_gold], reference[has_gold], rtol=0, atol=1e-12, err_msg=metric)
        assert np.isnan(mine[~has_gold]).all()
        assert (reference[~has_gold] == 0.0).all(), f"ranx scores {metric} 0 for queries with no gold"


def test_last_occurrence_run_would_differ_from_ranx_first_occurrence(ranx: Any, ours: QueryScores) -> None:
    last: dict[str, dict[str, float]] = {}
    for qid, ranked in zip(QIDS, RETRIEVED, strict=True):
        last[qid] = {doc: float(len(ranked) - position) for position, doc in enumerate(ranked)}
    with_gold = {q: d for q, d in _qrels().items() if d}
    qrels = ranx.Qrels(with_gold)
    run = ranx.Run({q: last[q] for q in with_gold})
    theirs = ranx.evaluate(qrels, run, [f"mrr@{K}"], return_mean=False)
    order = {qid: i for i, qid in enumerate(run.get_query_ids())}
    mine = ours.mrr
    differing = [q for q in with_gold if not math.isclose(theirs[order[q]], mine[QIDS.index(q)], abs_tol=1e-12)]
    assert differing, "a last-occurrence run should move some first hits"


def test_equal_to_trec_eval_where_definitions_agree(ours: QueryScores) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    evaluator = pytrec_eval.RelevanceEvaluator(_qrels(), {f"P_{K}", f"recall_{K}", f"ndcg_cut_{K}", "recip_rank"})
    theirs = evaluator.evaluate(_run_first_occurrence())
    has_gold = ours.n_gold > 0
    # trec_eval leaves out queries with no relevant documents.
    assert set(theirs) == {q for q, g in zip(QIDS, has_gold, strict=True) if g}
    recip_differs = 0
    for i, qid in enumerate(QIDS):
        if not has_gold[i]:
            continue
        t = theirs[qid]
        assert ours.precision[i] == pytest.approx(t[f"P_{K}"], abs=1e-12)
        assert ours.recall[i] == pytest.approx(t[f"recall_{K}"], abs=1e-12)
        assert ours.ndcg[i] == pytest.approx(t[f"ndcg_cut_{K}"], abs=1e-12)
        distinct = list(dict.fromkeys(RETRIEVED[i]))
        first = next((r for r, doc in enumerate(distinct, 1) if doc in GOLD[i]), None)
        if first is not None and first > K:
            # No cutoff in recip_rank: 1/first there, 0 at MRR@5 here.
            assert ours.mrr[i] == 0.0
            assert t["recip_rank"] == pytest.approx(1 / first, abs=1e-12)
            recip_differs += 1
        else:
            assert ours.mrr[i] == pytest.approx(t["recip_rank"], abs=1e-12)
    assert recip_differs > 20
