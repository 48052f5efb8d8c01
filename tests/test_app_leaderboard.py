"""The leaderboard page and the shared UI helpers, driven through Streamlit's AppTest over the public PMB data."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from memeval_core import labels
from memeval_core.catalogue import default_catalogue
from memeval_core.explore.home import verification_badge
from pages import ui
from tests.github_standin import GitHubStandIn

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
PAGE = "pages/leaderboard.py"
SINGLE_COLUMNS = [
    "rank",
    "display_name",
    "status",
    "provider",
    "cases",
    "passed",
    "active_retrieval",
    "structural",
    "trivially_empty",
    "mean_precision",
    "mean_recall",
    "latency_mean_ms",
    "latency_p50_ms",
    "latency_p95_ms",
    "ingestion_total_ms",
    "made_by",
]
SESSION_COLUMNS = [*SINGLE_COLUMNS[:11], "mean_drift", *SINGLE_COLUMNS[11:]]


def run_app(query: dict[str, str] | None = None) -> AppTest:
    """The app after its first run, on the PMB details page, with optional URL query parameters."""
    at = AppTest.from_file(str(APP), default_timeout=60)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def system(cell: str) -> str:
    """A system's name from its link cell (``run?run=<id>#<name>``)."""
    return cell.split("#", 1)[1]


def table(at: AppTest) -> pd.DataFrame:
    """The table shown (the selected suite's), with each system's name instead of its link."""
    df: pd.DataFrame = at.dataframe[0].value.copy()
    df["display_name"] = [system(v) for v in df["display_name"]]
    return df


def by_name(df: pd.DataFrame, name: str) -> dict[str, Any]:
    """The row of one run, by display name."""
    rows = df[df["display_name"] == name].to_dict("records")
    assert len(rows) == 1, f"{name!r} appears {len(rows)} times"
    return {str(k): v for k, v in rows[0].items()}


# --- The numbers shown -------------------------------------------------------------------------


def test_single_turn_table_shows_re_derived_numbers(pmb_env: Path) -> None:
    df = table(run_app())
    assert list(df.columns) == SINGLE_COLUMNS
    assert list(df["rank"]) == list(range(1, 14))
    assert len(df) == 13
    assert df["display_name"].iloc[0] == "tenure"
    tenure = by_name(df, "tenure")
    assert (tenure["cases"], tenure["passed"], tenure["active_retrieval"]) == (77, 77, 43)
    assert (tenure["structural"], tenure["trivially_empty"]) == (25, 9)
    assert tenure["latency_p50_ms"] == 9.77
    mem0 = by_name(df, "mem0")
    assert mem0["passed"] == 9
    assert mem0["mean_precision"] == 0.0558
    assert mem0["mean_recall"] == 0.9884
    assert mem0["latency_p50_ms"] == 64.94
    assert mem0["latency_p95_ms"] == 156.89
    # The report's own provenance, where it states one (of the published baselines, agentmemory's does).
    assert by_name(df, "agentmemory")["made_by"] == "@agentmemory/agentmemory 0.9.22 · 2026-05-29"
    assert df["made_by"].isna().sum() == 12
    gbrain = by_name(df, "gbrain")
    assert (gbrain["passed"], gbrain["active_retrieval"], gbrain["structural"], gbrain["trivially_empty"]) == (
        34,
        5,
        20,
        9,
    )


def test_session_table_has_drift(pmb_env: Path) -> None:
    df = table(run_app({"benchmark": "pmb-session"}))
    assert list(df.columns) == SESSION_COLUMNS
    assert len(df) == 11
    assert df["display_name"].iloc[0] == "tenure"
    tenure = by_name(df, "tenure")
    assert (tenure["cases"], tenure["passed"], tenure["active_retrieval"], tenure["mean_drift"]) == (12, 12, 11, 0.0)
    mem0 = by_name(df, "mem0")
    assert (mem0["passed"], mem0["mean_precision"], mem0["mean_drift"]) == (0, 0.0602, 0.9398)
    # gbrain returned nothing relevant in any turn: precision is undefined, not 0.
    assert pd.isna(by_name(df, "gbrain")["mean_precision"])


