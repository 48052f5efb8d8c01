"""The compare page, driven through URL query parameters over the public PMB data (Streamlit AppTest)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import run_page

pytestmark = pytest.mark.usefixtures("pmb_env")
PAGE = "pages/compare.py"
MAIN = "session-drift-noise-10-turns-implicit-redis"


def run_app(**query: str) -> AppTest:
    """The compare page after its first run with the given URL query parameters (as when a link is opened)."""
    return run_page(PAGE, **query)


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
    "qa-stats-table": "accuracy_ci_low",
    "qa-pairs-table": "a_answer",
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


# --- QA benchmarks: MEMEVAL_RESULTS=../shared/data holds PMB and QA runs --------------------------------

MEMOBASE_0710 = "memobase (memobase_eval_0710_3000)"
MEMOBASE_0503 = "memobase (memobase_eval_0503_3000)"


@pytest.fixture
def all_data(shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The app reads the whole shared data folder: PMB reports plus LoCoMo and LongMemEval runs."""
    for sub in ("memobase", "locomo", "cognitive-memory-benchmarks"):
        if not (shared_data / sub).is_dir():
            pytest.skip(f"{shared_data / sub} is absent; it holds the public QA runs these tests compare")
    monkeypatch.setenv("MEMEVAL_RESULTS", str(shared_data))
    return shared_data


def test_qa_benchmarks_are_listed_next_to_pmb(all_data: Path) -> None:
    at = run_app()
    assert at.radio(key="benchmark").options == [
        "pmb-single-turn",
        "pmb-session",
        "locomo",
        "longmemeval-s",
        "longmemeval-oracle",
        "evolving-events",
    ]
    # The PMB default is unchanged with QA runs present.
    assert (at.selectbox(key="run-a").value, at.selectbox(key="run-b").value) == ("tenure", "gbrain")


def test_locomo_memobase_0710_vs_0503(all_data: Path, downloads: dict[str, bytes]) -> None:
    at = run_app(benchmark="locomo", a=MEMOBASE_0710, b=MEMOBASE_0503)
    assert (at.selectbox(key="qa-run-a").value, at.selectbox(key="qa-run-b").value) == (MEMOBASE_0710, MEMOBASE_0503)
    assert metrics(at) == {
        "A correct, B wrong": "206",
        "B correct, A wrong": "131",
        "both correct": "961",
        "both wrong": "242",
        "McNemar p (exact)": "5.2e-05",
    }
    text = markdown(at)
    assert "p = 5.2e-05 on 206 + 131 discordant of 1540 paired questions: significant at α = 0.05" in text
    assert "**Share correct, A − B:** +0.0487, 95% CI [+0.0253, +0.0721]: **not tied**" in text
    assert (
        "**Mean score, A − B** (the leaderboard's accuracy): +0.0487, 95% CI [+0.0253, +0.0721]: **not tied**" in text
    )
    methods = next(c.value for c in at.caption if c.value.startswith("Methods:"))
    for phrase in ("exact McNemar", "percentile interval", "seed 20260627", "10,000 resamples", "≥ 0.6"):
        assert phrase in methods
    stats = frame(at, "qa-stats-table")
    assert list(stats["scope"]) == ["all questions", "1 multi_hop", "2 temporal", "3 open_domain", "4 single_hop"]
    open_domain = stats[stats["category"] == "3"].iloc[0]
    assert (open_domain["b"], open_domain["c"], bool(open_domain["accuracy_tied"])) == (6, 11, True)
    pairs = frame(at, "qa-pairs-table")
    assert len(pairs) == 1540
    assert any(c.value.startswith("1540 of 1540 paired questions shown.") for c in at.caption)
    csv = pd.read_csv(io.BytesIO(downloads[f"memeval-compare-stats-{MEMOBASE_0710}-vs-{MEMOBASE_0503}.csv"]))
    assert list(csv["b"]) == list(stats["b"])


