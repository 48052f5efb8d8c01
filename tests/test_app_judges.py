"""The judges page, driven through Streamlit's AppTest over the public multi-judge QA data in ../shared/data."""

from __future__ import annotations

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
PAGE = "pages/judges.py"
V1 = "ap-baseline (ap-baseline/v1)"
V2 = "ap-baseline (ap-baseline/v2)"
RELIABILITY = "cognitive_memory (judge reliability current_sdk_20260505)"


def run_app(query: dict[str, str] | None = None) -> AppTest:
    """The app started on the judges page (as a deep link would), with optional URL query parameters."""
    at = AppTest.from_file(str(APP), default_timeout=300)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.switch_page(PAGE).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def frames(at: AppTest, column: str) -> list[pd.DataFrame]:
    """Every table on the page that has ``column``, in page order."""
    return [d.value for d in at.dataframe if column in d.value.columns]


def agreements(at: AppTest) -> list[pd.DataFrame]:
    """Every full agreement table (one per panel, in its tab), in page order."""
    return frames(at, "detail")


def stat(df: pd.DataFrame, scope: str, statistic: str) -> dict[str, Any]:
    """One row of an agreement table (statistics are shown by their registry name)."""
    rows = df[(df["agreement_scope"] == scope) & (df["statistic"] == labels.label(statistic))].to_dict("records")
    assert len(rows) == 1, (scope, statistic, len(rows))
    return {str(k): v for k, v in rows[0].items()}


