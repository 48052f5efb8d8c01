"""Category heatmap data and pass-quality bars on the real PMB runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from memeval_core.explore.categories import category_heatmap, category_table, ordered_categories, pass_quality
from memeval_core.pmb.ingest import PmbLoad, load_pmb
from memeval_core.pmb.runs_table import runs_table

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "precisionmembench"


@pytest.fixture(scope="module")
def pmb() -> PmbLoad:
    if not DATA.is_dir():
        pytest.skip(f"shared PMB data not found at {DATA}")
    return load_pmb(DATA / "test-results", DATA / "fixtures")


def test_ordered_categories() -> None:
    assert ordered_categories(["b", "x", "a", "b"], ["a", "b", "c"]) == ("a", "b", "x")


def test_table_follows_benchmark_order(pmb: PmbLoad) -> None:
    assert pmb.fixture is not None
    single = runs_table([r for r in pmb.runs if r.identity.benchmark == "pmb-single-turn"])
    t = category_table(single, pmb.fixture)
    assert len(t) == 13 * 13
    assert list(t["category"].cat.categories) == list(pmb.fixture.category_order)
    assert pmb.fixture.category_order[:2] == ("Alias resolution", "Scope disambiguation")
    row = t[(t["display_name"] == "gbrain") & (t["category"] == "Scope disambiguation")].iloc[0]
    # gbrain passes 9 of the 12 scope cases.
    assert (row["cases"], row["passed"]) == (12, 9)
    assert row["pass_rate"] == pytest.approx(0.75)
    assert t.groupby("display_name")["cases"].sum().eq(77).all()


def test_heatmap_pivot(pmb: PmbLoad) -> None:
    assert pmb.fixture is not None
    single = runs_table([r for r in pmb.runs if r.identity.benchmark == "pmb-single-turn"])
    h = category_heatmap(single, pmb.fixture, "pass_rate")
    assert h.shape == (13, 13)
    assert list(h.index) == single.column("display_name").to_pylist()
    assert (h.loc["tenure"] == 1.0).all()
    assert h.loc["agentmemory", "Cross-user isolation"] == 0.0
    p = category_heatmap(single, pmb.fixture, "mean_precision")
    # Persona prelude cases have empty gold sets: tenure returns nothing there, so no precision at all.
    assert p.loc["tenure", "Alias resolution"] == 1.0
    assert p["Persona prelude content"].isna().sum() >= 1
    with pytest.raises(ValueError, match="one suite"):
        category_heatmap(runs_table(pmb.runs), pmb.fixture, "pass_rate")
    with pytest.raises(ValueError, match="metric"):
        category_heatmap(single, pmb.fixture, "ndcg")  # type: ignore[arg-type]


def test_session_category_comes_last(pmb: PmbLoad) -> None:
    assert pmb.fixture is not None
    t = category_table(runs_table(pmb.runs), pmb.fixture)
    assert list(t["category"].cat.categories)[-1] == "Session-level noise isolation"


def test_pass_quality(pmb: PmbLoad) -> None:
    q = pass_quality(runs_table(pmb.runs)).set_index(["benchmark", "display_name"])
    ten = q.loc[("pmb-single-turn", "tenure")]
    assert (ten["passed"], ten["active_retrieval"], ten["structural"], ten["trivially_empty"]) == (77, 43, 25, 9)
    mem0 = q.loc[("pmb-single-turn", "mem0")]
    assert (mem0["passed"], mem0["active_retrieval"], mem0["failed"]) == (9, 0, 68)
    assert (q["active_retrieval"] + q["structural"] + q["trivially_empty"] == q["passed"]).all()
    assert q.loc[("pmb-session", "tenure"), "active_retrieval"] == 11


def test_table_equals_a_count_over_the_cases(pmb: PmbLoad) -> None:
    # Oracle: count each run's cases per category directly.
    assert pmb.fixture is not None
    t = category_table(runs_table(pmb.runs), pmb.fixture)
    for run in pmb.runs:
        want: dict[str, list[int]] = {}
        for case in run.cases:
            want.setdefault(case.category, [0, 0])
            want[case.category][0] += 1
            want[case.category][1] += int(case.passed)
        got = t[t["run_id"] == run.identity.run_id]
        assert {str(c): [n, p] for c, n, p in zip(got["category"], got["cases"], got["passed"], strict=True)} == want
