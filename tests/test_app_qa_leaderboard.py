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

from memeval_core import labels

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
    """The ranked tables of one benchmark, in page order, with each system's name instead of its link."""
    at = run_app({**at.query_params, "benchmark": benchmark}) if at.query_params.get("benchmark") != benchmark else at
    out = []
    for d in at.dataframe:
        df = d.value.copy()
        if "display_name" in df.columns:
            df["display_name"] = [
                v.split("#", 1)[1] if isinstance(v, str) and "#" in v else v for v in df["display_name"]
            ]
            out.append(df)
    return out


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


def test_one_benchmark_at_a_time(qa_env: Path) -> None:
    at = run_app({"benchmark": "longmemeval-s"})
    radio = at.radio(key="choice-benchmark")
    assert radio.options == ["LoCoMo", "LongMemEval\\-S", "LongMemEval \\(oracle\\)", "Evolving Events"]
    assert radio.value == "longmemeval-s"
    assert any("LongMemEval\\-S: 2 runs" in c.value for c in at.sidebar.caption)
    warned = run_app({"benchmark": "nope"})
    assert [w.value for w in warned.warning] == [
        "The link asks for benchmark=nope, which is not here; showing LoCoMo instead."
    ]


def test_locomo_ranks_category_5_apart_and_badges_every_run(qa_env: Path) -> None:
    at = run_app({"benchmark": "locomo"})
    with5, without5 = tables(at, "locomo")
    mapping = at.dataframe[-1].value
    # supermemory scores category 5 (1,986 questions): its own table, never ranked with the 1,540-question runs.
    assert list(with5["display_name"]) == ["supermemory"]
    sm = by_name(with5, "supermemory")
    assert (sm["n_questions"], sm["accuracy"], sm["Adversarial · 5"], sm["includes_adversarial"]) == (
        1986,
        0.6501,
        0.6726,
        True,
    )
    assert (sm["badge"], sm["rank"], sm["latency_p50_ms"], sm["top_k"]) == ("✓ publishable", 1, 56220.0, 10)
    assert "not_publishable_because" not in with5.columns  # every run of that table is publishable
    assert set(without5["n_questions"]) == {1540, 50}  # the judge-reliability sample has 50
    # One ranking by accuracy, publishable or not: zep leads, mem0 (the only publishable run) is 7th.
    assert list(without5["rank"]) == sorted(without5["rank"])
    zep = by_name(without5, "zep")
    assert (zep["accuracy"], zep["rank"], zep["badge"], zep["not_publishable_because"]) == (
        0.7844,
        1,
        "diagnostic",
        "top-k not stated",
    )
    mem0 = by_name(without5, "mem0")
    assert (mem0["badge"], mem0["accuracy"], mem0["rank"]) == ("✓ publishable", 0.5039, 7)
    memobase = by_name(without5, "memobase (memobase_eval_0503_3000)")
    assert (memobase["n_questions"], memobase["accuracy"], memobase["badge"]) == (1540, 0.7091, "diagnostic")
    assert memobase["Multi hop · 1"] == 0.6383
    assert memobase["not_publishable_because"] == "; ".join(NOT_STATED)
    assert (memobase["accuracy_without_disputed"], memobase["n_disputed"]) == (0.7363, 156)
    assert (memobase["failures"], memobase["failure_reasons"]) == (0, "")
    assert pd.isna(memobase["majority_accuracy"])  # one judge: no majority
    sample = by_name(without5, "cognitive_memory (judge reliability current_sdk_20260505)")
    assert sample["not_publishable_because"].startswith("the questions are a sample of the dataset; incomplete")
    ap = by_name(without5, "ap-baseline (ap-baseline/v2)")
    assert ap["majority_accuracy"] == 0.6273
    assert (ap["Judge · judgment_1"], ap["Judge · judgment_2"], ap["Judge · judgment_3"]) == (0.6299, 0.6247, 0.6299)
    # The code -> name mapping of the declared convention is on the page.
    assert list(mapping["code"]) == ["1", "2", "3", "4", "5"]
    assert list(mapping["memeval"]) == ["multi_hop", "temporal", "open_domain", "single_hop", "adversarial"]