@pytest.fixture
def qa_env(shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The app reads the whole shared data folder."""
    monkeypatch.setenv("MEMEVAL_RESULTS", str(shared_data))
    monkeypatch.delenv("MEMEVAL_DATASETS", raising=False)
    return shared_data


def specs(at: AppTest) -> list[dict[str, Any]]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def test_evolving_events_leader_changes_with_the_judge(qa_env: Path, downloads: dict[str, bytes]) -> None:
    at = run_app({"benchmark": "evolving-events"})
    assert at.selectbox(key="choice-benchmark").value == "evolving-events"
    (warning,) = at.warning
    assert "The leader changes with the judge" in warning.value
    assert "mflow \\(topk5\\_gpt54\\) first" in warning.value and "mflow \\(topk10\\_gpt54\\) first" in warning.value
    (tau,) = frames(at, "kendall_tau_b")
    row = tau.iloc[0]
    assert (row["judge_a"], row["judge_b"], row["kendall_tau_b"]) == (
        "deepeval_correctness",
        "directllm_correctness",
        0.9091,
    )
    assert (row["leader_a"], row["leader_b"], row["leader_changed"]) == (
        "mflow (topk5_gpt54)",
        "mflow (topk10_gpt54)",
        True,
    )
    assert row["tau_ci_low"] < 0.9091 <= row["tau_ci_high"]
    assert row["swapped_pairs"].count(" > ") == 3
    (side,) = frames(at, "rank_spread")
    top = side[side["display_name"].str.endswith("#mflow (topk10_gpt54)")].iloc[0]
    assert (top["Judge · directllm_correctness"], top["Judge · deepeval_correctness"]) == (1, 2)  # ranks
    saved = {r["display_name"]: r for r in json.loads(downloads["memeval-judges-ranking-0.json"])}
    top = saved["mflow (topk10_gpt54)"]
    assert (top["rank (directllm_correctness)"], top["rank (deepeval_correctness)"]) == (1, 2)
    assert (top["accuracy (directllm_correctness)"], top["accuracy (deepeval_correctness)"]) == (0.977, 0.6544)
    (acc,) = frames(at, "judge_pass_rate")
    assert len(acc) == 24  # 12 runs x 2 judges
    cognee = acc[acc["display_name"].str.endswith("#cognee (topk10_gpt54)") & (acc["judge"] == "deepeval_correctness")]
    cognee = cognee.iloc[0]
    assert (cognee["n_questions"], cognee["judge_accuracy"]) == (99, 0.6279)
    (agree,) = agreements(at)
    pooled = stat(agree, "12 runs pooled", "krippendorff_alpha_interval")
    assert pooled["n_items"] == 1199 and pooled["ci_low"] < pooled["estimate"] < pooled["ci_high"]
    seed_note = "Percentile bootstrap over items: seed 20260627, 2,000 resamples, 95% intervals."
    assert any(c.value.startswith(seed_note) for c in at.caption)


def test_locomo_audit_and_cognitive_memory_agreement(qa_env: Path) -> None:
    at = run_app({"benchmark": "locomo"})
    assert not at.warning  # v2 leads under all three judges
    audit, reliability = agreements(at)
    assert stat(audit, V2, "fleiss_kappa")["estimate"] == 0.9611
    assert stat(audit, V1, "fleiss_kappa")["estimate"] == 0.9589
    assert stat(audit, V2, "unanimity")["detail"] == "1498 of 1540 items unanimous"
    assert stat(audit, V1, "unanimity")["detail"] == "1522 of 1540 items unanimous"
    v2 = stat(audit, V2, "fleiss_kappa")
    assert v2["ci_low"] < 0.9611 < v2["ci_high"] and v2["n_items"] == 1540
    assert len(audit[(audit["agreement_scope"] == V2) & (audit["statistic"] == "Cohen's κ")]) == 3
    assert "Krippendorff's α (scores)" not in set(audit["statistic"])  # binary verdicts: nominal only
    assert stat(audit, "2 runs pooled", "unanimity")["detail"] == "3020 of 3080 items unanimous"
    cohen = stat(reliability, RELIABILITY, "cohen_kappa")
    assert (cohen["judges_compared"], cohen["estimate"], cohen["n_items"]) == ("original vs alt", 0.8792, 50)
    assert cohen["detail"] == "equal pass/fail on 0.9400 of 50 items"
    (tau,) = frames(at, "kendall_tau_b")
    assert list(tau["kendall_tau_b"]) == [1.0, 1.0, 1.0] and not tau["leader_changed"].any()
    (dis,) = frames(at, "failed_by")
    assert len(dis) == 25  # first page of 42 (v2) + 18 (v1) + 3 (reliability) = 63
    assert any(
        c.value.startswith(
            "63 questions where the judges' pass/fail differs; showing 25 (page 1 of 3). "
            "Downloads hold every filtered question, all pages."
        )
        for c in at.caption
    )


def test_run_param_selects_runs_and_pages_the_disagreements(qa_env: Path) -> None:
    at = run_app({"benchmark": "locomo", "run": V2, "page": "2"})
    assert at.multiselect(key="runs").value == [V2]
    (agree,) = agreements(at)
    assert set(agree["agreement_scope"]) == {V2}
    assert "One run in this panel: select two or more runs to compare rankings." in [c.value for c in at.caption]
    (dis,) = frames(at, "failed_by")
    assert len(dis) == 17 and set(dis["display_name"]) == {V2}  # 42 disagreements, page 2 of 2
    assert list(dis.columns) == [
        "display_name",
        "question_id",
        "category",
        "question",
        "gold_answer",
        "answer",
        "Judge · judgment_1",
        "Judge · judgment_2",
        "Judge · judgment_3",
        "passed_by",
        "failed_by",
        "score_spread",
    ]
    assert set(dis["score_spread"]) == {1.0}


def test_disagreement_filters(qa_env: Path, downloads: dict[str, bytes]) -> None:
    at = run_app({"benchmark": "locomo", "drun": RELIABILITY})
    (dis,) = frames(at, "failed_by")
    assert list(dis["question_id"]) == ["conv-41-q7", "conv-47-q125", "conv-26-q144"]
    first = dis.iloc[0]
    assert (first["gold_answer"], first["answer"], first["Judge · original"], first["Judge · alt"]) == (
        "A doll, a film camera",
        "Film camera.",
        "1",  # each judge's raw score, shown as text (the download keeps the number)
        "0",
    )
    saved = json.loads(downloads["memeval-judges-disagreements.json"])[0]
    assert (saved["question_id"], saved["original"], saved["alt"]) == ("conv-41-q7", 1.0, 0.0)
    assert (first["passed_by"], first["failed_by"], first["category"]) == ("original", "alt", "1 (multi_hop)")
    at = run_app({"benchmark": "locomo", "drun": RELIABILITY, "q": "OMELETTE"})
    (dis,) = frames(at, "failed_by")
    assert list(dis["question_id"]) == ["conv-47-q125"]


def test_every_column_has_help_and_downloads_match(qa_env: Path, downloads: dict[str, bytes]) -> None:
    at = run_app({"benchmark": "locomo", "drun": V2})
    judge_names = {labels.judge_header(j) for j in ("judgment_1", "judgment_2", "judgment_3", "original", "alt")}
    for d in at.dataframe:
        config = json.loads(d.proto.columns)
        for col in d.value.columns:
            if col in judge_names:  # a column named by a judge shows the judge's name
                assert config[col]["label"] == col
            else:
                assert config[col]["help"], f"column {col!r} has no help"
                assert "_" not in config[col]["label"], f"column {col!r} shows {config[col]['label']!r}"
    audit = agreements(at)[0]
    records = json.loads(downloads["memeval-judges-agreement-0.json"])  # machine keys, full precision
    assert len(records) == len(audit)
    assert list(records[0]) == [
        "scope", "statistic", "judges", "n_items", "estimate", "ci_low", "ci_high", "standard_error", "n_undefined",
        "detail",
    ]  # fmt: skip
    assert [r["estimate"] for r in records] == [None if pd.isna(x) else x for x in audit["estimate"]]
    csv_df = pd.read_csv(io.BytesIO(downloads["memeval-judges-agreement-0.csv"]))
    assert [labels.label(s) for s in csv_df["statistic"]] == list(audit["statistic"])
    assert "fleiss_kappa" in set(csv_df["statistic"])
    # The disagreement download holds every filtered question (all pages): 42 for v2.
    dis = json.loads(downloads["memeval-judges-disagreements.json"])
    assert len(dis) == 42 and {r["display_name"] for r in dis} == {V2}
    for name in ("accuracy-0", "ranking-0", "kendall-tau-0", "accuracy-1", "agreement-1"):
        assert f"memeval-judges-{name}.csv" in downloads and f"memeval-judges-{name}.json" in downloads


def test_seed_changes_intervals_not_estimates(qa_env: Path) -> None:
    at = run_app({"benchmark": "locomo", "run": RELIABILITY, "seed": "1", "resamples": "500"})
    assert any(c.value.startswith("Percentile bootstrap over items: seed 1, 500 resamples") for c in at.caption)
    (agree,) = agreements(at)
    cohen = stat(agree, RELIABILITY, "cohen_kappa")
    assert cohen["estimate"] == 0.8792 and cohen["ci_high"] <= 1.0


def test_without_multi_judge_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = {
        "schema_version": 1,
        "run": {"benchmark": "longmemeval-s", "system": "one-judge"},
        "questions": [
            {"benchmark": "longmemeval-s", "question_id": "q1", "answer": "x", "verdicts": [{"judge": "j", "score": 1}]}
        ],
    }
    (tmp_path / "run.json").write_text(json.dumps(run), encoding="utf-8")
    monkeypatch.setenv("MEMEVAL_RESULTS", str(tmp_path))
    at = run_app()
    assert [i.value for i in at.info] == [
        "No run in this results directory has questions graded by two or more judges."
    ]
    monkeypatch.setenv("MEMEVAL_RESULTS", str(tmp_path / "empty"))
    at = run_app()
    assert at.info[0].value.startswith("No QA benchmark results")


def test_changing_filters_and_runs_keeps_the_page_valid(qa_env: Path) -> None:
    at = run_app({"benchmark": "locomo", "page": "3"})
    (dis,) = frames(at, "failed_by")
    assert len(dis) == 13  # 63 disagreements, page 3 of 3
    at.selectbox(key="drun").set_value(RELIABILITY).run()
    assert not at.exception, [e.message for e in at.exception]
    (dis,) = frames(at, "failed_by")
    assert len(dis) == 3
    at.multiselect(key="runs").set_value([V1]).run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.query_params["run"] == V1
    (agree,) = agreements(at)
    assert set(agree["agreement_scope"]) == {V1}
    at.multiselect(key="runs").set_value([V1, RELIABILITY]).run()
    assert at.query_params["run"] == [V1, RELIABILITY]
    assert len(agreements(at)) == 2


def test_title_first_then_the_rank_chart_and_the_kappa_heatmap(qa_env: Path) -> None:
    at = run_app({"benchmark": "evolving-events"})
    order = [getattr(e, "type", "") for e in at.main][1:]
    assert order[0] == "title" and at.title[0].value == "Judges"  # nothing before the title
    assert order.index("plotly_chart") < order.index("dataframe")  # the charts answer before any table
    ranks, heatmap = specs(at)
    layout = ranks["layout"]
    assert layout["title"]["text"] == "Rank of each run under each judge"
    assert layout["xaxis"]["title"]["text"] == "Judge" and layout["yaxis"]["title"]["text"] == "Rank (1 = best)"
    low, high = layout["yaxis"]["range"]
    assert low > high  # reversed: rank 1 on top
    assert len(ranks["data"]) == 12  # one line per run
    top = next(t for t in ranks["data"] if t["name"] == "mflow (topk10_gpt54)")
    assert (top["x"], top["y"]) == (["deepeval_correctness", "directllm_correctness"], [2, 1])
    ends = {a["text"] for a in layout["annotations"]}
    assert {"1. mflow (topk5_gpt54)", "1. mflow (topk10_gpt54)"} <= ends  # every run named, with its rank
    taus = [c.value for c in at.caption if c.value.startswith("Kendall τ")]
    assert taus == [
        "Kendall τ between the judges' rankings (1 = same order): deepeval\\_correctness and "
        "directllm\\_correctness: 0.91 (95% interval 0.58 to 0.94)."
    ]
    (cells,) = heatmap["data"]
    assert cells["type"] == "heatmap"
    assert cells["x"] == cells["y"] == ["deepeval_correctness", "directllm_correctness"]
    assert cells["z"][0][1] == cells["z"][1][0] and cells["z"][0][0] is None
    assert cells["text"][0][1] == f"{cells['z'][0][1]:.2f}" and cells["texttemplate"] == "%{text}"
    assert heatmap["layout"]["title"]["text"] == "Cohen's κ between each pair of judges"
    assert any(c.value.startswith("Over the questions of all 12 runs of this panel pooled,") for c in at.caption)
    assert heatmap["layout"]["xaxis"]["title"]["text"] == heatmap["layout"]["yaxis"]["title"]["text"] == "Judge"


def test_kappa_heatmap_matches_the_agreement_table(qa_env: Path) -> None:
    at = run_app({"benchmark": "locomo"})
    audit, reliability = agreements(at)
    charts = specs(at)
    assert [c["layout"]["title"]["text"] for c in charts] == [
        "Rank of each run under each judge",
        "Cohen's κ between each pair of judges",
        "Cohen's κ between each pair of judges",
    ]
    (three,) = charts[1]["data"]
    pooled = audit[(audit["agreement_scope"] == "2 runs pooled") & (audit["statistic"] == "Cohen's κ")]
    assert len(pooled) == 3
    for row in pooled.itertuples():
        a, b = (int(j[-1]) - 1 for j in str(row.judges_compared).split(" vs "))
        assert three["z"][a][b] == three["z"][b][a] == row.estimate
    (two,) = charts[2]["data"]
    assert two["z"][0][1] == stat(reliability, RELIABILITY, "cohen_kappa")["estimate"] == 0.8792
    glance = frames(at, "statistic")
    assert [list(g.columns) for g in glance[:1]] == [["statistic", "estimate", "ci_low", "ci_high", "n_items"]]
    assert "Cohen's κ" not in set(glance[0]["statistic"])  # the heatmap has the pairs


def test_panel_headings_and_benchmark_names_in_human_words(qa_env: Path) -> None:
    at = run_app({"benchmark": "locomo"})
    headings = [h.value for h in at.subheader]
    assert headings[0] == "LoCoMo \\(without category 5\\)\\: judged by judgment\\_1, judgment\\_2, judgment\\_3"
    options = at.selectbox(key="choice-benchmark").options
    assert {"Evolving Events", "LoCoMo"} <= set(options) and not {"locomo", "evolving-events"} & set(options)
    at = run_app({"benchmark": "nope"})
    assert "benchmark=nope" in at.warning[0].value
