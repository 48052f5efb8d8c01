"""The compare page, driven through URL query parameters over the public PMB data (Streamlit AppTest)."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


def deltas(at: AppTest) -> dict[str, str]:
    return {m.label: m.delta for m in at.metric if m.delta}


def markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def unescaped(text: str) -> str:
    """Markdown text as it reads (the page escapes names from result files)."""
    return re.sub(r"\\(.)", r"\1", text)


def caption(at: AppTest, start: str) -> str:
    """The one caption that starts with ``start``."""
    (found,) = [c.value for c in at.caption if c.value.startswith(start)]
    return str(found)


def warnings(at: AppTest) -> list[str]:
    return [w.value for w in at.warning]


def walk(node: Any) -> Iterator[Any]:
    """Every element of the page in the order it is shown."""
    yield node
    for child in getattr(node, "children", {}).values():
        yield from walk(child)


def system(cell: str) -> str:
    """A system's name from its link cell (``run?run=<id>#<name>``)."""
    return cell.split("#", 1)[1]


TABLE_COLUMNS = {
    "stats-table": "pass_rate_interval",
    "wtl-table": "ties_both_passed",
    "pairs-table": "outcome",
    "case-expectation": "expected",
    "case-expectation-fixture": "assertion",
    "case-ids": "gold",
    "qa-stats-table": "accuracy_interval",
    "qa-pairs-table": "a_answer",
}


def frame(at: AppTest, table: str) -> pd.DataFrame:
    """The one shown DataFrame that has the table's distinguishing column (its machine keys, as the page built it)."""
    found = [d.value for d in at.dataframe if TABLE_COLUMNS[table] in d.value.columns]
    assert len(found) == 1, f"{table}: {len(found)} tables"
    value: pd.DataFrame = found[0]
    return value


TENURE_VS_MEM0 = (
    "**tenure** passes 77 of 77 cases, **mem0** 9 of 77: **tenure** is better by 88.3 pp "
    "(95% interval +80.5 to +94.8 pp); McNemar p < 0.001 — a real difference."
)


def test_tenure_vs_mem0_verdict_first() -> None:
    at = run_app(a="tenure", b="mem0")
    assert at.selectbox(key="run-a").value == "tenure"
    assert at.selectbox(key="run-b").value == "mem0"
    assert at.markdown[0].value == TENURE_VS_MEM0
    assert metrics(at) == {
        "A: tenure": "77 of 77",
        "B: mem0": "9 of 77",
        "Gap, A − B": "+88.3 pp",
        "A real difference?": "Yes",
    }
    assert deltas(at) == {"Gap, A − B": "95% interval +80.5 to +94.8 pp", "A real difference?": "McNemar p < 0.001"}
    assert (
        caption(at, "Where they differ:")
        == "Where they differ: 68 cases only tenure passes, 0 only mem0. Both: 9; neither: 0."
    )
    text = markdown(at)
    assert (
        "**Mean precision, A − B** (43 cases where both have a precision): +91.0 pp (95% interval +88.6 to +93.1 pp): "
        "**not tied**" in text
    )
    assert "Pass rate: **not tied** (the interval excludes zero)." in text
    assert "statistically tied**" not in text
    methods = caption(at, "Methods:")
    for phrase in ("exact McNemar", "percentile interval", "seed 20260627", "10,000 resamples", "Holm step"):
        assert phrase in methods


def test_the_verdict_precedes_the_statistics_controls() -> None:
    at = run_app(a="tenure", b="mem0")
    shown = list(walk(at.main))
    title = next(i for i, n in enumerate(shown) if n.type == "title")
    verdict = next(i for i, n in enumerate(shown) if n.type == "markdown" and n.value == TENURE_VS_MEM0)
    cards = [i for i, n in enumerate(shown) if n.type == "metric"]
    seed = next(i for i, n in enumerate(shown) if getattr(n, "key", None) == "number-seed")
    settings = next(i for i, n in enumerate(shown) if n.type == "expander")
    table = next(i for i, n in enumerate(shown) if n.type == "dataframe")
    assert title == 1  # nothing before the title
    assert title < verdict < min(cards) <= max(cards) < settings < seed < table
    assert shown[settings].label.startswith("Statistics settings")
    assert not shown[settings].proto.expanded  # the knobs stay folded unless the link sets one