def test_verification_badges_and_mismatch_lists(pmb_env: Path) -> None:
    at = run_app()
    df = table(at)
    unverified = {r["display_name"]: r["status"] for r in df.to_dict("records") if r["status"] != "✓ verified"}
    assert unverified == {
        "vector (nomic)": "✗ 4 mismatches",
        "qwen3 (vector)": "✗ 3 mismatches",
        "mem0": "✗ 7 mismatches",
    }
    assert "13 runs, 10 verified." in [c.value for c in at.caption]
    assert all(table(run_app({"benchmark": "pmb-session"}))["status"] == "✓ verified")
    (single,) = [e for e in at.expander if e.label.startswith("Verification details")]
    assert single.label == "Verification details: 3 of 13 runs with mismatches"
    listed = [t.value for t in single.text]
    assert "mem0 (test-results/baseline/retrieval-report-mem0.json): 7 mismatches" in listed
    codes = "\n".join(c.value for c in single.code)
    assert "$.retrieval.passTypes.structural: stated 7, re-derived 8" in codes  # qwen3
    assert "$.retrieval.passTypes.triviallyEmpty: stated 10, re-derived 3" in codes  # nomic
    # mem0's stated category block disagrees with its own per-case data.
    assert "$.retrieval.categories[1].caseCount: stated 11, re-derived 12" in codes


def test_explanation_and_column_help(pmb_env: Path) -> None:
    at = run_app()
    (how,) = [e for e in at.expander if e.label == "How these numbers are made"]
    text = " ".join(m.value for m in how.markdown)
    for phrase in ("Active passes", "Structural passes", "Empty passes", "re-derived from the raw per-case ids"):
        assert phrase in text
    assert "Recall alone misleads" in text
    config = json.loads(at.dataframe[0].proto.columns)
    for col in SINGLE_COLUMNS:
        assert config[col]["label"] == labels.label(col), col
        assert config[col]["help"].startswith(labels.help_text(col)), col
    assert "_" not in "".join(config[c]["label"] for c in SINGLE_COLUMNS)


def test_sidebar_names_the_results_directory(pmb_env: Path) -> None:
    at = run_app()
    captions = [c.value for c in at.sidebar.caption]
    assert f"Results: {pmb_env}" in captions
    assert any("PrecisionMemBench · single\\-turn: 13 runs" in c and "session: 11 runs" in c for c in captions)


# --- URL state and sorting ------------------------------------------------------------------------


def test_url_selects_the_session_table(pmb_env: Path) -> None:
    at = run_app({"benchmark": "pmb-session"})
    assert at.radio(key="choice-benchmark").value == "pmb-session"
    assert "mean_drift" in table(at).columns
    assert run_app().radio(key="choice-benchmark").value == "pmb-single-turn"


def test_url_sort_and_order(pmb_env: Path) -> None:
    at = run_app({"sort": "display_name", "order": "ascending"})
    df = table(at)
    assert list(df["display_name"][:3]) == ["a-mem", "agentmemory", "atomicmemory"]
    assert at.selectbox(key="choice-sort").value == "display_name"
    assert at.radio(key="choice-order").value == "ascending"


def test_sort_control_reorders(pmb_env: Path) -> None:
    at = run_app()
    at.selectbox(key="choice-sort").set_value("latency_p50_ms").run()
    assert not at.exception
    df = table(at)
    assert df["display_name"].iloc[0] == "qwen3 (vector)"
    assert df["latency_p50_ms"].iloc[0] == 872.1
    assert list(df["latency_p50_ms"]) == sorted(df["latency_p50_ms"], reverse=True)
    at.radio(key="choice-order").set_value("ascending").run()
    df = table(at)
    assert (df["display_name"].iloc[0], df["latency_p50_ms"].iloc[0]) == ("tenure", 9.77)


def test_drift_sort_leaves_single_turn_in_rank_order(pmb_env: Path) -> None:
    at = run_app({"sort": "mean_drift", "order": "ascending"})
    assert table(at)["display_name"].iloc[0] == "tenure"
    assert "13 runs, 10 verified. Drift does not apply to this suite; shown in rank order." in [
        c.value for c in at.caption
    ]
    session = table(run_app({"sort": "mean_drift", "order": "ascending", "benchmark": "pmb-session"}))
    assert list(session["mean_drift"]) == sorted(session["mean_drift"])


def test_invalid_url_values_are_named_in_a_warning(pmb_env: Path) -> None:
    at = run_app({"sort": "__class__", "order": "sideways", "benchmark": "../../etc"})
    warnings = [w.value for w in at.warning]
    assert len(warnings) == 3
    assert any("benchmark=\\.\\./\\.\\./etc" in w and "single\\-turn instead" in w for w in warnings)
    assert any("sort=\\_\\_class\\_\\_" in w and "showing Rank instead" in w for w in warnings)
    assert at.selectbox(key="choice-sort").value == "rank"
    assert table(at)["display_name"].iloc[0] == "tenure"


