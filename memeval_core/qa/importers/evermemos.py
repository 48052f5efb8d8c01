"""EverMemOS evaluation format (``eval_results.json``; EverMind-AI's published results, locomo-audit).

``{"total_questions", "correct", "accuracy", "metadata"?: {answer_model, judge_model, num_runs,
answer_prompt, ...}, "detailed_results": {"locomo_exp_user_<conv>": [item, ...]}}`` with items
``{question_id: "locomo_<conv>_qa<i>", question, golden_answer, generated_answer, category,
llm_judgments: {"judgment_1": bool, "judgment_2": bool, "judgment_3": bool}}``. The three judgments
are independent runs of the same judge; each becomes one verdict (judge ``judgment_<n>``). ``<i>`` is
the raw ``qa`` index into locomo10.json, so ids are canonical.

A file whose items all have empty ``llm_judgments`` holds answers that were never graded; it
yields no run (:class:`UnjudgedError`) rather than a run scoring zero everywhere.
"""

from __future__ import annotations

import re
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
    objects,
    opt,
    system_from_path,
    text,
)
from memeval_core.qa.models import Verdict

FORMAT = "evermemos"
_QID = re.compile(r"^locomo_(\d+)_qa(\d+)$")
_CONV = re.compile(r"_(\d+)$")


def sniff(data: Any, path: str) -> bool:
    """True for an object with ``detailed_results`` mapping to lists of items with ``llm_judgments``."""
    if not isinstance(data, dict) or not isinstance(data.get("detailed_results"), dict):
        return False
    for items in data["detailed_results"].values():
        if isinstance(items, list) and items and isinstance(items[0], dict) and "llm_judgments" in items[0]:
            return True
    return False


def load(src: Source) -> list[ColumnRun]:
    """One run; raise :class:`UnjudgedError` when no item carries a judgment."""
    data = src.data
    meta_in = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    judge_model = meta_in.get("judge_model") if isinstance(meta_in.get("judge_model"), str) else None
    questions: list[dict[str, Any]] = []
    n_judged = 0
    adversarial_scored = False
    sample_ids, names = locomo.SAMPLE_IDS, locomo.CATEGORY_NAMES
    # Most items repeat one of a few judgment patterns: their verdicts are worked out once per file.
    seen: dict[tuple[tuple[str, Any], ...], list[Verdict]] = {}
    # A file of answers not graded yet (every llm_judgments empty) yields no run: its items are only checked,
    # as the full loop checks them, and counted.
    graded = any(
        item.__class__ is dict and item.get("llm_judgments")
        for items in data["detailed_results"].values()
        if items.__class__ is list
        for item in items
    )
    n_items = 0
    for key, items in data["detailed_results"].items():
        if not isinstance(items, list):
            fail(src, ["detailed_results", key], "expected a list of per-question items")
        m_conv = _CONV.search(key)
        for _, where, item in objects(src, items, ["detailed_results", key]):
            qid_raw = need(src, item, "question_id", where, str)
            if not graded:
                need(src, item, "llm_judgments", where, dict)
                opt(src, item, "category", where, (int, str))
                need(src, item, "question", where, str)
                n_items += 1
                continue
            m = _QID.match(qid_raw)
            conv_index: int | None = None
            qa_index: int | None = None
            if m and int(m[1]) < len(sample_ids):
                conv_index, qa_index = int(m[1]), int(m[2])
            elif m_conv and int(m_conv[1]) < len(sample_ids):
                conv_index = int(m_conv[1])
            judgments = need(src, item, "llm_judgments", where, dict)
            pattern = tuple(judgments.items())
            # Not for floats: -0.0 equals 0 but is a verdict of its own.
            remembered = float not in map(type, judgments.values())
            try:
                verdicts = seen.get(pattern) if remembered else None
            except TypeError:  # an unhashable judgment, which the full check below rejects
                verdicts = None
            if verdicts is None:
                verdicts = [
                    v
                    for name, value in sorted(judgments.items())
                    if (v := binary_verdict(src, value, [*where, "llm_judgments", name], name, judge_model)) is not None
                ]
                if remembered:
                    seen[pattern] = verdicts
            n_judged += bool(verdicts)
            cat = opt(src, item, "category", where, (int, str))
            code = None if cat is None else str(cat)
            adversarial_scored |= code == locomo.ADVERSARIAL and bool(verdicts)
            question = need(src, item, "question", where, str)
            gold, answer = item.get("golden_answer"), item.get("generated_answer")
            questions.append(
                {
                    "benchmark": locomo.BENCHMARK,
                    "question_id": f"{sample_ids[conv_index]}-q{qa_index}"  # locomo.question_id
                    if conv_index is not None and qa_index is not None
                    else qid_raw,
                    "question": question,
                    "conversation": sample_ids[conv_index] if conv_index is not None else None,
                    "question_index": qa_index,
                    "category": code,
                    "category_name": names.get(code) if code is not None else None,
                    "gold_answer": gold if gold is None or gold.__class__ is str else text(gold),
                    "answer": answer if answer is None or answer.__class__ is str else text(answer),
                    "verdicts": list(verdicts),
                }
            )
    if not questions and not n_items:
        fail(src, ["detailed_results"], "no questions in the file")
    if n_judged == 0:
        n_items += len(questions)
        raise UnjudgedError(f"{src.rel}: {n_items} answers, but every llm_judgments is empty (not graded yet)")
    stated = {k: data[k] for k in ("total_questions", "correct", "accuracy") if isinstance(data.get(k), int | float)}
    for k in ("mean_accuracy", "majority_vote_accuracy", "std_accuracy"):
        if isinstance(meta_in.get(k), int | float):
            stated[k] = meta_in[k]
    meta: dict[str, Any] = {
        "benchmark": locomo.BENCHMARK,
        "system": system_from_path(src),
        "format": FORMAT,
        "variant": "/".join(src.dirs[-2:]) if src.dirs else src.stem,
        "answer_model": meta_in.get("answer_model") if isinstance(meta_in.get("answer_model"), str) else None,
        "judge_models": [judge_model] if judge_model else [],
        "prompt_mode": meta_in.get("answer_prompt") if isinstance(meta_in.get("answer_prompt"), str) else None,
        "includes_adversarial": adversarial_scored,
        "dataset_questions": locomo.TOTAL_QUESTIONS,
        "stated": stated,
    }
    return [build_run(src, meta, questions)]