def test_mem0_vs_a_mem_is_statistically_tied_on_pass_rate() -> None:
    at = run_app(a="mem0", b="a-mem")
    assert at.markdown[0].value == (
        "**mem0** passes 9 of 77 cases, **a\\-mem** 9 of 77: neither is better (McNemar p = 1)."
    )
    m = metrics(at)
    assert (m["A: mem0"], m["B: a\\-mem"], m["Gap, A − B"], m["A real difference?"]) == (
        "9 of 77",
        "9 of 77",
        "+0.0 pp",
        "No",
    )
    assert deltas(at)["A real difference?"] == "McNemar p = 1"
    assert caption(at, "Where they differ:").startswith("Where they differ: 0 cases only mem0 passes, 0 only a")
    text = markdown(at)
    assert "Pass rate: **statistically tied** (the interval includes zero)." in text
    # Precision differs by a hair, consistently: 69 cases, interval [0.00034, 0.00102] excludes zero.
    assert "(69 cases where both have a precision): +0.1 pp (95% interval +0.0 to +0.1 pp): **not tied**" in text


def test_defaults_are_leader_and_runner_up() -> None:
    at = run_app()
    assert (at.selectbox(key="run-a").value, at.selectbox(key="run-b").value) == ("tenure", "gbrain")
    assert at.number_input(key="number-seed").value == 20260627
    assert at.number_input(key="number-resamples").value == 10_000
    assert "a" not in at.query_params and "b" not in at.query_params
    assert not at.warning


def test_url_names_runs_by_run_id_or_provider_and_is_rewritten() -> None:
    at = run_app(a="retrieval-report-mem0-a2b8b8317b", b="yourmemory")
    assert at.selectbox(key="run-a").value == "mem0"
    assert at.query_params["a"] == "mem0"
    assert at.query_params["b"] == "yourmemory"
    assert not at.warning
    # Unknown names fall back to the defaults, leave the link, and say so.
    at = run_app(a="no-such-run", b="../../etc/passwd")
    assert (at.selectbox(key="run-a").value, at.selectbox(key="run-b").value) == ("tenure", "gbrain")
    assert "a" not in at.query_params and "b" not in at.query_params
    assert warnings(at) == [
        "The link asks for a=no\\-such\\-run, which is not a run of this suite; showing tenure as A instead.",
        "The link asks for b=\\.\\./\\.\\./etc/passwd, which is not a run of this suite; showing gbrain as B instead.",
    ]


@pytest.mark.parametrize(
    ("query", "named", "instead"),
    [
        ({"a": "doesnotexist", "b": "tenure"}, "a=doesnotexist", "showing gbrain as A instead"),
        ({"a": "tenure", "b": "nope"}, "b=nope", "showing gbrain as B instead"),
        ({"benchmark": "pmb-nope"}, "benchmark=pmb\\-nope", "showing PrecisionMemBench · single\\-turn instead"),
        ({"a": "tenure", "b": "mem0", "case": "no-such-case"}, "case=no\\-such\\-case", "no case is opened"),
    ],
)
def test_each_unknown_link_value_is_named_in_a_warning(query: dict[str, str], named: str, instead: str) -> None:
    at = run_app(**query)
    (warning,) = warnings(at)
    assert f"The link asks for {named}" in warning and instead in warning
    param, value = named.split("=")
    assert at.query_params.get(param) != value.replace("\\", "")
    # Never a run compared with itself: the fallback is the best run that is not the other side.
    assert at.selectbox(key="run-a").value != at.selectbox(key="run-b").value
    assert at.metric


def test_unknown_a_next_to_the_leader_compares_the_runner_up_with_it() -> None:
    at = run_app(a="doesnotexist", b="tenure")
    assert (at.selectbox(key="run-a").value, at.selectbox(key="run-b").value) == ("gbrain", "tenure")
    assert at.markdown[0].value.startswith(
        "**gbrain** passes 34 of 77 cases, **tenure** 77 of 77: **tenure** is better"
    )
    assert at.query_params["a"] == "gbrain" and at.query_params["b"] == "tenure"  # the link now says what is shown


def test_picking_b_writes_the_url() -> None:
    at = run_app(a="tenure")
    at.selectbox(key="run-b").set_value("zep").run()
    assert not at.exception
    assert at.query_params["b"] == "zep"
    assert metrics(at)["B: zep"] == "9 of 77"


