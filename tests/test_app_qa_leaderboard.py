"""The QA leaderboard page, driven through Streamlit's AppTest over the public QA data in ../shared/data."""

from __future__ import annotations

import ast
import io
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
PAGE = "pages/qa_leaderboard.py"
NOT_STATED = ["answer model not stated", "top-k not stated", "judge model not stated"]


def run_app(query: dict[str, str] | None = None) -> AppTest:
    """The app started on the QA leaderboard (as a deep link would), with optional URL query parameters."""
    at = AppTest.from_file(str(APP), default_timeout=120)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.switch_page(PAGE).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def tables(at: AppTest, benchmark: str) -> list[pd.DataFrame]:
    """The DataFrames of one benchmark's tab, in page order."""
    (tab,) = [t for t in at.tabs if t.label == benchmark]
    return [d.value for d in tab.dataframe]


def by_name(df: pd.DataFrame, name: str) -> dict[str, Any]:
    """The row of one run, by display name."""
    rows = df[df["display_name"] == name].to_dict("records")
    assert len(rows) == 1, f"{name!r} appears {len(rows)} times"
    return {str(k): v for k, v in rows[0].items()}


@pytest.fixture
def qa_env(shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The app reads the whole shared data folder (PMB, QA runs and locomo10.json)."""
    monkeypatch.setenv("MEMEVAL_RESULTS", str(shared_data))
    monkeypatch.delenv("MEMEVAL_DATASETS", raising=False)
    monkeypatch.delenv("MEMEVAL_FIXTURES", raising=False)
    return shared_data


def test_one_tab_per_benchmark(qa_env: Path) -> None:
    at = run_app({"benchmark": "longmemeval-s"})
    assert [t.label for t in at.tabs] == ["locomo", "longmemeval-s", "longmemeval-oracle", "evolving-events"]
    assert "28 QA runs loaded." in [c.value for c in at.sidebar.caption]
    assert str(qa_env / "locomo" / "data" / "locomo10.json") in [c.value for c in at.sidebar.code]


def test_locomo_tables_separate_category_5_and_publishable_runs(qa_env: Path) -> None:
    with5, without5_pub, without5_diag, mapping = tables(run_app({"benchmark": "locomo"}), "locomo")
    # supermemory scores category 5 (1,986 questions): its own table, never ranked with the 1,540-question runs.
    assert list(with5["display_name"]) == ["supermemory"]
    sm = by_name(with5, "supermemory")
    assert (sm["n_questions"], sm["accuracy"], sm["cat 5 adversarial"], sm["includes_adversarial"]) == (
        1986,
        0.6501,
        0.6726,
        True,
    )
    assert (sm["badge"], sm["rank"], sm["latency_p50_ms"], sm["top_k"]) == ("✓ publishable", 1, 56220.0, 10)
    assert set(without5_pub["n_questions"]) == {1540} and "supermemory" not in set(without5_diag["display_name"])
    mem0 = by_name(without5_pub, "mem0")
    assert (mem0["badge"], mem0["accuracy"], mem0["rank"], mem0["group_rank"]) == ("✓ publishable", 0.5039, 1, 7)
    assert "not_publishable_because" not in without5_pub.columns
    # Diagnostic runs: every failed condition listed.
    memobase = by_name(without5_diag, "memobase (memobase_eval_0503_3000)")
    assert (memobase["n_questions"], memobase["accuracy"], memobase["badge"]) == (1540, 0.7091, "✗ diagnostic")
    assert memobase["cat 1 multi_hop"] == 0.6383
    assert memobase["not_publishable_because"] == "; ".join(NOT_STATED)
    assert (memobase["accuracy_without_disputed"], memobase["n_disputed"]) == (0.7363, 156)
    assert (memobase["failures"], memobase["failure_reasons"]) == (0, "")
    assert pd.isna(memobase["majority_accuracy"])  # one judge: no majority
    zep = by_name(without5_diag, "zep")
    assert (zep["accuracy"], zep["rank"], zep["not_publishable_because"]) == (0.7844, 1, "top-k not stated")
    sample = by_name(without5_diag, "cognitive_memory (judge reliability current_sdk_20260505)")
    assert sample["not_publishable_because"].startswith("the questions are a sample of the dataset; incomplete")
    ap = by_name(without5_diag, "ap-baseline (ap-baseline/v2)")
    assert (ap["n_judges"], ap["majority_accuracy"]) == (3, 0.6273)
    assert ap["judge_accuracy"] == "judgment_1: 0.6299; judgment_2: 0.6247; judgment_3: 0.6299"
    # The code -> name mapping of the declared convention is on the page.
    assert list(mapping["code"]) == ["1", "2", "3", "4", "5"]
    assert list(mapping["memeval"]) == ["multi_hop", "temporal", "open_domain", "single_hop", "adversarial"]


def test_failed_conditions_are_listed_as_plain_text(qa_env: Path) -> None:
    at = run_app()
    (tab,) = [t for t in at.tabs if t.label == "locomo"]
    texts = [t.value for t in tab.text]
    assert "memobase (memobase_eval_0503_3000):\n  - " + "\n  - ".join(NOT_STATED) in texts
    assert "8 runs: 1 publishable, 7 diagnostic." in [c.value for c in tab.caption]
    assert "1 run: 1 publishable, 0 diagnostic." in [c.value for c in tab.caption]


def test_other_benchmarks(qa_env: Path) -> None:
    at = run_app()
    (lme,) = tables(at, "longmemeval-s")
    assert list(lme["display_name"]) == ["cognitive_memory", "naive_rag"]
    assert list(lme["accuracy"]) == [0.726, 0.7]
    assert by_name(lme, "naive_rag")["cat single-session-assistant"] == 0.9821
    assert "includes_adversarial" not in lme.columns and "accuracy_without_disputed" not in lme.columns
    (oracle,) = tables(at, "longmemeval-oracle")
    assert set(oracle["badge"]) == {"✗ diagnostic"}
    assert by_name(oracle, "mflow")["not_publishable_because"].startswith("incomplete corpus: 100 of 500")
    (events,) = tables(at, "evolving-events")
    assert len(events) == 12
    top = events.iloc[0]
    assert (top["display_name"], top["accuracy"], top["majority_accuracy"]) == ("mflow (topk10_gpt54)", 0.8157, 0.69)


def test_every_column_has_help(qa_env: Path) -> None:
    at = run_app()
    for d in at.dataframe:
        config = json.loads(d.proto.columns)
        for col in d.value.columns:
            assert config[col]["help"], f"column {col!r} has no help"
    (tab,) = [t for t in at.tabs if t.label == "locomo"]
    assert "No run of this benchmark records retrieved ids, so there are no retrieval metrics to show." in [
        c.value for c in tab.caption
    ]


def test_downloads_hold_exactly_each_shown_table(qa_env: Path, downloads: dict[str, bytes]) -> None:
    at = run_app()
    shown = tables(at, "locomo")
    stems = ["locomo-0-publishable", "locomo-1-publishable", "locomo-1-diagnostic", "locomo-category-codes"]
    for df, stem in zip(shown, stems, strict=True):
        records = json.loads(downloads[f"memeval-qa-{stem}.json"])
        assert [list(r) for r in records[:1]] == [list(df.columns)]
        assert len(records) == len(df)
        csv_df = pd.read_csv(io.BytesIO(downloads[f"memeval-qa-{stem}.csv"]), keep_default_na=False, dtype=str)
        assert list(csv_df.columns) == list(df.columns)
        assert list(csv_df[df.columns[0]]) == [str(x) for x in df[df.columns[0]]]
    diag = json.loads(downloads["memeval-qa-locomo-1-diagnostic.json"])
    memobase = next(r for r in diag if r["display_name"] == "memobase (memobase_eval_0503_3000)")
    assert (memobase["accuracy"], memobase["n_questions"]) == (0.7091, 1540)
    assert "memeval-qa-evolving-events-0-diagnostic.csv" in downloads


VERDICT = {"judge": "j", "score": 1}
HOSTILE = "<img src=x onerror=alert(1)> **bold** [link](http://evil.test)"


def test_report_text_is_plain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = {
        "schema_version": 1,
        "run": {"benchmark": "longmemeval-s", "system": HOSTILE},
        "questions": [
            {
                "benchmark": "longmemeval-s",
                "question_id": "q1",
                "answer": "x",
                "verdicts": [{"judge": "j", "score": 1}],
            },
            {"benchmark": "longmemeval-s", "question_id": "q2", "answer": None, "verdicts": []},
        ],
    }
    (tmp_path / "run.json").write_text(json.dumps(run), encoding="utf-8")
    (tmp_path / "broken.json").write_text('{"run": {"benchmark": "x"}, "questions": [', encoding="utf-8")
    monkeypatch.setenv("MEMEVAL_RESULTS", str(tmp_path))
    at = run_app()
    (df,) = tables(at, "longmemeval-s")
    row = by_name(df, HOSTILE)
    # The unanswered question scores 0 and stays counted.
    assert (row["n_questions"], row["accuracy"], row["failures"], row["failure_reasons"]) == (2, 0.5, 1, "1 no answer")
    assert any(HOSTILE in t.value for t in at.text)
    for m in [*at.markdown, *at.caption, *at.sidebar.markdown, *at.subheader]:
        assert "<img" not in m.value and "**bold**" not in m.value
    assert [e.value for e in at.sidebar.error] == ["1 file could not be loaded:"]
    assert any("broken.json" in c.value for c in at.sidebar.code)


def test_empty_results_folder_explains(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMEVAL_RESULTS", str(tmp_path))
    at = run_app()
    assert not at.dataframe
    assert at.info[0].value.startswith("No QA benchmark results")
    assert str(tmp_path) in [c.value for c in at.code]


def _question(qid: str, score: int, **extra: Any) -> dict[str, Any]:
    return {
        "benchmark": "toy",
        "question_id": qid,
        "answer": "a",
        "verdicts": [{"judge": "j", "score": score}],
        **extra,
    }


def test_repeat_spread_and_retrieval_metrics_where_ids_exist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for repeat, scores in ((1, (1, 1)), (2, (1, 0))):
        doc = {
            "schema_version": 1,
            "run": {"benchmark": "toy", "system": "repeated", "repeat": repeat},
            "questions": [_question(f"q{i}", s) for i, s in enumerate(scores)],
        }
        (tmp_path / f"repeat{repeat}.json").write_text(json.dumps(doc), encoding="utf-8")
    ranked = {
        "schema_version": 1,
        "run": {"benchmark": "toy", "system": "ranked"},
        "questions": [
            # gold b at rank 2: P@5 0.2, R@5 1, RR 0.5; gold z never retrieved: all 0.
            _question("q0", 1, retrieved_ids=["a", "b", "c"], gold_evidence_ids=["b"]),
            _question("q1", 0, retrieved_ids=["a"], gold_evidence_ids=["z"]),
        ],
    }
    (tmp_path / "ranked.json").write_text(json.dumps(ranked), encoding="utf-8")
    monkeypatch.setenv("MEMEVAL_RESULTS", str(tmp_path))
    (df,) = tables(run_app(), "toy")
    (name,) = [n for n in df["display_name"] if n.startswith("repeated")]  # repeats share a system: "repeated #<sha>"
    rep = by_name(df, name)
    # Repeats of one configuration: one row, accuracy = mean of 1.0 and 0.5, sample std of the two.
    assert (rep["n_repeats"], rep["accuracy"], rep["accuracy_min"], rep["accuracy_max"]) == (2, 0.75, 0.5, 1.0)
    assert rep["accuracy_std"] == 0.3536
    assert pd.isna(rep["p@5"])
    ranked_row = by_name(df, "ranked")
    assert (ranked_row["p@5"], ranked_row["r@5"], ranked_row["mrr@5"], ranked_row["retrieval_queries"]) == (
        0.1,
        0.5,
        0.25,
        2,
    )
    assert ranked_row["badge"] == "✗ diagnostic"
    assert "no declared protocol for benchmark 'toy' (diagnostic only)" in ranked_row["not_publishable_because"]


@pytest.mark.parametrize("page", ["pages/qa_leaderboard.py", "pages/judges.py"])
def test_pages_have_no_bare_module_strings(page: str) -> None:
    # Streamlit "magic" renders any bare string statement of a page script on the page.
    tree = ast.parse((ROOT / page).read_text(encoding="utf-8"))
    strays = [n.lineno for n in tree.body[1:] if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)]
    assert strays == []
