"""Zep's LoCoMo evaluation files (getzep/zep-papers ``locomo_eval``; mflow-benchmarks ``locomo-zep``).

One run is split over two files with the same keys ``locomo_experiment_user_<conv>``:

- grades: ``[{question, answer (generated), golden_answer, grade (bool)}]``;
- responses: ``[{question, answer, golden_answer, duration_ms}]``.

(A third file, search results ``[{context, duration_ms}]``, holds retrieved context text only.)
:func:`load` merges grades with the responses of the same run (same keys, same question at the
same position) to add latency. The files have no category: the LoCoMo join supplies it. Items
follow locomo10.json's non-category-5 ``qa`` order, so positions give ``conv-N-fP`` ids.
"""

from __future__ import annotations

import hashlib
import re
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
    system_from_path,
    text,
)

FORMAT = "zep"
JUDGE = "grade"
_KEY = re.compile(r"_(\d+)$")


def _first_item(data: Any) -> dict[str, Any] | None:
    if not isinstance(data, dict) or not data:
        return None
    first = next(iter(data.values()))
    if not all(isinstance(v, list) for v in data.values()) or not first or not isinstance(first[0], dict):
        return None
    return first[0]


def sniff(data: Any, path: str) -> bool:
    """True for a zep grades file: per-user lists of items with ``golden_answer`` and ``grade``."""
    item = _first_item(data)
    return item is not None and "golden_answer" in item and "grade" in item


def sniff_responses(data: Any) -> bool:
    """True for a zep responses file: per-user lists of items with ``golden_answer`` and ``duration_ms``."""
    item = _first_item(data)
    return item is not None and "golden_answer" in item and "duration_ms" in item and "grade" not in item


def sniff_search_results(data: Any) -> bool:
    """True for a zep search-results file: per-user lists of ``{context, duration_ms}``."""
    item = _first_item(data)
    return item is not None and "context" in item and "duration_ms" in item and "question" not in item


def matches(grades: Source, responses: Source) -> bool:
    """True when the responses file belongs to the same run: same users, questions and answers in order."""
    g, r = grades.data, responses.data
    if set(g) != set(r):
        return False
    for key, items in g.items():
        other = r[key]
        if not isinstance(other, list) or len(other) != len(items):
            return False
        for a, b in zip(items, other, strict=True):
            if not isinstance(a, dict) or not isinstance(b, dict):
                return False
            if a.get("question") != b.get("question") or a.get("answer") != b.get("answer"):
                return False
    return True


def load(grades: Source, responses: Source | None = None) -> list[ColumnRun]:
    """One run from a grades file, with latency from its responses file when given."""
    if responses is not None and not matches(grades, responses):
        fail(responses, [], f"does not match the grades file {grades.rel} (different users, questions or answers)")
    questions: list[dict[str, Any]] = []
    for key, items in grades.data.items():
        m = _KEY.search(key)
        conv_index = int(m[1]) if m and int(m[1]) < len(locomo.SAMPLE_IDS) else None
        for pos, where, item in objects(grades, items, [key]):
            verdict = binary_verdict(grades, item.get("grade"), [*where, "grade"], JUDGE)
            latency = None
            if responses is not None:
                latency = number(responses, responses.data[key][pos], "duration_ms", where)
            questions.append(
                {
                    "benchmark": locomo.BENCHMARK,
                    "question_id": locomo.position_id(conv_index, pos) if conv_index is not None else f"{key}-{pos}",
                    "question": need(grades, item, "question", where, str),
                    "conversation": locomo.SAMPLE_IDS[conv_index] if conv_index is not None else key,
                    "gold_answer": text(item.get("golden_answer")),
                    "answer": text(item.get("answer")),
                    "verdicts": [verdict] if verdict is not None else [],
                    "latency_ms": latency,
                }
            )
    if not questions:
        fail(grades, [], "no questions in the file")
    sources = [grades] if responses is None else sorted([grades, responses], key=lambda s: s.rel)
    meta: dict[str, Any] = {
        "benchmark": locomo.BENCHMARK,
        "system": system_from_path(grades),
        "format": FORMAT,
        "variant": "/".join(grades.dirs[-1:]) or grades.stem,
        "includes_adversarial": False,
        "dataset_questions": locomo.TOTAL_QUESTIONS,
        "source_file": " + ".join(s.rel for s in sources),
        "source_sha256": grades.sha256
        if responses is None
        else hashlib.sha256("".join(s.sha256 for s in sources).encode()).hexdigest(),
    }
    return [build_run(grades, meta, questions)]