def test_seed_and_method_from_the_url() -> None:
    at = run_app(a="tenure", b="mem0", seed="7", resamples="2000", method="bca")
    methods = caption(at, "Methods:")
    assert "seed 7" in methods and "2,000 resamples" in methods and "BCa" in methods
    assert at.expander[0].proto.expanded  # the link sets the knobs, so they are shown
    # McNemar does not depend on the resampling.
    assert deltas(at)["A real difference?"] == "McNemar p < 0.001"
    at = run_app(a="tenure", b="mem0", method="magic")
    assert any("method=magic" in w for w in warnings(at))


def test_per_category_statistics_with_holm(downloads: dict[str, bytes]) -> None:
    at = run_app(a="tenure", b="mem0")
    df = frame(at, "stats-table")
    assert list(df["category"][:3]) == ["all cases", "Alias resolution", "Scope disambiguation"]
    assert len(df) == 14
    assert "pass_rate_ci_low" not in df.columns  # shown as one interval column
    alias = df[df["category"] == "Alias resolution"].iloc[0]
    assert (alias["n"], alias["b"], alias["c"]) == (23, 23, 0)
    assert alias["mcnemar_p"] == pytest.approx(2.0**-22)
    assert alias["pass_rate_interval"] == "+100.0 to +100.0 pp"
    cats = df.iloc[1:]
    assert (cats["holm_p"] >= cats["mcnemar_p"]).all()
    assert alias["holm_p"] == pytest.approx(13 * 2.0**-22)
    assert pd.isna(df["holm_p"].iloc[0])
    # The download keeps the machine columns and full precision.
    csv = pd.read_csv(io.BytesIO(downloads["memeval-compare-stats-tenure-vs-mem0.csv"]))
    assert list(csv.columns[:3]) == ["scope", "n", "both_passed"] and "pass_rate_ci_low" in csv.columns
    assert csv["holm_p"].iloc[1] == pytest.approx(13 * 2.0**-22)


def test_win_tie_loss_against_a() -> None:
    at = run_app(a="tenure", b="mem0")
    df = frame(at, "wtl-table")
    assert len(df) == 12
    assert "chosen" not in df.columns and "run_id" not in df.columns
    by = df.assign(display_name=[system(v) for v in df["display_name"]]).set_index("display_name")
    mem0 = by.loc["mem0"]
    assert (mem0["a_wins"], mem0["a_losses"], mem0["ties_both_passed"], mem0["ties_both_failed"]) == (68, 0, 9, 0)
    assert (by.loc["gbrain", "a_wins"], by.loc["gbrain", "a_losses"]) == (43, 0)
    assert df["display_name"].iloc[0].startswith("run?run=")  # each system opens its run page


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


def test_opened_case_shows_beliefs_with_text_and_classified_ids(downloads: dict[str, bytes]) -> None:
    at = run_app(a="tenure", b="mem0", case="alias-kube-resolves")
    texts = [t.value for t in at.text]
    assert "Alias resolution: Alias 'kube' drives text search retrieval" in texts
    assert "passed (active pass) · precision 100.0% · recall 100.0% · 41 ms" in texts
    assert "failed · precision 11.1% · recall 100.0% · 82 ms" in texts
    assert (
        "Returned: pinned facts: 2 (2 unexpected) · relevant beliefs: 2 (2 correct) · open questions: 1 (1 unexpected)"
        in texts
    )
    assert "how does kube schedule pods across our CI pipeline nodes?" in [c.value for c in at.code]
    expected = frame(at, "case-expectation").set_index("id")
    assert list(expected.index) == ["b-ci-gha-entity", "b-kubernetes-entity"]
    assert expected.loc["b-ci-gha-entity", "expected"] == "gold; relevant: only these"
    assert expected.loc["b-kubernetes-entity", "belief"].startswith("Deploys services to a Kubernetes cluster on EKS.")
    exp = frame(at, "case-expectation-fixture")
    assert exp[exp["assertion"] == "shouldOnlyInclude"]["value"].iloc[0] == "b-ci-gha-entity, b-kubernetes-entity"
    ids = frame(at, "case-ids")
    assert list(ids.columns) == ["tier", "id", "belief", "gold", "tenure", "mem0"]
    assert ids["belief"].str.len().min() > 10  # every id shown with its text
    row = ids[(ids["tier"] == "Relevant beliefs") & (ids["id"] == "b-ci-gha-entity")].iloc[0]
    assert (row["tenure"], row["mem0"], bool(row["gold"])) == ("✓ correct", "✓ correct", True)
    noise = ids[(ids["tier"] == "Relevant beliefs") & (ids["id"] == "b-redis-code")].iloc[0]
    assert (noise["tenure"], noise["mem0"], bool(noise["gold"])) == ("", "+ unexpected", False)
    failures = next(c.value for c in at.code if c.value.startswith("unexpected belief"))
    assert len(failures.splitlines()) == 16
    assert "unexpected belief in relevantBeliefs: b-redis-code" in failures
    assert "16 failure messages" in [e.label for e in at.expander]
    records = json.loads(downloads["memeval-case-alias-kube-resolves-ids.json"])
    assert len(records) == len(ids)
    assert {r["tenure"] for r in records} <= {"correct", "unexpected", "forbidden", "missing", ""}


