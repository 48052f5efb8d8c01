"""The compare page, driven through URL query parameters over the public PMB data (Streamlit AppTest)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
PAGE = "pages/compare.py"
MAIN = "session-drift-noise-10-turns-implicit-redis"


@pytest.fixture(autouse=True)
def pmb_env(pmb_results: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The app reads the public PMB data."""
    monkeypatch.setenv("MEMEVAL_RESULTS", str(pmb_results))
    monkeypatch.delenv("MEMEVAL_FIXTURES", raising=False)
    return pmb_results


@pytest.fixture
def downloads(monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    """Bytes handed to every download button, by file name."""
    seen: dict[str, bytes] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def record(
        self: MemoryMediaFileStorage, data: str | bytes, mimetype: str, kind: Any, filename: str | None = None
    ) -> str:
        if filename is not None and isinstance(data, bytes):
            seen[filename] = data
        return original(self, data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", record)
    return seen


def run_app(**query: str) -> AppTest:
    """The compare page after its first run with the given URL query parameters (as when a link is opened)."""
    at = AppTest.from_file(str(APP), default_timeout=120)
    for k, v in query.items():
        at.query_params[k] = v
    at.switch_page(PAGE).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


TABLE_COLUMNS = {
    "stats-table": "pass_rate_ci_low",
    "wtl-table": "ties_both_passed",
    "pairs-table": "outcome",
    "case-expectation": "assertion",
    "case-ids": "id",
}


def frame(at: AppTest, table: str) -> pd.DataFrame:
    """The one shown DataFrame that has the table's distinguishing column."""
    found = [d.value for d in at.dataframe if TABLE_COLUMNS[table] in d.value.columns]
    assert len(found) == 1, f"{table}: {len(found)} tables"
    value: pd.DataFrame = found[0]
    return value


def test_tenure_vs_mem0_is_not_tied() -> None:
    at = run_app(a="tenure", b="mem0")
    assert at.selectbox(key="run-a").value == "tenure"
    assert at.selectbox(key="run-b").value == "mem0"
    assert metrics(at) == {
        "A passed, B failed": "68",
        "B passed, A failed": "0",
        "both passed": "9",
        "both failed": "0",
        "McNemar p (exact)": "6.78e-21",
    }
    text = markdown(at)
    assert "p = 6.78e-21 on 68 + 0 discordant of 77 paired cases: significant at α = 0.05" in text
    assert "**Pass rate, A − B:** +0.8831, 95% CI [+0.8052, +0.9481]: **not tied**" in text
    assert (
        "**Mean precision, A − B** (43 cases where both have a precision): +0.9104, 95% CI [+0.8855, +0.9306]: "
        "**not tied**" in text
    )
    assert "statistically tied**" not in text
    methods = next(c.value for c in at.caption if c.value.startswith("Methods:"))
    for phrase in ("exact McNemar", "percentile interval", "seed 20260627", "10,000 resamples", "Holm step"):
        assert phrase in methods


def test_mem0_vs_a_mem_is_statistically_tied_on_pass_rate() -> None:
    at = run_app(a="mem0", b="a-mem")
    m = metrics(at)
    assert (m["A passed, B failed"], m["B passed, A failed"], m["both passed"], m["both failed"]) == (
        "0",
        "0",
        "9",
        "68",
    )
    assert m["McNemar p (exact)"] == "1"
    text = markdown(at)
    assert "**Pass rate, A − B:** +0.0000, 95% CI [+0.0000, +0.0000]: **statistically tied**" in text
    # Precision differs by a hair, consistently: 69 cases, interval [0.00034, 0.00102] excludes zero.
    assert "(69 cases where both have a precision): +0.0006, 95% CI [+0.0003, +0.0010]: **not tied**" in text


def test_defaults_are_leader_and_runner_up() -> None:
    at = run_app()
    assert (at.selectbox(key="run-a").value, at.selectbox(key="run-b").value) == ("tenure", "gbrain")
    assert at.number_input(key="seed").value == 20260627
    assert at.number_input(key="resamples").value == 10_000
    assert "a" not in at.query_params and "b" not in at.query_params


def test_url_names_runs_by_run_id_or_provider_and_is_rewritten() -> None:
    at = run_app(a="retrieval-report-mem0-a2b8b8317b", b="yourmemory")
    assert at.selectbox(key="run-a").value == "mem0"
    assert at.query_params["a"] == "mem0"
    assert at.query_params["b"] == "yourmemory"
    # Unknown names fall back to the defaults and leave the link.
    at = run_app(a="no-such-run", b="../../etc/passwd")
    assert (at.selectbox(key="run-a").value, at.selectbox(key="run-b").value) == ("tenure", "gbrain")
    assert "a" not in at.query_params and "b" not in at.query_params


def test_picking_b_writes_the_url() -> None:
    at = run_app(a="tenure")
    at.selectbox(key="run-b").set_value("zep").run()
    assert not at.exception
    assert at.query_params["b"] == "zep"
    assert metrics(at)["A passed, B failed"] == "68"


def test_seed_and_method_from_the_url() -> None:
    at = run_app(a="tenure", b="mem0", seed="7", resamples="2000", method="bca")
    methods = next(c.value for c in at.caption if c.value.startswith("Methods:"))
    assert "seed 7" in methods and "2,000 resamples" in methods and "BCa" in methods
    # McNemar does not depend on the resampling.
    assert metrics(at)["McNemar p (exact)"] == "6.78e-21"


def test_per_category_statistics_with_holm() -> None:
    at = run_app(a="tenure", b="mem0")
    df = frame(at, "stats-table")
    assert list(df["scope"][:3]) == ["all cases", "Alias resolution", "Scope disambiguation"]
    assert len(df) == 14
    alias = df[df["scope"] == "Alias resolution"].iloc[0]
    assert (alias["n"], alias["b"], alias["c"]) == (23, 23, 0)
    assert alias["mcnemar_p"] == pytest.approx(2.0**-22)
    cats = df.iloc[1:]
    assert (cats["holm_p"] >= cats["mcnemar_p"]).all()
    assert alias["holm_p"] == pytest.approx(13 * 2.0**-22)
    assert pd.isna(df["holm_p"].iloc[0])


def test_win_tie_loss_against_a() -> None:
    at = run_app(a="tenure", b="mem0")
    df = frame(at, "wtl-table")
    assert len(df) == 12
    assert set(df["chosen"]) == {"tenure"}
    mem0 = df[df["other"] == "mem0"].iloc[0]
    assert (mem0["wins"], mem0["losses"], mem0["ties_both_passed"], mem0["ties_both_failed"]) == (68, 0, 9, 0)
    gbrain = df[df["other"] == "gbrain"].iloc[0]
    assert (gbrain["wins"], gbrain["losses"]) == (43, 0)


def test_filters_and_search_from_the_url(downloads: dict[str, bytes]) -> None:
    at = run_app(a="mem0", b="tenure", filter="B wins")
    df = frame(at, "pairs-table")
    assert len(df) == 68
    assert set(df["outcome"]) == {"B wins"}
    assert any(c.value.startswith("68 of 77 paired cases shown.") for c in at.caption)
    csv = pd.read_csv(io.BytesIO(downloads["memeval-compare-cases-mem0-vs-tenure.csv"]), keep_default_na=False)
    assert list(csv["case_id"]) == list(df["case_id"])
    assert list(csv.columns) == list(df.columns)

    at = run_app(a="mem0", b="tenure", filter="both fail")
    assert len(frame(at, "pairs-table")) == 0
    at = run_app(a="mem0", b="tenure", q="ALIAS")
    df = frame(at, "pairs-table")
    assert len(df) > 0
    assert all("alias" in (c + d).lower() for c, d in zip(df["case_id"], df["description"], strict=True))


def test_opened_case_shows_expectation_and_classified_ids(downloads: dict[str, bytes]) -> None:
    at = run_app(a="tenure", b="mem0", case="alias-kube-resolves")
    texts = [t.value for t in at.text]
    assert "Alias resolution: Alias 'kube' drives text search retrieval" in texts
    assert "tenure: passed (active_retrieval); precision 1.0000, recall 1.0000; 40.72 ms" in texts
    assert "mem0: failed; precision 0.1111, recall 1.0000; 81.59 ms" in texts
    assert "how does kube schedule pods across our CI pipeline nodes?" in [c.value for c in at.code]
    exp = frame(at, "case-expectation")
    assert exp[exp["assertion"] == "shouldOnlyInclude"]["value"].iloc[0] == "b-ci-gha-entity, b-kubernetes-entity"
    ids = frame(at, "case-ids")
    assert list(ids.columns) == ["tier", "id", "tenure", "mem0"]
    row = ids[(ids["tier"] == "relevant") & (ids["id"] == "b-ci-gha-entity")].iloc[0]
    assert (row["tenure"], row["mem0"]) == ("correct", "correct")
    noise = ids[(ids["tier"] == "relevant") & (ids["id"] == "b-redis-code")].iloc[0]
    assert (noise["tenure"], noise["mem0"]) == ("", "unexpected")
    failures = next(c.value for c in at.code if c.value.startswith("unexpected belief"))
    assert len(failures.splitlines()) == 16
    assert "unexpected belief in relevantBeliefs: b-redis-code" in failures
    records = json.loads(downloads["memeval-case-alias-kube-resolves-ids.json"])
    assert len(records) == len(ids)


def test_session_comparison_pairs_turns() -> None:
    at = run_app(benchmark="pmb-session", a="tenure", b="gbrain", case=f"{MAIN}/3")
    m = metrics(at)
    assert (m["A passed, B failed"], m["B passed, A failed"], m["both passed"]) == ("11", "0", "1")
    df = frame(at, "pairs-table")
    assert len(df) == 12
    assert "turn_index" in df.columns
    texts = [t.value for t in at.text]
    assert any(t.startswith("gbrain: failed;") and t.endswith("; returned nothing") for t in texts)
