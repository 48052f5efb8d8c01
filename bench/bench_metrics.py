"""Ranking metrics (NDCG@5, P@5, R@5, MRR@5, F1@5) per query, end to end from per-query id lists.

Side by side in one run, on the same seeded synthetic queries (1-5 gold ids, 10-20 ranked retrieved ids; edge
cases: ~2% without gold, ~2% with nothing retrieved, ~5% with a repeated id):

- memeval from Python lists (``evaluate(retrieved, gold, k=5)``, conversion included);
- the protocol's naive per-query loop (deduplicate, cut at k, score each query in Python);
- ranx (``Qrels``/``Run`` + ``evaluate``, building its dicts included; numba compiled or loaded from
  ``NUMBA_CACHE_DIR`` before timing, that warm-up reported apart);
- pytrec_eval (trec_eval; F1 computed from its P_5 and recall_5).

The libraries are timed on the first 200,000 queries (1,000 with ``--quick``; building their dicts is slow) and compared
in queries per second; values are checked to 1e-12 wherever the definitions agree (see
memeval_core/metrics: no-gold queries are NaN here, 0 in ranx, absent in trec_eval; trec_eval's recip_rank
has no cutoff).

The numba kernel this script used to time as well was retired by issue 19 ("Columnar core"); the ratios it
gave are kept in docs/PERFORMANCE.md, section 1.

    python -m bench.bench_metrics [--quick]
"""

from __future__ import annotations

import math
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import Timing, parse_args, peak_rss_mib, ratio, report, timed
from memeval_core.metrics.evaluate import evaluate

K = 5
SEED = 20260401
NAMES = ("ndcg", "precision", "recall", "mrr", "f1")


def synthetic(n: int, seed: int = SEED) -> tuple[list[list[str]], list[list[str]]]:
    """Seeded queries: retrieved lists of 10-20 ids and gold lists of 1-5 ids drawn from a per-query pool.

    Every id is a fresh string object made query by query, as parsing a results file makes them (equal ids in
    gold and retrieved are equal strings, not the same object), so memory layout is what real input has.
    """
    rng = np.random.default_rng(seed)
    pool = rng.integers(0, 10_000_000, size=(n, 25))
    order = rng.permuted(np.tile(np.arange(25), (n, 1)), axis=1)
    ranked = np.take_along_axis(pool, order, axis=1)
    n_ret = rng.integers(10, 21, size=n)
    n_gold = rng.integers(1, 6, size=n)
    gold_pos = rng.permuted(np.tile(np.arange(25), (n, 1)), axis=1)
    edge = rng.uniform(size=n)
    n_gold[edge < 0.02] = 0
    n_ret[(edge >= 0.02) & (edge < 0.04)] = 0
    dup = (edge >= 0.04) & (edge < 0.09)
    # A repeated id: a later slot repeats one of the first three (it must count once, at its first rank).
    src = rng.integers(0, 3, size=n)
    dst = rng.integers(3, 10, size=n)
    rows = np.flatnonzero(dup)
    ranked[rows, dst[rows]] = ranked[rows, src[rows]]
    gold_ids = np.take_along_axis(pool, gold_pos, axis=1)
    retrieved: list[list[str]] = []
    gold: list[list[str]] = []
    for row, m, grow, gm in zip(ranked.tolist(), n_ret.tolist(), gold_ids.tolist(), n_gold.tolist(), strict=True):
        retrieved.append([f"doc-{i:07d}" for i in row[:m]])
        gold.append([f"doc-{i:07d}" for i in grow[:gm]])
    return retrieved, gold


_DISCOUNT = [1.0 / math.log2(i + 2) for i in range(K)]
_IDEAL = [sum(_DISCOUNT[: i + 1]) for i in range(K)]