def test_session_comparison_pairs_turns() -> None:
    at = run_app(benchmark="pmb-session", a="tenure", b="gbrain", case=f"{MAIN}/3")
    assert (
        caption(at, "Where they differ:")
        == "Where they differ: 11 cases only tenure passes, 0 only gbrain. Both: 1; neither: 0."
    )
    df = frame(at, "pairs-table")
    assert len(df) == 12
    assert "turn_index" in df.columns
    assert "implicit continuation" in set(df["label"]) and not any("_" in v for v in df["label"])
    texts = [t.value for t in at.text]
    # gbrain's relevant tier is empty but it returned the pinned facts: it did not return nothing.
    summary = "pinned facts: 2 (2 unexpected) · relevant beliefs: nothing (3 missing) · open questions: not recorded"
    assert f"Returned: {summary}" in texts
    assert not any("returned nothing" in t for t in texts)


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
    assert [unescaped(o) for o in at.radio(key="choice-benchmark").options] == [
        "PrecisionMemBench · single-turn",
        "PrecisionMemBench · session",
        "LoCoMo",
        "LongMemEval-S",
        "LongMemEval (oracle)",
        "Evolving Events",
    ]
    # The PMB default is unchanged with QA runs present.
    assert (at.selectbox(key="run-a").value, at.selectbox(key="run-b").value) == ("tenure", "gbrain")
    at = run_app(benchmark="locomo")
    assert at.radio(key="choice-benchmark").value == "locomo" and at.query_params["benchmark"] == "locomo"


