"""Property-based: any bytes offered as a PMB report end in a scored run or one typed error.

Starts from real reports and breaks them the ways files break in practice: truncation, wrong
types, missing and extra fields, NaN/inf, huge and negative numbers, half surrogate pairs, deep nesting,
non-UTF-8 bytes, empty files. Never an unhandled exception; runs already loaded are unaffected.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memeval_core.errors import IngestError
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.ingest import load_fixture, load_pmb, run_from_bytes
from memeval_core.pmb.runs_table import runs_table
from tests._data import PMB_DIR, require
from tests.fuzzing import broken_bytes

COUNTER = {"cases": 0, "loaded": 0, "rejected": 0}


@cache
def fixture() -> PmbFixture:
    return load_fixture(require(PMB_DIR) / "fixtures")


@cache
def seeds() -> tuple[dict[str, Any], ...]:
    base = require(PMB_DIR) / "test-results" / "baseline"
    return tuple(
        json.loads((base / n).read_text()) for n in ("retrieval-report-mem0.json", "session-retrieval-report-zep.json")
    )


@st.composite
def broken_report(draw: st.DrawFn) -> bytes:
    return broken_bytes(draw, draw(st.sampled_from(seeds())))


@settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(broken_report())
def test_broken_reports_end_in_a_run_or_a_typed_error(data: bytes) -> None:
    COUNTER["cases"] += 1
    try:
        run = run_from_bytes("retrieval-report-fuzz.json", data, fixture())
    except IngestError as err:
        COUNTER["rejected"] += 1
        assert err.file == "retrieval-report-fuzz.json"
        assert err.path.startswith("$")
        assert err.message
    else:
        COUNTER["loaded"] += 1
        assert run.aggregate.cases == len(run.cases)
        runs_table([run])  # what the cache and an export write: every loaded run can be written


def test_a_bad_file_does_not_affect_loaded_runs(tmp_path: Path) -> None:
    pmb = require(PMB_DIR)
    (tmp_path / "fixtures").mkdir()
    for f in (pmb / "fixtures").iterdir():
        (tmp_path / "fixtures" / f.name).write_bytes(f.read_bytes())
    good = (pmb / "test-results/baseline/retrieval-report-tenure.json").read_bytes()
    (tmp_path / "a.json").write_bytes(good)
    before = load_pmb(tmp_path).runs
    for i, bad in enumerate([b"", b"{", b"\xff\xfe", b"[" * 100_000, b'{"provider": 1, "cases": [{}]}']):
        (tmp_path / f"retrieval-report-bad{i}.json").write_bytes(bad)
    after = load_pmb(tmp_path)
    assert [r.cases for r in after.runs] == [r.cases for r in before]
    assert len(after.errors) == 5


def test_a_200_mb_file_is_rejected_by_size_before_parsing(tmp_path: Path) -> None:
    from memeval_core.store import DEFAULT_MAX_BYTES, add_files

    calls: list[str] = []
    big = b"[" + b"0," * (DEFAULT_MAX_BYTES // 2) + b"0]"
    result = add_files(tmp_path, [("huge.json", big)], lambda n, d: calls.append(n))
    assert result[0].status == "rejected" and calls == []
    assert "200 MB" in result[0].error.message  # type: ignore[union-attr]


@pytest.fixture(scope="session", autouse=True)
def _report_counts() -> Any:
    yield
    out = Path(__file__).parent / "artifacts"
    out.mkdir(exist_ok=True)
    if COUNTER["cases"]:
        (out / "fuzz-pmb.json").write_text(json.dumps(COUNTER) + "\n")
