"""Ranking metrics (NDCG@k, P@k, R@k, MRR@k, F1@k) of QA runs wherever ranked and gold ids exist.

Per query the metrics of :func:`memeval_core.metrics.evaluate` (binary relevance, duplicates counted once,
``k = 5`` by default):

- ``P@k = |top-k ∩ G| / k``; ``R@k = |top-k ∩ G| / |G|``; ``F1@k = 2·P·R / (P + R)`` (0 when both are 0);
- ``RR@k = 1 / rank`` of the first gold id within the top k (0 if none), whose mean is MRR@k;
- ``NDCG@k = Σ_{r ≤ k, id_r ∈ G} 1/log2(r + 1) / Σ_{r ≤ min(k, |G|)} 1/log2(r + 1)``.

A query with an empty or unknown gold set ``G`` has every metric undefined and is left out of the means
(:func:`memeval_core.metrics.evaluate.aggregate`).

QA runs: a run *records ids* when at least one scored question carries ``retrieved_ids``. Then every scored
question is a query, ranked by ``retrieved_ids`` (best first) against ``gold_evidence_ids`` (LoCoMo: the
``dia_id`` of the evidence turns). A scored question without ``retrieved_ids`` in such a run (e.g. it
failed) retrieved nothing: it scores 0 and stays in the means, like a failed answer stays in accuracy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memeval_core.metrics.evaluate import MeanScores, QueryScores, aggregate, evaluate
from memeval_core.qa.ingest import LoadedRun

DEFAULT_K = 5
"""Rank cutoff used unless another is asked for."""


@dataclass(frozen=True, eq=False)
class RunQueries:
    """One run's queries and their per-query scores."""

    run_id: str
    """Run id."""
    display_name: str
    """Run display name."""
    benchmark: str
    """Benchmark id."""
    query_ids: tuple[str, ...]
    """Question ids, aligned with ``scores``."""
    scores: QueryScores
    """Per-query metrics."""
    n_without_ids: int
    """Scored questions without retrieved ids, scored 0."""


@dataclass(frozen=True)
class RetrievalSummary:
    """Means of the ranking metrics of one run."""

    run_id: str
    """Run id."""
    display_name: str
    """Run display name."""
    benchmark: str
    """Benchmark id."""
    means: MeanScores
    """Means over queries with a non-empty gold set (``n_scored``); ``n_queries`` counts all queries."""
    n_without_ids: int
    """Scored questions without retrieved ids, counted with score 0."""


def qa_queries(run: LoadedRun, k: int = DEFAULT_K) -> RunQueries | None:
    """Per-question metrics of a QA run that records retrieved ids; None when no scored question carries them.

    Read from the run's question table: three columns of the scored questions, no question objects.
    """
    table = run.table.filter(run.table.column("scored"))
    ids = table.select(["question_id", "retrieved_ids", "gold_evidence_ids"]).to_pydict()
    if all(r is None for r in ids["retrieved_ids"]):
        return None
    return RunQueries(
        run_id=run.run_id,
        display_name=run.display_name,
        benchmark=run.meta.benchmark,
        query_ids=tuple(ids["question_id"]),
        scores=evaluate([r or [] for r in ids["retrieved_ids"]], [g or [] for g in ids["gold_evidence_ids"]], k),
        n_without_ids=sum(r is None for r in ids["retrieved_ids"]),
    )


def summarize(queries: RunQueries) -> RetrievalSummary:
    """Means over the run's queries with a gold set."""
    return RetrievalSummary(
        run_id=queries.run_id,
        display_name=queries.display_name,
        benchmark=queries.benchmark,
        means=aggregate(queries.scores),
        n_without_ids=queries.n_without_ids,
    )


def qa_summaries(runs: Sequence[LoadedRun], k: int = DEFAULT_K) -> dict[str, RetrievalSummary]:
    """Run id -> metric means, for the QA runs that record retrieved ids."""
    out: dict[str, RetrievalSummary] = {}
    for r in runs:
        q = qa_queries(r, k)
        if q is not None:
            out[r.run_id] = summarize(q)
    return out