def test_locomo_memobase_0710_vs_0503(all_data: Path, downloads: dict[str, bytes]) -> None:
    at = run_app(benchmark="locomo", a=MEMOBASE_0710, b=MEMOBASE_0503)
    assert (at.selectbox(key="qa-run-a").value, at.selectbox(key="qa-run-b").value) == (MEMOBASE_0710, MEMOBASE_0503)
    assert unescaped(at.markdown[0].value) == (
        f"**{MEMOBASE_0710}** answers 1,167 of 1,540 questions correctly, **{MEMOBASE_0503}** 1,092 of 1,540: "
        f"**{MEMOBASE_0710}** is better by 4.9 pp (95% interval +2.5 to +7.2 pp); "
        "McNemar p < 0.001 — a real difference."
    )
    assert {unescaped(k): v for k, v in metrics(at).items()} == {
        f"A: {MEMOBASE_0710}": "1,167 of 1,540",
        f"B: {MEMOBASE_0503}": "1,092 of 1,540",
        "Gap, A − B": "+4.9 pp",
        "A real difference?": "Yes",
    }
    assert unescaped(caption(at, "Where they differ:")) == (
        f"Where they differ: 206 questions only {MEMOBASE_0710} answers correctly, 131 only {MEMOBASE_0503}. "
        "Both: 961; neither: 242."
    )
    text = markdown(at)
    assert (
        "**Mean score, A − B** (the leaderboard's accuracy): +4.9 pp (95% interval +2.5 to +7.2 pp): **not tied**"
        in text
    )
    assert "Share correct: **not tied**" in text
    methods = caption(at, "Methods:")
    for phrase in ("exact McNemar", "percentile interval", "seed 20260627", "10,000 resamples", "≥ 0.6"):
        assert phrase in methods
    stats = frame(at, "qa-stats-table")
    assert list(stats["category"]) == ["all questions", "1 multi_hop", "2 temporal", "3 open_domain", "4 single_hop"]
    open_domain = stats[stats["category"] == "3 open_domain"].iloc[0]
    assert (open_domain["qa_b"], open_domain["qa_c"], bool(open_domain["accuracy_tied"])) == (6, 11, True)
    pairs = frame(at, "qa-pairs-table")
    assert len(pairs) == 1540
    assert any(c.value.startswith("1,540 of 1,540 paired questions shown.") for c in at.caption)
    csv = pd.read_csv(
        io.BytesIO(downloads[f"memeval-compare-stats-{MEMOBASE_0710}-vs-{MEMOBASE_0503}.csv"]), dtype={"category": str}
    )
    assert list(csv["b"]) == list(stats["qa_b"])
    assert list(csv["category"].fillna("")) == ["", "1", "2", "3", "4"]  # the raw codes stay in the download


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
    assert list(csv.columns) == [pairs.columns[0], "category", *pairs.columns[1:]]
    texts = [t.value for t in at.text]
    assert "conv-26-q1 · category 2 (temporal)" in texts
    assert texts.count("correct · score 100.0%") == 2
    codes = [c.value for c in at.code]
    assert "When did Melanie paint a sunrise?" in codes
    assert codes.count("2022") == 3  # gold, A's answer, B's answer
    verdicts = [d.value for d in at.dataframe if "verdict_rescaled" in d.value.columns]
    assert len(verdicts) == 2
    assert all(list(v["judge"]) == ["llm_score"] and list(v["verdict_passes"]) == [True] for v in verdicts)
    records = json.loads(downloads["memeval-question-conv-26-q1-verdicts.json"])
    assert [r["run"] for r in records] == [MEMOBASE_0710, MEMOBASE_0503]
    assert {"score", "rescaled", "passes"} <= set(records[0])  # the download keeps the machine names


def test_qa_unknown_run_and_question_are_named(all_data: Path) -> None:
    at = run_app(benchmark="locomo", a="nobody", case="conv-99-q99")
    assert (at.selectbox(key="qa-run-a").value, at.selectbox(key="qa-run-b").value) == ("mem0", "zep")
    assert warnings(at) == [
        "The link asks for a=nobody, which is not a run of this benchmark; showing mem0 as A instead.",
        "The link asks for case=conv\\-99\\-q99, which is not a question both runs scored; no case is opened.",
    ]


def test_longmemeval_s_cognitive_memory_vs_naive_rag_is_tied(all_data: Path) -> None:
    at = run_app(benchmark="longmemeval-s", a="cognitive_memory", b="naive_rag_results-89250a78d3")
    assert at.selectbox(key="qa-run-b").value == "naive_rag"
    # The run id resolves to naive_rag, which is also the default B, so the link drops it.
    assert "b" not in at.query_params
    assert unescaped(at.markdown[0].value) == (
        "**cognitive_memory** answers 363 of 500 questions correctly, **naive_rag** 350 of 500: **cognitive_memory** "
        "is ahead by 2.6 pp (95% interval -2.0 to +7.0 pp), but McNemar p = 0.291 — not a real difference."
    )
    assert {unescaped(k): v for k, v in metrics(at).items()} == {
        "A: cognitive_memory": "363 of 500",
        "B: naive_rag": "350 of 500",
        "Gap, A − B": "+2.6 pp",
        "A real difference?": "No",
    }
    assert deltas(at)["A real difference?"] == "McNemar p = 0.291"
    assert unescaped(caption(at, "Where they differ:")) == (
        "Where they differ: 71 questions only cognitive_memory answers correctly, 58 only naive_rag. "
        "Both: 292; neither: 79."
    )
    assert "Share correct: **statistically tied** (the interval includes zero)." in markdown(at)
    stats = frame(at, "qa-stats-table")
    ssa = stats[stats["category"] == "single-session-assistant"].iloc[0]
    assert (ssa["n"], ssa["qa_b"], ssa["qa_c"]) == (56, 1, 13)
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
