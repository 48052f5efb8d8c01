"""One run's view: found by id or name, ranked among its peers, categories, failures, verification."""

from __future__ import annotations

from pathlib import Path

import pytest

from memeval_core.explore import run_view
from memeval_core.pmb.runs_table import runs_table
from memeval_core.results import load_all_results


@pytest.fixture(scope="module")
def loads(shared_data: Path) -> tuple:  # type: ignore[type-arg]
    if not (shared_data / "precisionmembench").is_dir():
        pytest.skip(f"{shared_data} lacks the public PMB data")
    return load_all_results(shared_data, shared_data, cache_dir=None)


def test_find_by_id_then_by_name(loads: tuple) -> None:  # type: ignore[type-arg]
    pmb, qa = loads
    mem0 = next(r for r in pmb.runs if r.identity.display_name == "mem0" and r.identity.benchmark == "pmb-single-turn")
    identities = [r.identity for r in pmb.runs]
    assert run_view.find(identities, qa.runs, mem0.identity.run_id) is mem0.identity
    assert run_view.find(identities, qa.runs, "mem0") is mem0.identity, "a shared name: PMB single-turn first"
    assert run_view.find(identities, qa.runs, "no such run") is None
    ordered = run_view.ranked(runs_table(pmb.runs), qa.runs)
    by_id = {r.identity.run_id: r for r in pmb.runs}
    assert by_id[ordered[0]].identity.display_name == "tenure"
    assert sorted(ordered) == sorted([*by_id, *(q.run_id for q in qa.runs)])


def test_pmb_view(loads: tuple) -> None:  # type: ignore[type-arg]
    pmb, _ = loads
    single = [r for r in pmb.runs if r.identity.benchmark == "pmb-single-turn"]
    mem0 = next(r for r in single if r.identity.display_name == "mem0")
    view = run_view.pmb_view(mem0, runs_table(single), pmb.fixture)
    assert (view.score, view.items, view.rank, view.of) == (9 / 77, 77, 11, 13)
    assert view.status == "✗ 7 mismatches" and len(view.problems) == 7
    assert len(view.failures) == 77 - 9 and {"case_id", "category", "failure"} <= set(view.failures.columns)
    assert "mean_drift" not in view.summary.columns and "benchmark" not in view.summary.columns
    assert view.categories["cases"].sum() == 77


def test_qa_view(loads: tuple) -> None:  # type: ignore[type-arg]
    _, qa = loads
    zep = next(q for q in qa.runs if q.display_name == "zep")
    view = run_view.qa_view(zep, qa.runs)
    assert (view.score_name, view.score, view.items, view.rank) == ("Accuracy", 0.7844, 1540, 1)
    assert view.status == "diagnostic" and view.problems == ("top-k not stated",)
    assert view.interval is not None and view.interval[0] < 0.7844 < view.interval[1]
    assert set(view.categories["code"]) == {"1", "2", "3", "4"}
