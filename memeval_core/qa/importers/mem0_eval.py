"""mem0's LoCoMo evaluation format (``evaluation/`` of mem0ai/mem0 and its forks: memobase, mflow-benchmarks).

Three layouts of the same per-question item ``{question, answer, response, category, bleu_score,
f1_score, llm_score}`` (forks also write ``bleu1``/``f1``, ``evidence``, timings, ``llm_judge_raw``):

- ``{"<conversation index>": [item, ...], ...}`` - the original, one key per LoCoMo conversation;
- ``{"summary": {conv_idx, answer_model, judge_model, top_k, ...}, "results": [item, ...]}`` - one
  conversation per file (mflow-benchmarks ``conv<N>_full_eval.json``);
- a bare ``[item, ...]`` - one conversation, which the file does not name (mflow ``conv0_eval.json``;
  the LoCoMo join finds the conversation from the question texts).

``answer`` is the gold answer, ``response`` the generated one, ``llm_score`` the single binary
judge verdict. Items of a conversation follow locomo10.json's ``qa`` order without category 5
(verified for memobase and mflow), so an item's position gives a provisional ``conv-N-fP`` id;
when a conversation contains category-5 items the position is the raw ``qa`` index.
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
    system_from_path,
    text,
)

FORMAT = "mem0-eval"
JUDGE = "llm_score"
"""Judge name of the single verdict."""


def _is_item(x: Any) -> bool:
    return isinstance(x, dict) and "question" in x and "response" in x and "llm_score" in x


def _items_ok(items: Any) -> bool:
    return isinstance(items, list) and bool(items) and all(isinstance(i, dict) for i in items) and _is_item(items[0])


def sniff(data: Any, path: str) -> bool:
    """True for any of the three mem0-eval layouts (judged by content; ``path`` is unused)."""
    if _items_ok(data):
        return True
    if not isinstance(data, dict) or not data:
        return False
    if isinstance(data.get("summary"), dict) and _items_ok(data.get("results")):
        return True
    return all(_items_ok(v) for v in data.values())


def _conversations(src: Source) -> tuple[list[tuple[str | None, list[Any], list[int | str]]], dict[str, Any]]:
    """(conversation key or None, items, JSON location) per conversation, and the summary (or {})."""
    data = src.data
    if isinstance(data, list):
        return [(None, data, [])], {}
    if "summary" in data and "results" in data:
        summary = data["summary"]
        conv = summary.get("conv_idx")
        key = str(conv) if isinstance(conv, int) and not isinstance(conv, bool) else None
        return [(key, data["results"], ["results"])], summary
    convs = []
    for key, items in sorted(data.items(), key=lambda kv: (not kv[0].isdigit(), int(kv[0]) if kv[0].isdigit() else 0)):
        if not isinstance(items, list):
            fail(src, [key], "expected a list of per-question items")
        convs.append((key, items, [key]))
    return convs, {}


def load(src: Source) -> list[ColumnRun]:
    """One run per file (per-conversation files become one run after :func:`ingest.merge_shards`)."""
    convs, summary = _conversations(src)
    judge_model = summary.get("judge_model") if isinstance(summary.get("judge_model"), str) else None
    questions: list[dict[str, Any]] = []
    any_adversarial_scored = False
    sample_ids, names = locomo.SAMPLE_IDS, locomo.CATEGORY_NAMES
    for key, items, loc in convs:
        conv_index = int(key) if key is not None and key.isdigit() and int(key) < len(sample_ids) else None
        raw_order = any(isinstance(i, dict) and str(i.get("category")) == locomo.ADVERSARIAL for i in items)
        for pos, where, item in objects(src, items, loc):
            question = need(src, item, "question", where, str)
            cat = opt(src, item, "category", where, (int, str))
            code = None if cat is None else str(cat)
            raw_label = item.get("llm_judge_raw")
            label = raw_label if isinstance(raw_label, str) else None
            verdict = binary_verdict(src, item.get("llm_score"), [*where, "llm_score"], JUDGE, judge_model, label)
            unjudged_adversarial = verdict is None and code == locomo.ADVERSARIAL
            any_adversarial_scored |= code == locomo.ADVERSARIAL and verdict is not None
            if conv_index is not None:
                qid = f"{sample_ids[conv_index]}-{'q' if raw_order else 'f'}{pos}"  # question_id / position_id
                conversation: str | None = sample_ids[conv_index]
            else:
                qid = f"{key}-{pos}" if key is not None else f"item-{pos}"
                conversation = key
            s1 = number(src, item, "speaker_1_memory_time", where)
            s2 = number(src, item, "speaker_2_memory_time", where)
            answer_s = number(src, item, "response_time", where)
            retrieval_ms = None if s1 is None and s2 is None else ((s1 or 0.0) + (s2 or 0.0)) * 1000
            latency_ms = None if answer_s is None else answer_s * 1000 + (retrieval_ms or 0.0)
            tokens = opt(src, item, "answer_tokens", where, int)
            evidence = opt(src, item, "evidence", where, list)
            gold, answer = item.get("answer"), item.get("response")
            questions.append(
                {
                    "benchmark": locomo.BENCHMARK,
                    "question_id": qid,
                    "question": question,
                    "conversation": conversation,
                    "question_index": pos if raw_order and conv_index is not None else None,
                    "category": code,
                    "category_name": names.get(code) if code is not None else None,
                    "gold_answer": gold if gold is None or gold.__class__ is str else text(gold),
                    "answer": answer if answer is None or answer.__class__ is str else text(answer),
                    "gold_evidence_ids": list(map(str, evidence)) if evidence is not None else None,
                    "verdicts": [verdict] if verdict is not None else [],
                    "latency_ms": latency_ms,
                    "retrieval_latency_ms": retrieval_ms,
                    "tokens": tokens,
                    "scored": not unjudged_adversarial,
                }
            )
    if not questions:
        fail(src, [], "no questions in the file")
    top_k = summary.get("top_k")
    stated = {
        k: summary[k]
        for k in ("total_questions", "llm_judge_correct", "llm_judge_accuracy")
        if isinstance(summary.get(k), int | float)
    }
    meta: dict[str, Any] = {
        "benchmark": locomo.BENCHMARK,
        "system": system_from_path(src),
        "format": FORMAT,
        "variant": src.stem,
        "answer_model": summary.get("answer_model") if isinstance(summary.get("answer_model"), str) else None,
        "judge_models": [judge_model] if judge_model else [],
        "top_k": top_k if isinstance(top_k, int) and not isinstance(top_k, bool) else None,
        "includes_adversarial": any_adversarial_scored,
        "dataset_questions": locomo.TOTAL_QUESTIONS,
        "stated": stated,
    }
    return [build_run(src, meta, questions)]
