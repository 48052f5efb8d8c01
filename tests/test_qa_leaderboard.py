from __future__ import annotations

import json
from pathlib import Path

import pytest
from _data import SHARED_DATA, require

from memeval_core.qa import leaderboard
from memeval_core.qa.ingest import load_qa

REQUIRED = {
    "run_id", "display_name", "system", "benchmark", "n_questions", "accuracy", "majority_accuracy", "n_judges",
    "failures", "categories", "includes_adversarial", "publishable", "not_publishable_because",
}  # fmt: skip

COLUMNS: tuple[str, ...] = (
    "run_id",
    "display_name",
    "system",
    "benchmark",
    "rank_group",
    "rank",
    "n_questions",
    "accuracy",
    "majority_accuracy",
    "n_judges",
    "judges",
    "failures",
    "categories",
    "includes_adversarial",
    "publishable",
    "not_publishable_because",
    "accuracy_without_disputed",
    "n_disputed",
    "n_repeats",
    "accuracy_std",
    "accuracy_min",
    "accuracy_max",
    "latency_p50_ms",
    "latency_p95_ms",
    "top_k",
    "answer_model",
    "judge_models",
    "format",
    "source",
    "joined",
)
"""Every key of a row, in order."""


def test_rows_from_real_locomo_runs() -> None:
    load = load_qa(require(SHARED_DATA), datasets=SHARED_DATA / "locomo")
    rows = leaderboard.rows(load.runs, benchmark="locomo")
    assert all(set(r) >= REQUIRED for r in rows) and set(rows[0]) == set(COLUMNS)
    by_name = {r["display_name"]: r for r in rows}
    sm = by_name["supermemory"]
    assert sm["rank_group"] == "locomo (with category 5)" and sm["rank"] == 1
    zep = by_name["zep"]
    assert zep["rank_group"] == "locomo (without category 5)" and zep["rank"] == 1 and zep["accuracy"] == 0.7844
    assert by_name["mem0"]["accuracy"] == 0.5039 and by_name["mem0"]["publishable"] is True
    assert by_name["memobase (memobase_eval_0503_3000)"]["categories"]["1"] == {
        "name": "multi_hop",
        "n": 282,
        "accuracy": 0.6383,
    }
    ap = by_name["ap-baseline (ap-baseline/v1)"]
    assert (ap["n_judges"], ap["majority_accuracy"], ap["accuracy"]) == (3, 0.1065, 0.1061)
    assert by_name["memobase (memobase_eval_0503_3000)"]["majority_accuracy"] is None
    json.loads(json.dumps(rows, allow_nan=False))
    assert leaderboard.to_csv(rows).count("\n") == len(rows) + 1
    assert all(list(r) == list(COLUMNS) for r in rows)


def test_repeats_combine_into_one_row(tmp_path: Path) -> None:
    for rep, scores in ((1, (1, 1)), (2, (1, 0)), (3, (0, 0))):
        lines = [{"schema_version": 1, "run": {"benchmark": "custom", "system": "s", "repeat": rep}}]
        lines += [
            {"benchmark": "custom", "question_id": f"q{i}", "answer": "a", "verdicts": [{"judge": "j", "score": x}]}
            for i, x in enumerate(scores)
        ]
        (tmp_path / f"r{rep}.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    (row,) = leaderboard.rows(load_qa(tmp_path).runs)
    assert row["n_repeats"] == 3 and row["accuracy"] == 0.5
    assert (row["accuracy_min"], row["accuracy_max"], row["accuracy_std"]) == (0.0, 1.0, 0.5)


def test_adversarial_groups_rank_separately(tmp_path: Path) -> None:
    for name, adv, score in (("a", True, 1), ("b", False, 0), ("c", False, 1)):
        doc = {
            "run": {"benchmark": "locomo", "system": name, "includes_adversarial": adv},
            "questions": [{"benchmark": "locomo", "question_id": "x", "answer": "a",
                           "verdicts": [{"judge": "j", "score": score}]}],
        }  # fmt: skip
        (tmp_path / f"{name}.json").write_text(json.dumps(doc))
    rows = leaderboard.rows(load_qa(tmp_path).runs)
    ranks = {r["display_name"]: (r["rank_group"], r["rank"]) for r in rows}
    assert ranks == {
        "a": ("locomo (with category 5)", 1),
        "c": ("locomo (without category 5)", 1),
        "b": ("locomo (without category 5)", 2),
    }
    assert rows[0]["accuracy"] == pytest.approx(1.0)