# --- Downloads ----------------------------------------------------------------------------------


def test_downloads_hold_exactly_the_shown_table(pmb_env: Path, downloads: dict[str, bytes]) -> None:
    for benchmark in ("pmb-single-turn", "pmb-session"):
        at = run_app({"sort": "mean_recall", "order": "ascending", "benchmark": benchmark})
        shown = table(at)
        csv_df = pd.read_csv(io.BytesIO(downloads[f"memeval-leaderboard-{benchmark}.csv"]), keep_default_na=False)
        assert list(csv_df["display_name"]) == list(shown["display_name"])
        assert list(csv_df["passed"]) == list(shown["passed"])
        assert {"run_id", "benchmark", "mismatches", "verified"} <= set(csv_df.columns), "machine names, all of them"
        records = json.loads(downloads[f"memeval-leaderboard-{benchmark}.json"])
        assert [r["display_name"] for r in records] == list(shown["display_name"])
    records = json.loads(downloads["memeval-leaderboard-pmb-single-turn.json"])
    mem0 = next(r for r in records if r["display_name"] == "mem0")
    assert (mem0["mean_precision"], mem0["mean_recall"], mem0["latency_p50_ms"]) == (0.0558, 0.9884, 64.94)
    assert mem0["status"] == "✗ 7 mismatches"
    session = json.loads(downloads["memeval-leaderboard-pmb-session.json"])
    assert next(r for r in session if r["display_name"] == "gbrain")["mean_precision"] is None


# --- Report text is shown as plain text, never as HTML or Markdown ------------------------------


HOSTILE = "<img src=x onerror=alert(1)> **bold** [link](http://evil.test) :red[x]"


