"""QA leaderboard rows: one per run (repeats of one configuration combined), every number re-derived.

Rows are plain dicts with the keys :func:`row` writes (JSON-ready, rounded by :mod:`memeval_core.rounding`).
Runs are ranked only against runs of the same benchmark that agree on ``includes_adversarial``
(``rank_group``); within a group publishable runs come first, then by accuracy.

Repeats: runs whose metadata states a ``repeat`` number and that share benchmark, system, variant,
answer model, top-k and judges form one row; its ``accuracy`` is the mean over the repeats (each
already a mean over judges) and ``accuracy_std/min/max`` show the spread.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Sequence
from typing import Any

from memeval_core.latency import summarize
from memeval_core.leaderboard import csv_text, text_table
from memeval_core.qa.ingest import QaRunHeader
from memeval_core.qa.scoring import combine_repeats
from memeval_core.rounding import ms, ratio


def rank_group(r: QaRunHeader) -> str:
    """The runs a run is ranked among: its benchmark, and whether category 5 was scored when the run says."""
    adv = r.meta.includes_adversarial
    if adv is None:
        return r.meta.benchmark
    return f"{r.meta.benchmark} ({'with' if adv else 'without'} category 5)"


def _repeat_key(r: QaRunHeader) -> tuple[Any, ...] | None:
    m = r.meta
    if m.repeat is None:
        return None
    return (m.benchmark, m.system, m.variant, m.answer_model, m.top_k, tuple(m.judge_models))


def row(runs: Sequence[QaRunHeader]) -> dict[str, Any]:
    """The row of one run, or of several repeats of one configuration (first run's identity)."""
    first = runs[0]
    meta = first.meta
    s = first.score
    # Headers only: a header-only load (memeval_core.results.load_headers) reads no question.
    rep = combine_repeats([r.score for r in runs])
    single = len(runs) == 1
    lat = summarize(list(s.latency_ms))
    reasons = list(dict.fromkeys(x for r in runs for x in r.not_publishable_because))
    return {
        "run_id": first.run_id,
        "display_name": first.display_name,
        "system": meta.system,
        "benchmark": meta.benchmark,
        "rank_group": rank_group(first),
        "rank": None,
        "n_questions": s.n_questions,
        "accuracy": ratio(s.accuracy if single else rep.mean),
        "majority_accuracy": ratio(s.majority_accuracy) if single else None,
        "n_judges": s.n_judges,
        "judges": {j: ratio(a) for j, a in s.per_judge_accuracy.items()},
        "failures": sum(r.score.failures for r in runs),
        "categories": {
            code: {"name": g.name, "n": g.n, "accuracy": ratio(g.accuracy)} for code, g in s.categories.items()
        },
        "includes_adversarial": meta.includes_adversarial,
        "publishable": all(r.publishable for r in runs),
        "not_publishable_because": reasons,
        "accuracy_without_disputed": ratio(first.accuracy_without_disputed) if single else None,
        "n_disputed": first.n_disputed,
        "n_repeats": len(runs),
        "accuracy_std": ratio(rep.std),
        "accuracy_min": ratio(rep.min) if not single else None,
        "accuracy_max": ratio(rep.max) if not single else None,
        "latency_p50_ms": ms(lat.p50_ms),
        "latency_p95_ms": ms(lat.p95_ms),
        "top_k": meta.top_k,
        "answer_model": meta.answer_model,
        "judge_models": list(meta.judge_models),
        "format": meta.format,
        "source": " | ".join(r.meta.source_file or "" for r in runs),
        "joined": first.join.summary() if first.join is not None else None,
    }


def rows(runs: Sequence[QaRunHeader], benchmark: str | None = None) -> list[dict[str, Any]]:
    """Leaderboard rows, repeats combined, ranked within (benchmark, includes_adversarial) groups."""
    groups: dict[Any, list[QaRunHeader]] = {}
    for r in runs:
        if benchmark is not None and r.meta.benchmark != benchmark:
            continue
        key = _repeat_key(r) or ("single", r.run_id)
        groups.setdefault(key, []).append(r)
    out = [row(sorted(g, key=lambda r: r.meta.repeat or 0)) for g in groups.values()]
    by_group: dict[str, list[dict[str, Any]]] = {}
    for x in out:
        by_group.setdefault(x["rank_group"], []).append(x)
    for members in by_group.values():
        # Rank = 1 + members with a strictly higher accuracy (ties share a rank): counted in a sorted list.
        ranked = sorted(m["accuracy"] for m in members if m["accuracy"] is not None)
        for x in members:
            if x["accuracy"] is not None:
                x["rank"] = 1 + len(ranked) - bisect.bisect_right(ranked, x["accuracy"])
    return sorted(
        out,
        key=lambda r: (r["rank_group"], not r["publishable"], -(r["accuracy"] or 0.0), r["display_name"]),
    )


def flat(r: dict[str, Any]) -> dict[str, Any]:
    """A row for tables and CSV: lists joined, categories as ``code name: accuracy (n)``."""
    out: dict[str, Any] = {}
    for k, v in r.items():
        if k == "categories" and isinstance(v, dict):
            out[k] = "; ".join(f"{code} {c['name']}: {c['accuracy']} ({c['n']})" for code, c in v.items())
        elif isinstance(v, list):
            out[k] = "; ".join(str(x) for x in v)
        elif isinstance(v, dict):
            out[k] = json.dumps(v, sort_keys=True, ensure_ascii=False)
        else:
            out[k] = v
    return out


def to_csv(rs: Sequence[dict[str, Any]]) -> str:
    """CSV text of flattened rows."""
    return csv_text([flat(r) for r in rs])


def to_table(rs: Sequence[dict[str, Any]]) -> str:
    """A fixed-width text table for terminals."""
    cols = (
        "display_name",
        "benchmark",
        "rank",
        "n_questions",
        "accuracy",
        "majority_accuracy",
        "failures",
        "publishable",
    )
    body = [["-" if r[c] is None else str(r[c]) for c in cols] for r in rs]
    head = ["run", "benchmark", "rank", "questions", "accuracy", "majority", "failures", "publishable"]
    return text_table(head, body)
