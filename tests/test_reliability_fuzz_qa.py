"""Property-based: every QA importer and the generic mapping, fed broken versions of real files.

For each format a real sample from ../shared/data (shrunk to a few items so examples stay fast) is
mutated — truncated, retyped, fields dropped or added, NaN/inf, huge and negative numbers, deep
nesting, non-UTF-8 bytes, emptied — written into a results folder next to an untouched run, and
loaded. Every example must end in runs or typed errors; the untouched run must load unchanged.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memeval_core.qa.importers import zep
from memeval_core.qa.ingest import SNIFFERS, load_qa, read_source
from tests._data import SHARED_DATA, require
from tests.fuzzing import broken_bytes

COUNTER: dict[str, int] = {}


def _shrink(doc: Any, keep: int = 4) -> Any:
    if isinstance(doc, list):
        return [_shrink(x, keep) for x in doc[:keep]]
    if isinstance(doc, dict):
        return {k: _shrink(v, keep) for k, v in doc.items()}
    return doc


@cache
def samples() -> dict[str, tuple[str, Any]]:
    """One real file per format (relative name, shrunk JSON), found by the importers' own sniffers."""
    root = require(SHARED_DATA)
    found: dict[str, tuple[str, Any]] = {}
    for path in sorted(root.rglob("*.json")):
        if path.stat().st_size > 3_000_000 or "precisionmembench" in path.parts:
            continue
        rel = path.relative_to(root).as_posix()
        try:
            data = read_source(path, rel).data
        except Exception:
            continue
        for name, sniff, _ in SNIFFERS:
            if name not in found and sniff(data, rel):
                found[name] = (rel, _shrink(data))
        if "zep-grades" not in found and zep.sniff(data, rel):
            found["zep-grades"] = (rel, _shrink(data))
    # Formats with no public sample: memeval's own run format and the generic mapping (both sides).
    found["memeval"] = ("run.json", NATIVE)
    found["generic-mapping"] = ("mapping.json", MAPPING)
    found["generic-rows"] = ("rows.json", ROWS)
    return found


NATIVE = {
    "schema_version": 1,
    "run": {"benchmark": "locomo", "system": "s", "answer_model": "m", "judge_models": ["j"], "top_k": 10},
    "questions": [
        {"question_id": "conv-26-q0", "question": "q?", "category": "2", "gold_answer": "a", "answer": "a",
         "verdicts": [{"judge": "j", "score": 1, "scale": "binary"}], "retrieved_ids": ["D1:3"], "latency_ms": 8.5},
        {"question_id": "conv-26-q1", "question": "r?", "category": "2", "answer": None, "error": True},
    ],
}  # fmt: skip
ROWS = [
    {"id": "1", "q": "q?", "pred": "a", "gold": "a", "j1": 1},
    {"id": "2", "q": "r?", "pred": "b", "gold": "c", "j1": 0},
]
MAPPING = {
    "memeval_mapping": 1, "file": "rows.json", "benchmark": "custom", "system": "s",
    "fields": {"question_id": "id", "question": "q", "answer": "pred", "gold_answer": "gold"},
    "judges": [{"name": "j", "field": "j1", "scale": "binary"}],
}  # fmt: skip
COMPANIONS = {"generic-mapping": ("rows.json", ROWS), "generic-rows": ("mapping.json", MAPPING)}


@st.composite
def broken(draw: st.DrawFn) -> tuple[str, str, bytes]:
    fmt = draw(st.sampled_from(sorted(samples())))
    rel, sample = samples()[fmt]
    return fmt, rel, broken_bytes(draw, sample)


@settings(max_examples=450, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(broken())
def test_broken_qa_files_end_in_runs_or_typed_errors(tmp_path_factory: pytest.TempPathFactory, case: Any) -> None:
    fmt, rel, data = case
    COUNTER[fmt] = COUNTER.get(fmt, 0) + 1
    root = tmp_path_factory.mktemp("qa")
    target = root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    if fmt in COMPANIONS:
        other, doc = COMPANIONS[fmt]
        (root / other).write_text(json.dumps(doc))
    load = load_qa(root)
    for err in load.errors:
        assert err.file and err.path and err.message
    assert all(r.meta.benchmark for r in load.runs)


def test_a_broken_file_does_not_affect_other_runs(tmp_path: Path) -> None:
    _rel, sample = samples()["mem0-eval"]
    good = tmp_path / "good" / "eval.json"
    good.parent.mkdir()
    good.write_text(json.dumps(sample))
    before = load_qa(tmp_path)
    for i, bad in enumerate([b"", b"{", b"\xff\xfe", b"[" * 100_000, b'{"a": NaN}']):
        (tmp_path / f"bad{i}.json").write_bytes(bad)
    after = load_qa(tmp_path)
    assert [r.run for r in after.runs] == [r.run for r in before.runs]
    assert len(after.errors) == 5


@pytest.fixture(scope="module", autouse=True)
def _report_counts() -> Any:
    yield
    if COUNTER:
        out = Path(__file__).parent / "artifacts"
        out.mkdir(exist_ok=True)
        (out / "fuzz-qa.json").write_text(json.dumps(dict(sorted(COUNTER.items()))) + "\n")
