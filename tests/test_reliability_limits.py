"""Property-based: the limits hold for any nesting depth, any CSV field size and any mix of special files.

Each example builds a results folder, loads it with both loaders, and checks that the outcome follows the
limit exactly: accepted below it, one error naming the file above it, and the good run beside it unchanged.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memeval_core import settings as memeval_settings
from memeval_core import tree
from memeval_core.qa.ingest import load_qa
from memeval_core.results import load_all_results

EXAMPLES = settings(
    max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
MAPPING = {
    "memeval_mapping": 1,
    "file": "rows.csv",
    "benchmark": "toy",
    "system": "mapped",
    "fields": {"question_id": "id", "answer": "answer"},
    "judges": [{"name": "j", "field": "ok"}],
}


def good_run() -> dict[str, Any]:
    q = {"benchmark": "toy", "question_id": "q", "answer": "a", "verdicts": [{"judge": "j", "score": 1}]}
    return {"schema_version": 1, "run": {"benchmark": "toy", "system": "good"}, "questions": [q]}


def nested_run(depth: int) -> dict[str, Any]:
    run = good_run()
    run["run"]["system"] = "deep"
    value: Any = 1
    for i in range(depth):
        value = {"x": value} if i % 2 else [value]
    run["questions"][0]["extra"] = value
    return run


@EXAMPLES
@given(depth=st.integers(min_value=0, max_value=400))
def test_nesting_depth_is_accepted_exactly_up_to_the_limit(
    tmp_path_factory: pytest.TempPathFactory, depth: int
) -> None:
    root = tmp_path_factory.mktemp("depth")
    (root / "good.json").write_text(json.dumps(good_run()))
    (root / "deep.json").write_text(json.dumps(nested_run(depth)))
    total = depth + 3  # the document, the question list and the question object
    load = load_qa(root)
    systems = sorted(r.meta.system for r in load.runs)
    limit = memeval_settings.Limits().max_json_depth
    if total <= limit:
        assert systems == ["deep", "good"] and load.errors == ()
    else:
        assert systems == ["good"]
        (err,) = load.errors
        assert err.file == "deep.json" and err.message.startswith(f"JSON nested {total} levels deep")


@EXAMPLES
@given(size=st.integers(min_value=0, max_value=3 * 1024), limit_kb=st.integers(min_value=1, max_value=2))
def test_csv_field_size_follows_the_limit(
    tmp_path_factory: pytest.TempPathFactory, size: int, limit_kb: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMEVAL_MAX_CSV_FIELD_KB", str(limit_kb))
    root = tmp_path_factory.mktemp("csv")
    (root / "good.json").write_text(json.dumps(good_run()))
    (root / "map.json").write_text(json.dumps(MAPPING))
    (root / "rows.csv").write_text(f"id,answer,ok\nq1,{'x' * size},1\n")
    load = load_qa(root)
    systems = sorted(r.meta.system for r in load.runs)
    if size <= limit_kb * 1024:
        assert systems == ["good", "mapped"]
    else:
        assert systems == ["good"]
        (err,) = load.errors
        assert err.file == "rows.csv" and "field larger than field limit" in err.message


KINDS = ("file", "link-in", "link-out", "dangling", "fifo", "dir-link")


@EXAMPLES
@given(kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=8))
def test_special_files_are_never_read(tmp_path_factory: pytest.TempPathFactory, kinds: list[str]) -> None:
    base = tmp_path_factory.mktemp("special")
    outside = base / "outside.json"
    outside.write_text(json.dumps(good_run()))
    root = base / "root"
    root.mkdir()
    (root / "good.json").write_text(json.dumps(good_run()))
    for i, kind in enumerate(kinds):
        path = root / f"s{i}.json"
        if kind == "file":
            path.write_text(json.dumps(good_run()))
        elif kind == "link-in":
            path.symlink_to(root / "good.json")
        elif kind == "link-out":
            path.symlink_to(outside)
        elif kind == "dangling":
            path.symlink_to(base / "missing.json")
        elif kind == "fifo":
            os.mkfifo(path)
        else:
            path.symlink_to(base, target_is_directory=True)
    listing = tree.walk(root, (".json",))
    readable = {"good.json"} | {f"s{i}.json" for i, k in enumerate(kinds) if k in ("file", "link-in")}
    assert {e.rel for e in listing.files} == readable
    refused = {r.rel for r in listing.refused}
    assert refused == {f"s{i}.json" for i, k in enumerate(kinds) if k in ("link-out", "dangling", "fifo", "dir-link")}
    _, qa = load_all_results(root, root, cache_dir=None)  # a FIFO would hang here if it were opened
    assert {e.file for e in qa.errors} == refused
    assert all(r.meta.system == "good" for r in qa.runs)
