"""planetaryescape/cognitive-memory-benchmarks result files.

- LoCoMo ``{"aggregate": {..., "meta": {adapter, model, prompt_mode, top_k_override, timestamp}},
  "per_question": [{conv_index, question_index, question, ground_truth, prediction, category,
  retrieval_time_ms, llm_correct?}]}``; ``conv_index``/``question_index`` are raw locomo10.json
  indices. ``llm_correct`` is absent on category 5: the harness does not grade category 5, so those
  items are kept with ``scored=False``. ``retrieved_contents`` are texts, not ids, and stay out of
  ``retrieved_ids``. The ``parallel/conv<N>.json`` files are shards of one run (merged on ingest).
- LongMemEval ``{"per_question": [{question_id, question_type, question, ground_truth, prediction,
  correct, judge_model, judge_raw, is_abstention, num_sessions, retrieval_time_ms}], "meta",
  "aggregate"}``. The variant is read from the haystack size: a median of at most 10 sessions per
  question is the oracle set, at most 100 is LongMemEval-S (about 50), more is LongMemEval-M.
- judge reliability ``{"summary", "all_results": [{question, ground_truth, prediction, category,
  original_verdict, alt_verdict, alt_raw}], "meta": {model, alt_prompt}}``: a stratified 50-question
  sample of the repository's own cognitive_memory LoCoMo run, re-judged with a second prompt; two
  verdicts per item (judges ``original`` and ``alt``), no ids (joined by question text).
- THUIR MemoryBench runs ``{"aggregate": {dataset, ...}, "per_question": [{test_idx, question,
  ground_truth, prediction, correct | f1}]}``: only the ``correct`` verdict is a judge; runs with F1
  only have no verdict and are skipped as unjudged.
"""

from __future__ import annotations

import statistics
from typing import Any

from memeval_core.qa import locomo
from memeval_core.qa.columns import ColumnRun
from memeval_core.qa.importers._common import (
    Source,
    UnjudgedError,
    binary_verdict,
    build_run,
    fail,
    need,
    number,
    objects,
    opt,
    text,
)

FORMAT = "cognitive-memory"
SYSTEM = "cognitive_memory"
"""The repository's own system; its judge-reliability files re-judge this system's run."""
LONGMEMEVAL_SIZE = 500


def _is_per_question(data: Any) -> bool:
    if not isinstance(data, dict) or not isinstance(data.get("per_question"), list) or not data["per_question"]:
        return False
    first = data["per_question"][0]
    return isinstance(first, dict) and "prediction" in first and "ground_truth" in first


def _is_reliability(data: Any) -> bool:
    if not isinstance(data, dict) or not isinstance(data.get("all_results"), list) or not data["all_results"]:
        return False
    first = data["all_results"][0]
    return isinstance(first, dict) and "original_verdict" in first and "alt_verdict" in first


def sniff(data: Any, path: str) -> bool:
    """True for a ``per_question`` result file or a judge-reliability file of this repository."""
    return _is_per_question(data) or _is_reliability(data)


def longmemeval_variant(num_sessions: list[int]) -> str:
    """``longmemeval-oracle`` / ``-s`` / ``-m`` from the sessions per question (median <= 10 / <= 100 / more)."""
    if not num_sessions:
        return "longmemeval"
    median = statistics.median(num_sessions)
    return "longmemeval-oracle" if median <= 10 else "longmemeval-s" if median <= 100 else "longmemeval-m"


def _meta_block(data: dict[str, Any]) -> dict[str, Any]:
    for candidate in (data.get("meta"), (data.get("aggregate") or {}).get("meta")):
        if isinstance(candidate, dict):
            return candidate
    return {}


