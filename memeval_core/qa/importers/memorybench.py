"""supermemory MemoryBench reports (``report.json`` / ``report_slim.json``).

Top level ``{provider, benchmark, runId, judge, answeringModel, timestamp, summary: {totalQuestions,
correctCount, accuracy}, retrieval: {..., k}, evaluations | evaluations_slim: [item, ...]}``; items
``{questionId, questionType, question, score (0/1), label, explanation, hypothesis, groundTruth,
searchDurationMs, answerDurationMs, totalDurationMs, retrievalMetrics}``.

LoCoMo ``questionId`` is ``conv-26-q0`` (raw ``qa`` index, canonical). ``questionType`` uses
MemoryBench's own labels (1 single-hop, 2 multi-hop, 3 temporal, 4 world-knowledge, 5 adversarial)
which are mapped to raw codes here, so memeval's category names apply. ``latency_ms`` is search +
answer time (``totalDurationMs`` also counts per-question ingestion and judging).
``retrievalMetrics`` is kept as stated (``retrieval_metrics``): the slim report has no retrieved ids.
"""

from __future__ import annotations

from typing import Any

from memeval_core.qa import locomo
from memeval_core.qa.columns import ColumnRun
from memeval_core.qa.importers._common import (
    Source,
    binary_verdict,
    build_run,
    fail,
    need,
    number,
    objects,
    opt,
    text,
)

FORMAT = "memorybench"
JUDGE = "judge"
_BENCHMARKS = {"locomo": "locomo", "longmemeval": "longmemeval-s", "longmemeval_s": "longmemeval-s"}
_DATASET_SIZE = {"locomo": locomo.TOTAL_QUESTIONS, "longmemeval-s": 500}


def _items_key(data: dict[str, Any]) -> str | None:
    for key in ("evaluations_slim", "evaluations"):
        items = data.get(key)
        if isinstance(items, list) and items and isinstance(items[0], dict) and "questionId" in items[0]:
            return key
    return None


def sniff(data: Any, path: str) -> bool:
    """True for an object with ``evaluations``/``evaluations_slim`` items carrying ``questionId``."""
    return isinstance(data, dict) and _items_key(data) is not None


def load(src: Source) -> list[ColumnRun]:
    """One run per report."""
    data = src.data
    key = _items_key(data)
    if key is None:
        fail(src, [], "no evaluations list")
    bench_raw = data.get("benchmark")
    benchmark = _BENCHMARKS.get(str(bench_raw).lower(), str(bench_raw).lower()) if bench_raw else "unknown"
    is_locomo = benchmark == locomo.BENCHMARK
    judge_model = data.get("judge") if isinstance(data.get("judge"), str) else None
    questions: list[dict[str, Any]] = []
    adversarial_scored = False
    for _, where, item in objects(src, data[key], [key]):
        qtype = opt(src, item, "questionType", where, str)
        code = locomo.MEMORYBENCH_LABEL_TO_CODE.get(qtype) if is_locomo and qtype else qtype
        if is_locomo and qtype is not None and code is None:
            fail(src, [*where, "questionType"], f"unknown LoCoMo question type {qtype!r}")
        label = item.get("label") if isinstance(item.get("label"), str) else None
        verdict = binary_verdict(src, item.get("score"), [*where, "score"], JUDGE, judge_model, label)
        adversarial_scored |= code == locomo.ADVERSARIAL and verdict is not None
        search = number(src, item, "searchDurationMs", where)
        answer_ms = number(src, item, "answerDurationMs", where)
        error = item.get("error")
        questions.append(
            {
                "benchmark": benchmark,
                "question_id": need(src, item, "questionId", where, str),
                "question": opt(src, item, "question", where, str) or "",
                "category": code,
                "category_name": locomo.category_name(code) if is_locomo else qtype,
                "gold_answer": text(item.get("groundTruth")),
                "answer": text(item.get("hypothesis")),
                "verdicts": [verdict] if verdict is not None else [],
                "latency_ms": None if search is None and answer_ms is None else (search or 0.0) + (answer_ms or 0.0),
                "retrieval_latency_ms": search,
                "error": bool(error),
                "error_message": str(error) if error else None,
                "retrieval_metrics": item.get("retrievalMetrics"),
                "judge_explanation": item.get("explanation"),
            }
        )
    retrieval = data.get("retrieval") if isinstance(data.get("retrieval"), dict) else {}
    k = retrieval.get("k")
    summary = data.get("summary") if isinstance(data.get("summary"), dict) else {}
    provider = data.get("provider")
    run_id = data.get("runId")
    meta: dict[str, Any] = {
        "benchmark": benchmark,
        "system": provider if isinstance(provider, str) and provider else "unknown",
        "format": FORMAT,
        "variant": run_id if isinstance(run_id, str) else src.stem,
        "answer_model": data.get("answeringModel") if isinstance(data.get("answeringModel"), str) else None,
        "judge_models": [judge_model] if judge_model else [],
        "top_k": k if isinstance(k, int) and not isinstance(k, bool) else None,
        "date": data.get("timestamp") if isinstance(data.get("timestamp"), str) else None,
        "includes_adversarial": adversarial_scored if is_locomo else None,
        "dataset_questions": _DATASET_SIZE.get(benchmark),
        "stated": {k2: v for k2, v in summary.items() if isinstance(v, int | float)},
    }
    return [build_run(src, meta, questions)]
