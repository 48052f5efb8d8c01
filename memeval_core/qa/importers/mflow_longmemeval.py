"""FlowElement-ai/mflow-benchmarks: LongMemEval per-question files and the Evolving Events runs.

LongMemEval (``eval_100_per_question.json`` and zep's ``*_detailed.json``), three layouts:

- ``{"summary": {engine, top_k, ...}, "results": [{question_id, question, question_type,
  gold_answer, generated_answer, llm_score, ...}]}`` (cognee, mem0);
- ``[{question_id, question, gold_answer, generated_answer, llm_score, question_type, num_sessions,
  ...}]`` (mflow, supermemory);
- ``[{idx, question_id, question_type, question, gold_answer, hypothesis, grade, retrieval_duration_s?,
  total_duration_s?, ...}]`` (zep).

The benchmark variant comes from ``num_sessions`` where present (see
:func:`cognitive_memory.longmemeval_variant`); files without it are ``longmemeval-oracle``, the only
variant this harness ran (its configs and summaries: "LongMemEval Oracle (first 100 questions)").

Evolving Events (``unified_evaluated.json``): ``[{question, answer, golden_answer, metrics:
{directllm_correctness, deepeval_correctness}}]`` - two graded judges (0..1) per answer, one of
which may be null. Question ids are positions in ``data/qa_pairs.json`` (``q0`` ...; same order in
every run). The run's folder ``results/<system>/topk<k>_<answer model>`` names system and config.
"""

from __future__ import annotations

import re
from typing import Any

from memeval_core.qa.columns import ColumnRun
from memeval_core.qa.importers._common import (
    Source,
    UnjudgedError,
    binary_verdict,
    build_run,
    fail,
    graded_verdict,
    need,
    number,
    objects,
    opt,
    system_from_path,
    text,
)
from memeval_core.qa.importers.cognitive_memory import longmemeval_variant

FORMAT = "mflow-longmemeval"
EVOLVING_FORMAT = "mflow-evolving-events"
EVOLVING_BENCHMARK = "evolving-events"
EVOLVING_JUDGES = ("directllm_correctness", "deepeval_correctness")
"""The two graded judges of Evolving Events ("Human-like Correctness" and DeepEval GEval correctness)."""
EVOLVING_QUESTIONS = 100
LONGMEMEVAL_SIZE = 500
_CONFIG = re.compile(r"^topk(?P<k>\d+)_(?P<model>.+)$")


def _lme_item(x: Any) -> bool:
    return (
        isinstance(x, dict)
        and "question_id" in x
        and "gold_answer" in x
        and ("llm_score" in x or "grade" in x)
        and ("generated_answer" in x or "hypothesis" in x)
    )


def _evolving_item(x: Any) -> bool:
    return isinstance(x, dict) and "golden_answer" in x and isinstance(x.get("metrics"), dict)


def _items(data: Any) -> list[Any] | None:
    if isinstance(data, list):
        return data
    if isinstance(data, dict) and isinstance(data.get("summary"), dict) and isinstance(data.get("results"), list):
        results: list[Any] = data["results"]
        return results
    return None


def sniff(data: Any, path: str) -> bool:
    """True for an mflow LongMemEval per-question file or an Evolving Events ``unified_evaluated`` file."""
    items = _items(data)
    if not items:
        return False
    if isinstance(data, list) and _evolving_item(items[0]):
        return True
    return _lme_item(items[0])


def _longmemeval(src: Source, items: list[Any], summary: dict[str, Any]) -> ColumnRun:
    questions: list[dict[str, Any]] = []
    sessions: list[int] = []
    for _, where, item in objects(src, items, ["results"] if summary else []):
        key = "llm_score" if "llm_score" in item else "grade"
        verdict = binary_verdict(src, item.get(key), [*where, key], key)
        n_sessions = opt(src, item, "num_sessions", where, int)
        if n_sessions is not None:
            sessions.append(n_sessions)
        qid = need(src, item, "question_id", where, str)
        qtype = opt(src, item, "question_type", where, str)
        retrieval_s = number(src, item, "retrieval_duration_s", where)
        total_s = number(src, item, "total_duration_s", where)
        questions.append(
            {
                "benchmark": "",
                "question_id": qid,
                "question": need(src, item, "question", where, str),
                "category": qtype,
                "category_name": qtype,
                "gold_answer": text(item.get("gold_answer")),
                "answer": text(item.get("generated_answer", item.get("hypothesis"))),
                "verdicts": [verdict] if verdict is not None else [],
                "latency_ms": None if total_s is None else total_s * 1000,
                "retrieval_latency_ms": None if retrieval_s is None else retrieval_s * 1000,
                "is_abstention": qid.endswith("_abs"),
            }
        )
    if not any(q["verdicts"] for q in questions):
        raise UnjudgedError(f"{src.rel}: {len(questions)} answers without any judge verdict")
    benchmark = longmemeval_variant(sessions) if sessions else "longmemeval-oracle"
    for q in questions:
        q["benchmark"] = benchmark
    engine = summary.get("engine")
    top_k = summary.get("top_k")
    meta: dict[str, Any] = {
        "benchmark": benchmark,
        "system": engine if isinstance(engine, str) and engine else system_from_path(src),
        "format": FORMAT,
        "variant": src.stem,
        "top_k": top_k if isinstance(top_k, int) and not isinstance(top_k, bool) else None,
        "dataset_questions": LONGMEMEVAL_SIZE,
        "stated": {k: v for k, v in summary.items() if k in ("total_questions", "llm_accuracy")},
    }
    return build_run(src, meta, questions)


def _evolving(src: Source, items: list[Any]) -> ColumnRun:
    questions: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        where: list[int | str] = [i]
        if not _evolving_item(item):
            fail(src, where, "expected {question, answer, golden_answer, metrics}")
        metrics = item["metrics"]
        verdicts = [
            v
            for judge in EVOLVING_JUDGES
            if (v := graded_verdict(src, metrics.get(judge), [*where, "metrics", judge], judge, "unit")) is not None
        ]
        questions.append(
            {
                "benchmark": EVOLVING_BENCHMARK,
                "question_id": f"q{i}",
                "question": need(src, item, "question", where, str),
                "gold_answer": text(item.get("golden_answer")),
                "answer": text(item.get("answer")),
                "verdicts": verdicts,
            }
        )
    if not any(q["verdicts"] for q in questions):
        raise UnjudgedError(f"{src.rel}: no judge scores")
    config = src.dirs[-1] if src.dirs else src.stem
    m = _CONFIG.match(config)
    meta: dict[str, Any] = {
        "benchmark": EVOLVING_BENCHMARK,
        "system": src.dirs[-2] if len(src.dirs) >= 2 else system_from_path(src),
        "format": EVOLVING_FORMAT,
        "variant": config,
        "answer_model": m["model"] if m else None,
        "top_k": int(m["k"]) if m else None,
        "dataset_questions": EVOLVING_QUESTIONS,
    }
    return build_run(src, meta, questions)


def load(src: Source) -> list[ColumnRun]:
    """One run per file; raise :class:`UnjudgedError` for answer files without verdicts."""
    items = _items(src.data)
    if not items:
        fail(src, [], "no per-question items")
    if isinstance(src.data, list) and _evolving_item(items[0]):
        return [_evolving(src, items)]
    summary = src.data.get("summary", {}) if isinstance(src.data, dict) else {}
    return [_longmemeval(src, items, summary)]