def _locomo(src: Source, items: list[Any], meta_in: dict[str, Any]) -> ColumnRun:
    questions: list[dict[str, Any]] = []
    adversarial_scored = False
    sample_ids, names = locomo.SAMPLE_IDS, locomo.CATEGORY_NAMES
    # A file of answers without verdicts yields no run: its items are only checked, as below, and counted.
    graded = any(item.__class__ is dict and item.get("llm_correct") is not None for item in items)
    for _, where, item in objects(src, items, ["per_question"]):
        ci = need(src, item, "conv_index", where, int)
        qi = need(src, item, "question_index", where, int)
        if not 0 <= ci < len(sample_ids):
            fail(src, [*where, "conv_index"], f"LoCoMo has conversations 0..9, got {ci}")
        if not graded:
            need(src, item, "category", where, (int, str))
            need(src, item, "question", where, str)
            number(src, item, "retrieval_time_ms", where)
            continue
        code = str(need(src, item, "category", where, (int, str)))
        verdict = binary_verdict(src, item.get("llm_correct"), [*where, "llm_correct"], "llm_correct")
        adversarial_scored |= code == locomo.ADVERSARIAL and verdict is not None
        question = need(src, item, "question", where, str)
        gold, answer = item.get("ground_truth"), item.get("prediction")
        questions.append(
            {
                "benchmark": locomo.BENCHMARK,
                "question_id": f"{sample_ids[ci]}-q{qi}",  # locomo.question_id
                "question": question,
                "conversation": sample_ids[ci],
                "question_index": qi,
                "category": code,
                "category_name": names.get(code),
                "gold_answer": gold if gold is None or gold.__class__ is str else text(gold),
                "answer": answer if answer is None or answer.__class__ is str else text(answer),
                "verdicts": [verdict] if verdict is not None else [],
                "retrieval_latency_ms": number(src, item, "retrieval_time_ms", where),
                "scored": verdict is not None or code != locomo.ADVERSARIAL,
            }
        )
    if not graded or not any(q["verdicts"] for q in questions):
        raise UnjudgedError(f"{src.rel}: {len(items)} answers without any llm_correct verdict")
    top_k = meta_in.get("top_k_override", meta_in.get("top_k"))
    meta: dict[str, Any] = {
        "benchmark": locomo.BENCHMARK,
        "system": meta_in.get("adapter") if isinstance(meta_in.get("adapter"), str) else SYSTEM,
        "format": FORMAT,
        "variant": src.dirs[-2] if len(src.dirs) >= 2 and src.dirs[-1] == "parallel" else src.stem,
        "answer_model": meta_in.get("model") if isinstance(meta_in.get("model"), str) else None,
        "top_k": top_k if isinstance(top_k, int) and not isinstance(top_k, bool) else None,
        "prompt_mode": meta_in.get("prompt_mode") if isinstance(meta_in.get("prompt_mode"), str) else None,
        "date": meta_in.get("timestamp") if isinstance(meta_in.get("timestamp"), str) else None,
        "includes_adversarial": adversarial_scored,
        "dataset_questions": locomo.TOTAL_QUESTIONS,
        "stated": _stated(src.data),
    }
    return build_run(src, meta, questions)


def _stated(data: dict[str, Any]) -> dict[str, Any]:
    agg: dict[str, Any] = data["aggregate"] if isinstance(data.get("aggregate"), dict) else {}
    overall: dict[str, Any] = agg["overall"] if isinstance(agg.get("overall"), dict) else agg
    keys = ("num_questions", "llm_accuracy", "overall_accuracy", "task_averaged_accuracy", "abstention_accuracy")
    return {k: overall[k] for k in keys if isinstance(overall.get(k), int | float)}


def _longmemeval(src: Source, items: list[Any], meta_in: dict[str, Any]) -> ColumnRun:
    questions: list[dict[str, Any]] = []
    sessions: list[int] = []
    judge_models: list[str] = []
    for _, where, item in objects(src, items, ["per_question"]):
        qid = need(src, item, "question_id", where, str)
        model = opt(src, item, "judge_model", where, str)
        if model and model not in judge_models:
            judge_models.append(model)
        label = item.get("judge_raw") if isinstance(item.get("judge_raw"), str) else None
        verdict = binary_verdict(src, item.get("correct"), [*where, "correct"], "correct", model, label)
        n_sessions = opt(src, item, "num_sessions", where, int)
        if n_sessions is not None:
            sessions.append(n_sessions)
        qtype = opt(src, item, "question_type", where, str)
        abstention = item.get("is_abstention")
        questions.append(
            {
                "benchmark": "",
                "question_id": qid,
                "question": need(src, item, "question", where, str),
                "category": qtype,
                "category_name": qtype,
                "gold_answer": text(item.get("ground_truth")),
                "answer": text(item.get("prediction")),
                "verdicts": [verdict] if verdict is not None else [],
                "retrieval_latency_ms": number(src, item, "retrieval_time_ms", where),
                "is_abstention": abstention if isinstance(abstention, bool) else qid.endswith("_abs"),
            }
        )
    if not any(q["verdicts"] for q in questions):
        raise UnjudgedError(f"{src.rel}: {len(questions)} answers without any judge verdict")
    benchmark = longmemeval_variant(sessions)
    for q in questions:
        q["benchmark"] = benchmark
    top_k = meta_in.get("top_k")
    date = meta_in.get("timestamp") or (src.data.get("aggregate", {}).get("meta", {}) or {}).get("timestamp")
    meta: dict[str, Any] = {
        "benchmark": benchmark,
        "system": meta_in.get("adapter") if isinstance(meta_in.get("adapter"), str) else SYSTEM,
        "format": FORMAT,
        "variant": "/".join([*src.dirs[-1:], src.stem]),
        "answer_model": meta_in.get("model") if isinstance(meta_in.get("model"), str) else None,
        "judge_models": judge_models,
        "top_k": top_k if isinstance(top_k, int) and not isinstance(top_k, bool) else None,
        "date": date if isinstance(date, str) else None,
        "dataset_questions": LONGMEMEVAL_SIZE,
        "stated": _stated(src.data),
    }
    return build_run(src, meta, questions)