def test_publishable_only_keeps_the_publishable_runs(qa_env: Path) -> None:
    with5, without5 = tables(run_app({"benchmark": "locomo", "publishable-only": "true"}), "locomo")
    assert list(without5["display_name"]) == ["mem0"] and list(without5["rank"]) == [1]
    assert list(with5["display_name"]) == ["supermemory"]


def test_other_benchmarks(qa_env: Path) -> None:
    at = run_app()
    (lme,) = tables(at, "longmemeval-s")
    assert list(lme["display_name"]) == ["cognitive_memory", "naive_rag"]
    assert list(lme["accuracy"]) == [0.726, 0.7]
    assert by_name(lme, "naive_rag")["Single session assistant"] == 0.9821
    assert "includes_adversarial" not in lme.columns and "accuracy_without_disputed" not in lme.columns
    (oracle,) = tables(at, "longmemeval-oracle")
    assert set(oracle["badge"]) == {"diagnostic"}
    assert by_name(oracle, "mflow")["not_publishable_because"].startswith("incomplete corpus: 100 of 500")
    (events,) = tables(at, "evolving-events")
    assert len(events) == 12
    top = events.iloc[0]
    assert (top["display_name"], top["accuracy"], top["majority_accuracy"]) == ("mflow (topk10_gpt54)", 0.8157, 0.69)


def test_every_column_has_a_human_header_and_help(qa_env: Path) -> None:
    at = run_app({"benchmark": "locomo"})
    for d in at.dataframe:
        config = json.loads(d.proto.columns)
        for col in d.value.columns:
            label = config[col].get("label", col)
            if col in labels.LABELS:
                assert config[col]["help"], f"column {col!r} has no help"
            assert "_" not in label or col not in labels.LABELS, label
    assert any("No run records retrieved ids: no retrieval metrics." in c.value for c in at.caption)


def test_downloads_hold_exactly_each_shown_table(qa_env: Path, downloads: dict[str, bytes]) -> None:
    at = run_app({"benchmark": "locomo"})
    shown = [*tables(at, "locomo"), at.dataframe[-1].value]
    stems = ["locomo-0", "locomo-1", "locomo-category-codes"]
    for df, stem in zip(shown, stems, strict=True):
        records = json.loads(downloads[f"memeval-qa-{stem}.json"])
        assert len(records) == len(df)
        assert [r["display_name"] for r in records] == list(df["display_name"]) if "display_name" in df else True
        csv_df = pd.read_csv(io.BytesIO(downloads[f"memeval-qa-{stem}.csv"]), keep_default_na=False, dtype=str)
        assert set(df.columns) <= set(csv_df.columns)
        assert "run_id" in csv_df.columns or stem.endswith("codes"), "downloads keep machine columns"
    diag = json.loads(downloads["memeval-qa-locomo-1.json"])
    memobase = next(r for r in diag if r["display_name"] == "memobase (memobase_eval_0503_3000)")
    assert (memobase["accuracy"], memobase["n_questions"]) == (0.7091, 1540)


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
    for m in [*at.markdown, *at.caption, *at.sidebar.markdown, *at.subheader, *at.warning]:
        assert "<img" not in m.value and "**bold**" not in m.value
    assert [e.label for e in at.sidebar.expander] == ["1 file not loaded (1 with errors)"]
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
    monkeypatch.setattr("pages.ui.RETRIEVAL_BATCH", 1)  # one run's questions at a time: the batches add up
    (df,) = tables(run_app({"benchmark": "toy"}), "toy")
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
    assert ranked_row["badge"] == "diagnostic"
    assert "no declared protocol for benchmark 'toy' (diagnostic only)" in ranked_row["not_publishable_because"]


@pytest.mark.parametrize("page", ["pages/qa_leaderboard.py", "pages/judges.py"])
def test_pages_have_no_bare_module_strings(page: str) -> None:
    # Streamlit "magic" renders any bare string statement of a page script on the page.
    tree = ast.parse((ROOT / page).read_text(encoding="utf-8"))
    strays = [n.lineno for n in tree.body[1:] if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)]
    assert strays == []