def test_locomo_filters_and_opened_question(all_data: Path, downloads: dict[str, bytes]) -> None:
    at = run_app(benchmark="locomo", a=MEMOBASE_0710, b=MEMOBASE_0503, filter="B wins", q="conv-26", case="conv-26-q1")
    pairs = frame(at, "qa-pairs-table")
    assert len(pairs) > 0
    assert set(pairs["outcome"]) == {"B wins"}
    assert all(qid.startswith("conv-26-") for qid in pairs["question_id"])
    csv = pd.read_csv(
        io.BytesIO(downloads[f"memeval-compare-questions-{MEMOBASE_0710}-vs-{MEMOBASE_0503}.csv"]),
        keep_default_na=False,
    )
    assert list(csv["question_id"]) == list(pairs["question_id"])
    texts = [t.value for t in at.text]
    assert "conv-26-q1 · category 2 (temporal)" in texts
    assert f"{MEMOBASE_0710}: correct; score 1.0000" in texts
    assert f"{MEMOBASE_0503}: correct; score 1.0000" in texts
    codes = [c.value for c in at.code]
    assert "When did Melanie paint a sunrise?" in codes
    assert codes.count("2022") == 3  # gold, A's answer, B's answer
    verdicts = [d.value for d in at.dataframe if "rescaled" in d.value.columns]
    assert len(verdicts) == 2
    assert all(list(v["judge"]) == ["llm_score"] and list(v["passes"]) == [True] for v in verdicts)
    records = json.loads(downloads["memeval-question-conv-26-q1-verdicts.json"])
    assert [r["run"] for r in records] == [MEMOBASE_0710, MEMOBASE_0503]


def test_longmemeval_s_cognitive_memory_vs_naive_rag_is_tied(all_data: Path) -> None:
    at = run_app(benchmark="longmemeval-s", a="cognitive_memory", b="naive_rag_results-89250a78d3")
    assert at.selectbox(key="qa-run-b").value == "naive_rag"
    # The run id resolves to naive_rag, which is also the default B, so the link drops it.
    assert "b" not in at.query_params
    assert metrics(at) == {
        "A correct, B wrong": "71",
        "B correct, A wrong": "58",
        "both correct": "292",
        "both wrong": "79",
        "McNemar p (exact)": "0.291",
    }
    text = markdown(at)
    assert "p = 0.291 on 71 + 58 discordant of 500 paired questions: not significant at α = 0.05" in text
    assert "**Share correct, A − B:** +0.0260, 95% CI [-0.0200, +0.0700]: **statistically tied**" in text
    stats = frame(at, "qa-stats-table")
    ssa = stats[stats["category"] == "single-session-assistant"].iloc[0]
    assert (ssa["n"], ssa["b"], ssa["c"]) == (56, 1, 13)
    assert ssa["mcnemar_p"] == pytest.approx(30 / 2**14)
    assert ssa["holm_p"] == pytest.approx(5 * 30 / 2**14)
    assert len(frame(at, "qa-pairs-table")) == 500


def test_locomo_default_pair_and_category_5_refusal(all_data: Path) -> None:
    at = run_app(benchmark="locomo")
    # Publishable first, then accuracy; supermemory (category 5 scored) has no comparable partner.
    assert (at.selectbox(key="qa-run-a").value, at.selectbox(key="qa-run-b").value) == ("mem0", "zep")
    assert "a" not in at.query_params and "b" not in at.query_params
    at = run_app(benchmark="locomo", a="supermemory", b="zep")
    assert [e.value for e in at.error] == ["These runs cannot be compared:"]
    message = next(c.value for c in at.code if "cannot pair" in c.value)
    assert "supermemory scores category 5 (adversarial) and zep does not score it" in message
    assert not at.metric


@pytest.mark.parametrize(
    ("param", "value"), [("seed", "1e309"), ("resamples", "inf"), ("seed", "-5"), ("resamples", "x")]
)
def test_bad_numbers_in_the_link_are_ignored_with_a_note(param: str, value: str) -> None:
    at = run_app(**{param: value})
    assert any(f"Ignored the link's {param}=" in w.value and "The default" in w.value for w in at.warning)
    assert param not in at.query_params