def _thuir(src: Source, items: list[Any], agg: dict[str, Any]) -> ColumnRun:
    dataset: str = agg["dataset"] if isinstance(agg.get("dataset"), str) else src.stem
    benchmark = f"memorybench-{dataset.lower()}"
    questions: list[dict[str, Any]] = []
    for i, where, item in objects(src, items, ["per_question"]):
        verdict = binary_verdict(src, item.get("correct"), [*where, "correct"], "correct")
        cat = item.get("category")
        questions.append(
            {
                "benchmark": benchmark,
                "question_id": str(item.get("test_idx", i)),
                "question": text(item.get("question")) or "",
                "category": None if cat is None else str(cat),
                "category_name": None if cat is None else str(cat),
                "gold_answer": text(item.get("ground_truth")),
                "answer": text(item.get("prediction")),
                "verdicts": [verdict] if verdict is not None else [],
            }
        )
    if not any(q["verdicts"] for q in questions):
        raise UnjudgedError(f"{src.rel}: no judge verdicts (token F1 only)")
    meta = {"benchmark": benchmark, "system": SYSTEM, "format": FORMAT, "variant": src.stem, "sampled": True}
    return build_run(src, meta, questions)


def _reliability(src: Source) -> ColumnRun:
    data = src.data
    meta_in = data.get("meta") if isinstance(data.get("meta"), dict) else {}
    alt_model = meta_in.get("model") if isinstance(meta_in.get("model"), str) else None
    questions: list[dict[str, Any]] = []
    for i, where, item in objects(src, data["all_results"], ["all_results"]):
        code = str(need(src, item, "category", where, (int, str)))
        original = binary_verdict(src, item.get("original_verdict"), [*where, "original_verdict"], "original")
        alt_label = item.get("alt_raw") if isinstance(item.get("alt_raw"), str) else None
        alt = binary_verdict(src, item.get("alt_verdict"), [*where, "alt_verdict"], "alt", alt_model, alt_label)
        questions.append(
            {
                "benchmark": locomo.BENCHMARK,
                "question_id": f"item-{i}",
                "question": need(src, item, "question", where, str),
                "category": code,
                "category_name": locomo.category_name(code),
                "gold_answer": text(item.get("ground_truth")),
                "answer": text(item.get("prediction")),
                "verdicts": [v for v in (original, alt) if v is not None],
            }
        )
    summary = data.get("summary") if isinstance(data.get("summary"), dict) else {}
    meta: dict[str, Any] = {
        "benchmark": locomo.BENCHMARK,
        "system": SYSTEM,
        "format": f"{FORMAT}-judge-reliability",
        "variant": f"judge reliability {src.dirs[-1] if src.dirs else src.stem}",
        "judge_models": [alt_model] if alt_model else [],
        "includes_adversarial": any(q["category"] == locomo.ADVERSARIAL for q in questions),
        "sampled": True,
        "dataset_questions": locomo.TOTAL_QUESTIONS,
        "stated": {k: v for k, v in summary.items() if isinstance(v, int | float)},
    }
    return build_run(src, meta, questions)


def load(src: Source) -> list[ColumnRun]:
    """One run per file; raise :class:`UnjudgedError` for answer files without a single verdict."""
    data = src.data
    if _is_reliability(data):
        return [_reliability(src)]
    items = data["per_question"]
    first = items[0]
    if "conv_index" in first and "question_index" in first:
        return [_locomo(src, items, _meta_block(data))]
    if "question_id" in first:
        return [_longmemeval(src, items, _meta_block(data))]
    agg = data.get("aggregate") if isinstance(data.get("aggregate"), dict) else {}
    return [_thuir(src, items, agg)]
