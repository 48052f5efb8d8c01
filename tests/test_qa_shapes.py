"""An unrecognised file: the closest known format and a mapping skeleton from its own columns."""

from __future__ import annotations

from memeval_core.qa import shapes


def test_closest_format_names_the_differing_keys() -> None:
    rows = [{"question": "q", "answer": "g", "response": "r", "category": 1, "llm_verdict": 1}]
    found = shapes.closest_format({"0": rows})
    assert found is not None and found.name == "mem0 evaluation"
    assert found.missing == ("llm_score",) and found.extra == ("llm_verdict",)
    assert "closest known format: mem0 evaluation; it lacks llm_score" in shapes.describe({"0": rows})


def test_files_without_records() -> None:
    assert shapes.closest_format({"accuracy": 0.5, "n": 3}) is None
    assert shapes.describe([1, 2, 3]) == "no list of per-question records found"


def test_records_are_found_under_a_key() -> None:
    path, rows = shapes.records({"summary": {}, "results": [{"a": 1}]})
    assert path == ["results"] and rows == [{"a": 1}]
    path, rows = shapes.records({"meta": {"items": [{"a": 1}]}})
    assert path == ["meta", "items"]


def test_mapping_skeleton_guesses_columns_and_judges() -> None:
    rows = [{"Question ID": f"q{i}", "query": "?", "pred": "a", "ground_truth": "a", "is_correct": "true"}
            for i in range(3)]  # fmt: skip
    skeleton = shapes.mapping_skeleton({"results": rows}, "data/rows.json")
    assert skeleton["memeval_mapping"] == 1 and skeleton["file"] == "data/rows.json" and skeleton["rows"] == "results"
    assert skeleton["fields"] == {
        "question_id": "Question ID", "question": "query", "answer": "pred", "gold_answer": "ground_truth"
    }  # fmt: skip
    assert skeleton["judges"] == [{"name": "is_correct", "field": "is_correct", "scale": "binary"}]
    assert skeleton["benchmark"].startswith("TODO")


def test_mapping_skeleton_marks_what_it_cannot_guess() -> None:
    skeleton = shapes.mapping_skeleton([{"foo": "x", "bar": "y"}], "rows.json")
    assert skeleton["fields"]["question_id"].startswith("TODO")
    assert skeleton["judges"][0]["field"].startswith("TODO")