def naive(retrieved: list[list[str]], gold: list[list[str]]) -> dict[str, list[float]]:
    """The protocol's per-query loop: deduplicate in order, cut at k, score each query in Python."""
    out: dict[str, list[float]] = {m: [] for m in NAMES}
    nan = math.nan
    for ranked, g in zip(retrieved, gold, strict=True):
        gs = set(g)
        if not gs:
            for m in NAMES:
                out[m].append(nan)
            continue
        top = list(dict.fromkeys(ranked))[:K]
        hits = [d in gs for d in top]
        n_hits = sum(hits)
        dcg = sum(w for w, h in zip(_DISCOUNT, hits, strict=False) if h)
        first = hits.index(True) + 1 if n_hits else 0
        p = n_hits / K
        r = n_hits / len(gs)
        out["ndcg"].append(dcg / _IDEAL[min(len(gs), K) - 1])
        out["precision"].append(p)
        out["recall"].append(r)
        out["mrr"].append(1.0 / first if first else 0.0)
        out["f1"].append(2 * p * r / (p + r) if n_hits else 0.0)
    return out


def _run_dicts(retrieved: list[list[str]]) -> list[dict[str, float]]:
    """ranx/trec_eval run per query: each id scored by its first rank (higher is better), so ties never arise."""
    out = []
    for ranked in retrieved:
        scores: dict[str, float] = {}
        for pos, doc in enumerate(ranked):
            scores.setdefault(doc, float(len(ranked) - pos))
        out.append(scores)
    return out


def ranx_scores(retrieved: list[list[str]], gold: list[list[str]]) -> dict[str, dict[str, float]]:
    """ranx end to end: Qrels and Run from the lists, then per-query evaluate (scores by query id)."""
    from ranx import Qrels, Run
    from ranx import evaluate as ranx_evaluate

    qrels = Qrels({f"q{q}": {d: 1 for d in g} for q, g in enumerate(gold) if g})
    run = Run({f"q{q}": r for q, r in enumerate(_run_dicts(retrieved)) if gold[q]})
    ranx_evaluate(qrels, run, [f"{m}@{K}" for m in NAMES], return_mean=False, make_comparable=True)
    return {m: dict(run.scores[f"{m}@{K}"]) for m in NAMES}


def trec_scores(retrieved: list[list[str]], gold: list[list[str]]) -> dict[str, dict[str, float]]:
    """pytrec_eval end to end: dicts from the lists, ndcg_cut_5, P_5, recall_5, recip_rank; F1 from P and R."""
    import pytrec_eval

    qrels = {f"q{q}": {d: 1 for d in g} for q, g in enumerate(gold) if g}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut_{K}", f"P_{K}", f"recall_{K}", "recip_rank"})
    res = evaluator.evaluate({f"q{q}": r for q, r in enumerate(_run_dicts(retrieved))})
    out: dict[str, dict[str, float]] = {m: {} for m in NAMES}
    for q, v in res.items():
        p, r = v[f"P_{K}"], v[f"recall_{K}"]
        out["ndcg"][q] = v[f"ndcg_cut_{K}"]
        out["precision"][q] = p
        out["recall"][q] = r
        out["mrr"][q] = v["recip_rank"]
        out["f1"][q] = 2 * p * r / (p + r) if p + r else 0.0
    return out


def _max_diff(a: np.ndarray, b: np.ndarray) -> float:
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return math.inf
    keep = ~np.isnan(a)
    return float(np.max(np.abs(a[keep] - b[keep]))) if keep.any() else 0.0


def _qps(n: int, t: Timing) -> float:
    return n / t.best


def _row(method: str, queries: int, t: Timing) -> dict[str, Any]:
    return {"method": method, "queries": queries, "seconds": t.best, "queries/s": _qps(queries, t)}