@pytest.fixture
def hostile_results(pmb_results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A results folder with one real report whose provider string is hostile markup, plus one broken file."""
    report = json.loads(
        (pmb_results / "test-results" / "baseline" / "retrieval-report-tenure.json").read_text(encoding="utf-8")
    )
    report["provider"] = HOSTILE
    (tmp_path / "retrieval-report-hostile.json").write_text(json.dumps(report), encoding="utf-8")
    (tmp_path / "retrieval-report-broken.json").write_text('{"provider": "x", "cases": [', encoding="utf-8")
    monkeypatch.setenv("MEMEVAL_RESULTS", str(tmp_path))
    monkeypatch.setenv("MEMEVAL_FIXTURES", str(pmb_results / "fixtures"))
    return tmp_path


def test_report_text_is_plain_and_errors_are_listed(hostile_results: Path) -> None:
    at = run_app()
    df = table(at)
    assert list(df["provider"]) == [HOSTILE]
    assert df["display_name"].iloc[0].startswith(HOSTILE)
    # No Markdown element anywhere carries the report's text unescaped.
    for m in [*at.markdown, *at.caption, *at.sidebar.markdown]:
        assert "<img" not in m.value and "**bold**" not in m.value
    errors = [c.value for c in at.sidebar.code if "retrieval-report-broken.json" in c.value]
    assert len(errors) == 1
    assert errors[0].startswith("retrieval-report-broken.json\nnot valid JSON")
    assert [e.label for e in at.sidebar.expander] == ["1 file not loaded (1 with errors)"]


# --- Empty state and the one-click download ------------------------------------------------------


@pytest.fixture
def empty_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty results directory."""
    root = tmp_path / "results"
    root.mkdir()
    monkeypatch.setenv("MEMEVAL_RESULTS", str(root))
    monkeypatch.delenv("MEMEVAL_FIXTURES", raising=False)
    return root


def test_empty_state_offline_explains_instead_of_failing(empty_results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Port 9 (discard) is closed on localhost: the listing request fails at once.
    monkeypatch.setenv("MEMEVAL_GITHUB_API", "http://127.0.0.1:9")
    monkeypatch.setenv("MEMEVAL_GITHUB_RAW", "http://127.0.0.1:9")
    at = run_app()
    assert not at.dataframe
    assert at.info[0].value == f"No runs yet in the results directory `{empty_results}`."
    text = " ".join(m.value for m in at.markdown)
    assert "python -m memeval_core sync" in text and "python -m memeval_core add FILE" in text
    at.button(key="sync-pmb").click().run()
    assert not at.exception
    assert [e.value for e in at.error] == ["Some sources could not be downloaded; what arrived is kept:"]
    codes = [c.value for c in at.code]
    failures = next(c for c in codes if "tenurehq/precisionMemBench@" in c).splitlines()
    assert len(failures) == len({e.repository for e in default_catalogue().entries}), "one sentence per source"
    assert ui.LOCAL_COPY_EXAMPLE in codes
    assert any("MEMEVAL_RESULTS" in m.value for m in at.markdown)
    assert not [p for p in empty_results.rglob("*") if p.is_file() and not p.name.startswith(".")]


@pytest.fixture
def github_stand_in(shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[GitHubStandIn]:
    """The catalogue's files at their pinned commits, served from ../shared/data on 127.0.0.1."""
    with GitHubStandIn.serving(default_catalogue(), shared_data) as server:
        monkeypatch.setenv("MEMEVAL_GITHUB_RAW", server.url)
        monkeypatch.setenv("MEMEVAL_GITHUB_API", server.url)
        yield server


def test_sync_button_downloads_every_public_result(empty_results: Path, github_stand_in: GitHubStandIn) -> None:
    at = run_app()
    assert not at.dataframe
    at.button(key="sync-pmb").click().run()
    assert not at.exception, [e.message for e in at.exception]
    (done,) = [s.value for s in at.sidebar.success]
    assert done.startswith(f"Downloaded {len(default_catalogue().entries)} files from ")
    single = table(at)
    assert len(single) == 13 and len(table(run_app({"benchmark": "pmb-session"}))) == 11
    assert by_name(single, "tenure")["passed"] == 77
    assert (empty_results / "locomo" / "data" / "locomo10.json").is_file(), "the QA side came along"


# --- Shared helpers (pages/ui.py) -----------------------------------------------------------------


def test_fingerprint_follows_file_changes(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("[1]", encoding="utf-8")
    first = ui.fingerprint(tmp_path, None)
    assert ui.fingerprint(tmp_path, None) == first
    (tmp_path / ".sync-staging").mkdir()
    (tmp_path / ".sync-staging" / "b.json").write_text("[2]", encoding="utf-8")
    assert ui.fingerprint(tmp_path, None) == first  # hidden staging folders are not results
    (tmp_path / "a.json").write_text("[1, 2]", encoding="utf-8")
    changed = ui.fingerprint(tmp_path, None)
    assert changed != first
    (tmp_path / "c.json").write_text("[3]", encoding="utf-8")
    assert ui.fingerprint(tmp_path, None) != changed
    assert ui.fingerprint(tmp_path / "missing") != ui.fingerprint(tmp_path)


def test_load_is_cached_per_fingerprint(pmb_results: Path) -> None:
    fp = ui.fingerprint(pmb_results)
    first = ui.load_everything(str(pmb_results), None, None, fp)
    assert len(first.pmb.identities) == first.pmb.table.num_rows == 24 and first.pmb.errors == ()
    assert ui.load_everything(str(pmb_results), None, None, fp) is first


def test_md_escape_neutralises_markdown() -> None:
    assert ui.md_escape("**a** [b](c) :red[d] $x$ <i>") == r"\*\*a\*\* \[b\]\(c\) \:red\[d\] \$x\$ \<i\>"
    assert ui.md_escape("a\nb") == "a b"


def test_verification_badge() -> None:
    assert verification_badge(0) == "✓ verified"
    assert verification_badge(1) == "✗ 1 mismatch"
    assert verification_badge(2) == "✗ 2 mismatches"


def test_sort_frame_puts_missing_values_last() -> None:
    df = pd.DataFrame({"name": ["a", "b", "c"], "v": [0.5, None, 0.9]})
    assert list(ui.sort_frame(df, "v", descending=True)["name"]) == ["c", "a", "b"]
    assert list(ui.sort_frame(df, "v", descending=False)["name"]) == ["a", "c", "b"]
    assert ui.sort_frame(df, None, descending=True) is df
    assert ui.sort_frame(df, "absent", descending=True) is df


def test_frame_json_and_csv_round_trip() -> None:
    df = pd.DataFrame({"name": ["x,y", "z"], "v": [0.1, None]})
    assert ui.frame_csv(df) == 'name,v\n"x,y",0.1\nz,\n'
    assert json.loads(ui.frame_json(df)) == [{"name": "x,y", "v": 0.1}, {"name": "z", "v": None}]
