"""Case view: one case (or session turn) across every provider, side by side.

URL state: ``?case=<case id>`` for a single-turn case, ``?case=<session case id>/<turn index>`` for a
session turn. Default: the fixture's first single-turn case.
"""

from __future__ import annotations

import streamlit as st

from memeval_core.explore import case_view as cv
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.run import PmbRun
from pages import ui


def outcome_config() -> dict[str, object]:
    """Formats and help for the per-provider table."""
    return {
        "precision": st.column_config.NumberColumn("precision", format="%.4f"),
        "recall": st.column_config.NumberColumn("recall", format="%.4f"),
        "drift": st.column_config.NumberColumn("drift", format="%.4f", help="Session turns: harness drift."),
        "latency_ms": st.column_config.NumberColumn("latency_ms", format="%.2f"),
        "failures": st.column_config.TextColumn("failures", width="large"),
    }


def show_case(runs: tuple[PmbRun, ...], fixture: PmbFixture, key: str) -> None:
    """Header (category, description, query), expectation, who passed, and every returned id classified."""
    case_id, turn = cv.parse_case_key(key)
    view = cv.case_view(runs, fixture, case_id, turn)
    stem = f"memeval-case-{key.replace('/', '-turn-')}"
    ui.plain(f"{view.category}: {view.description}")
    if turn is not None:
        ui.plain(f"Session turn {turn} ({view.label}); topics: {', '.join(view.topics)}")
    st.caption("Query")
    st.code(view.query, language=None, wrap_lines=True)

    st.subheader("Expectation")
    exp = cv.expectation_frame(view.expectation)
    st.dataframe(exp, hide_index=True, height="content", key="expectation")
    ui.download_buttons(exp, f"{stem}-expectation", "expectation")

    st.subheader("Who passed")
    outcomes = cv.outcome_frame(view)
    n_pass = int(outcomes["passed"].sum())
    st.caption(f"{n_pass} of {len(outcomes)} providers passed. Rows in leaderboard rank order.")
    if turn is None:
        outcomes = outcomes.drop(columns="drift")
    st.dataframe(outcomes, hide_index=True, height="content", column_config=outcome_config(), key="outcomes")
    ui.download_buttons(outcomes, f"{stem}-providers", "outcomes")

    st.subheader("What each returned")
    st.caption(
        "One row per id any provider returned or missed, one column per provider. correct = returned and asked "
        "for; unexpected = returned, not asked for (lowers precision in the relevant tier); forbidden = returned "
        "though an assertion excludes it; missing = required, not returned; blank = neither."
    )
    matrix = cv.id_matrix(view)
    st.dataframe(ui.class_styled(matrix), hide_index=True, height="content", key="ids")
    ui.download_buttons(matrix, f"{stem}-ids", "ids")
    failures = cv.failures_frame(view)
    if len(failures):
        with st.expander(f"Failure messages ({len(failures)})"):
            st.dataframe(failures, hide_index=True, key="failures")
            ui.download_buttons(failures, f"{stem}-failures", "failures")


ui.flash_sync_result()
loaded = ui.load_current()
st.title("Case")
if not loaded.runs:
    ui.empty_state(loaded)
    st.stop()
if loaded.fixture is None:
    st.warning("The PrecisionMemBench fixture was not found, so cases cannot be shown.")
    st.stop()

keys = [*cv.case_keys(loaded.fixture, "pmb-single-turn"), *cv.case_keys(loaded.fixture, "pmb-session")]
key = st.selectbox(
    "Case",
    keys,
    help="Single-turn case ids first, then session turns as <session case id>/<turn index>. Type to search.",
    **ui.url_bound("case"),
)
ranked = (*ui.suite_runs(loaded.runs, "pmb-single-turn"), *ui.suite_runs(loaded.runs, "pmb-session"))
show_case(ranked, loaded.fixture, key)