def library_rows(
    retrieved: list[list[str]], gold: list[list[str]], ours: Any, quick: bool, details: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """ranx and pytrec_eval on the same queries: their rows and their value checks against ``ours``."""
    n_lib = len(retrieved)
    has_gold = np.array([bool(g) for g in gold])
    qids = [f"q{q}" for q in range(n_lib) if gold[q]]  # both leave out (or zero) queries without gold
    rows: list[dict[str, Any]] = []
    checks: dict[str, Any] = {}
    t_imp = time.perf_counter()
    try:
        import ranx  # noqa: F401
    except ImportError:
        details["ranx"] = "not installed"
    else:
        ranx_import_s = time.perf_counter() - t_imp
        # 20 queries: ranx switches to its multi-threaded kernels from 10 queries on, compiled separately.
        t_compile, _ = timed(lambda: ranx_scores(retrieved[:20], gold[:20]), 1)
        t_ranx, rx = timed(lambda: ranx_scores(retrieved, gold), 1 if quick else 2)
        for m in NAMES:
            checks[f"ranx_{m}"] = _max_diff(getattr(ours, m)[:n_lib][has_gold], np.array([rx[m][q] for q in qids]))
        rows.append(_row("ranx Qrels/Run + evaluate", n_lib, t_ranx))
        details["ranx"] = {
            "numba_cache_dir": os.environ["NUMBA_CACHE_DIR"],
            "import_seconds": ranx_import_s,
            "first_call_seconds (compile or cache load)": t_compile.best,
            "timing": t_ranx,
        }
    try:
        import pytrec_eval  # noqa: F401
    except ImportError:
        details["pytrec_eval"] = "not installed"
    else:
        t_trec, tr = timed(lambda: trec_scores(retrieved, gold), 1 if quick else 2)
        for m in NAMES:
            theirs = np.array([tr[m][q] for q in qids])
            mine = getattr(ours, m)[:n_lib][has_gold]
            if m == "mrr":
                # recip_rank has no cutoff: compare where the first hit (if any) is within the top k or absent.
                same = (mine > 0) | (theirs == 0)
                checks["trec_mrr_compared_queries"] = int(same.sum())
                mine, theirs = mine[same], theirs[same]
            checks[f"trec_{m}"] = _max_diff(mine, theirs)
        rows.append(_row("pytrec_eval (trec_eval)", n_lib, t_trec))
        details["pytrec_eval"] = {"timing": t_trec}
    return rows, checks


RETIRED_TARGETS = {"lists_vs_naive": 3.5}
"""Met only by the numba kernel, which issue 19 retired; measured for information, no longer targets."""


def main(argv: list[str] | None = None) -> None:
    """Measure and report."""
    args = parse_args(__doc__ or "", argv)
    n, n_lib = (2_000, 1_000) if args.quick else (1_000_000, 200_000)
    repeat = 1 if args.quick else 3
    # ranx compiles with numba, which reads its cache folder when first imported: set it first.
    os.environ.setdefault("NUMBA_CACHE_DIR", str(Path(tempfile.gettempdir()) / "memeval-numba-cache"))
    t0 = time.perf_counter()
    retrieved, gold = synthetic(n)
    setup_s = time.perf_counter() - t0

    t_lists, ours = timed(lambda: evaluate(retrieved, gold, k=K), repeat)
    t_naive, ref = timed(lambda: naive(retrieved, gold), repeat)

    checks: dict[str, Any] = {}
    for m in NAMES:
        checks[f"lists_vs_naive_{m}"] = _max_diff(getattr(ours, m), np.asarray(ref[m]))
    rows = [
        _row("memeval, from Python lists", n, t_lists),
        _row("naive per-query loop (protocol)", n, t_naive),
    ]
    details: dict[str, Any] = {"k": K, "queries": n, "library_queries": n_lib, "setup_seconds": setup_s}
    lib_rows, lib_checks = library_rows(retrieved[:n_lib], gold[:n_lib], ours, args.quick, details)
    rows += lib_rows
    checks.update(lib_checks)
    for r in rows:
        r["x naive"] = r["queries/s"] / _qps(n, t_naive)

    lib_qps = [r["queries/s"] for r in lib_rows]
    value_checks = [v for key, v in checks.items() if not key.endswith("_compared_queries")]
    details.update(
        {
            "timings": {"lists": t_lists, "naive": t_naive},
            "lists_vs_naive": ratio(t_naive.best, t_lists.best),
            "lists_vs_best_library": _qps(n, t_lists) / max(lib_qps) if lib_qps else None,
            "targets": {"values_equal_where_definitions_agree": 1e-12, "lists_vs_every_library": 5},
            "targets_met": {
                "values_equal_where_definitions_agree": max(value_checks) <= 1e-12,
                "lists_vs_every_library": bool(lib_qps) and _qps(n, t_lists) >= 5 * max(lib_qps),
            },
            "retired_targets (numba kernel, issue 19)": RETIRED_TARGETS,
            "information": ["lists_vs_naive"],
            "max_abs_differences": checks,
            "peak_rss_mib": peak_rss_mib(),
        }
    )
    report("bench_metrics", args, rows, details)


if __name__ == "__main__":
    main()
