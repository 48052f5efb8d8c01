"""The Judges and QA details pages with re-judged runs (AppTest over two memobase runs re-judged by the stand-in)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from memeval_core import labels
from memeval_core.judge.lineup import PUBLISHED
from pages import ui
from tests.apptest import run_page
from tests.judge_standin import KEY, MODEL, StandIn, rejudged_results

JUDGE = f"{MODEL}/mem0-locomo"
RUBRIC = f"{MODEL}/rubric-0-5"
V0710 = "memobase (memobase_eval_0710_3000)"
V0503 = "memobase (memobase_eval_0503_3000)"


@pytest.fixture(scope="module")
def rejudged(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as mp, StandIn() as s:
        mp.setenv("OPENAI_API_KEY", KEY)
        mp.setenv("MEMEVAL_CACHE_DIR", "off")
        yield rejudged_results(shared_data, tmp_path_factory.mktemp("rejudged-app"), s.url)


@pytest.fixture
def app_env(rejudged: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMEVAL_RESULTS", str(rejudged))
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", "off")
    monkeypatch.delenv("MEMEVAL_DATASETS", raising=False)
    return rejudged


def run(page: str, **query: str) -> AppTest:
    return run_page(page, timeout=300, **query)


def frame(at: AppTest, column: str) -> pd.DataFrame:
    (found,) = [d.value for d in at.dataframe if column in d.value.columns]
    return found


def specs(at: AppTest) -> list[dict[str, Any]]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def test_the_judges_page_adds_the_new_judges_everywhere(app_env: Path) -> None:
    at = run("pages/judges.py", benchmark="locomo")
    panel_judges = ", ".join(sorted(("llm_score", JUDGE, RUBRIC)))
    title = ui.md_escape(f"LoCoMo (without category 5): judged by {panel_judges}")
    assert next(s.value for s in at.subheader) == title
    # Accuracy per judge: both runs under all three judges.
    acc = frame(at, "judge_pass_rate")
    assert sorted(set(acc["judge"])) == sorted(("llm_score", JUDGE, RUBRIC))
    assert len(acc) == 6
    # Agreement: Cohen's kappa for every pair with the new judges, Fleiss and Krippendorff over all three.
    agree = frame(at, "detail")
    pooled = agree[agree["agreement_scope"] == "2 runs pooled"]
    cohen = set(pooled[pooled["statistic"] == labels.label("cohen_kappa")]["judges_compared"])
    assert cohen == {f"{a} vs {b}" for a, b in [("llm_score", JUDGE), ("llm_score", RUBRIC), (JUDGE, RUBRIC)]}
    for stat in ("fleiss_kappa", "krippendorff_alpha_nominal", "krippendorff_alpha_interval"):
        assert (pooled["statistic"] == labels.label(stat)).sum() == 1
    # Rank per judge (the panel's chart) and the judge-sensitivity chart with "as published" first.
    xs = [tuple(s["data"][0]["x"]) for s in specs(at) if s["data"][0].get("type") == "scatter"]
    assert tuple(sorted(("llm_score", JUDGE, RUBRIC))) in xs
    assert (PUBLISHED, JUDGE, RUBRIC) in xs
    assert any("Kendall τ between the rankings of these 2 runs" in c.value for c in at.caption)


def test_the_sensitivity_table_lists_each_run_under_each_judge_and_the_spread(app_env: Path) -> None:
    at = run("pages/judges.py", benchmark="locomo")
    table = frame(at, "spread")
    headers = [labels.judge_header(j) for j in (PUBLISHED, JUDGE, RUBRIC)]
    assert list(table.columns) == ["display_name", *headers, "spread"]
    assert [str(n).rsplit("#", 1)[-1] for n in table["display_name"]] == [V0710, V0503]
    for _, row in table.iterrows():
        values = [row[h] for h in headers]
        assert row["spread"] == pytest.approx(max(values) - min(values))
    assert table[headers[0]].round(4).tolist() == [0.7578, 0.7091]  # as published


def test_the_qa_page_ranks_by_any_judge(app_env: Path) -> None:
    at = run("pages/qa_leaderboard.py", benchmark="locomo", judge=JUDGE)
    assert at.selectbox(key="choice-judge").value == JUDGE
    table = frame(at, "ranked_accuracy")
    assert table["ranked_accuracy"].tolist() == table[labels.judge_header(JUDGE)].tolist()
    assert table["ranked_accuracy"].is_monotonic_decreasing and table["rank"].tolist() == [1, 2]
    assert len(table) == 2  # the judged files are folded into their runs, not listed again
    at = run("pages/qa_leaderboard.py", benchmark="locomo", judge="majority")
    table = frame(at, "ranked_accuracy")
    assert table["ranked_accuracy"].tolist() == table["majority_accuracy"].tolist()
    at = run("pages/qa_leaderboard.py", benchmark="locomo")
    assert "ranked_accuracy" not in frame(at, "accuracy").columns
    at = run("pages/qa_leaderboard.py", benchmark="locomo", judge="nobody")
    assert any("nobody" in w.value for w in at.warning)
