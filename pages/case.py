"""Case view: one case (or session turn) across every system: who passed, what it asks for, what each returned.

URL state: ``?case=<case id>`` for a single-turn case, ``?case=<session case id>/<turn index>`` for a
session turn. Default: the fixture's first single-turn case; an unknown case is named in a warning.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from memeval_core import labels
from memeval_core.explore import case_view as cv
from memeval_core.pmb.fixtures import PmbFixture
from pages import ui


def case_names(fixture: PmbFixture, keys: list[str]) -> dict[str, str]:
    """What the case picker shows for each key: the case id and its description (session turns: turn and label)."""
    names = {}
    for key in keys:
        case_id, turn = cv.parse_case_key(key)
        if turn is None:
            names[key] = f"{case_id} · {fixture.case_by_id[case_id].description}"
        else:
            names[key] = f"{case_id} · turn {turn} ({fixture.turn_by_key[(case_id, turn)].label})"
    return names


def check_case(keys: list[str]) -> None:
    """Drop a ``?case=`` the fixture does not have, with a warning naming it and the case shown instead."""
    raw = st.query_params.get("case")
    if raw is not None and raw not in set(keys):
        del st.query_params["case"]
        st.warning(
            f"The link asks for case={ui.shown_text(raw)}, which is not a case of the fixture; "
            f"showing {ui.md_escape(keys[0])} instead.",
            icon=":material/link_off:",
        )


def who_passed_table(view: cv.CaseView, stem: str) -> None:
    """One row per system: verdict, scores, what it returned per tier, latency; the download keeps every message."""
    outcomes = cv.outcome_frame(view)
    shown = outcomes.assign(
        pass_type=[
            cv.PASS_TYPE_NAMES.get(p, p) if isinstance(p, str) else labels.MISSING for p in outcomes["pass_type"]
        ],
        failures=[len(o.failures) for o in view.outcomes],
    ).rename(columns={"drift": "harness_drift"})
    if view.turn_index is None:
        shown = shown.drop(columns="harness_drift")
    ui.table(shown, key="outcomes", height="content", widths={"display_name": 140})
    ui.download_buttons(outcomes, f"{stem}-providers", "outcomes")


def expectation_section(view: cv.CaseView, stem: str) -> None:
    """What the case asks for: each belief with its text, then the other assertions, then the fixture's own form."""
    expected = cv.expected_beliefs(view)
    if len(expected):
        ui.table(expected, key="expected", height="content", widths={"id": 190, "belief": 560, "expected": 220})
        ui.download_buttons(expected, f"{stem}-expected", "expected")
    notes = cv.expectation_notes(view.expectation)
    for note in notes:
        ui.plain(note)
    if not len(expected) and not notes:
        st.caption("The case names no belief.")
    with st.expander("The assertions as the fixture states them"):
        exp = cv.expectation_frame(view.expectation)
        ui.table(exp, key="expectation", height="content")
        ui.download_buttons(exp, f"{stem}-expectation", "expectation")


def id_table(view: cv.CaseView, stem: str) -> None:
    """Every id any system returned or missed, with its text and gold mark, one column per system."""
    matrix = cv.id_matrix(view)
    names = [o.display_name for o in view.outcomes]
    widths: dict[str, Any] = {"id": 190, "belief": 320, "gold": 50, **{n: 110 for n in names}}
    ui.table(cv.marked(matrix, names), key="ids", data_columns=names, height="content", widths=widths)
    ui.download_buttons(matrix, f"{stem}-ids", "ids")


def failure_messages(view: cv.CaseView, stem: str) -> None:
    """Every failure message, in an expander."""
    failures = cv.failures_frame(view)
    if len(failures):
        with st.expander(f"Failure messages ({len(failures)})"):
            ui.table(failures, key="failures", widths={"display_name": 140, "failure": "large"})
            ui.download_buttons(failures, f"{stem}-failures", "failures")


def show_case(loaded: ui.Loaded, fixture: PmbFixture, key: str) -> None:
    """Who passed first, then the query, what the case asks for, and every returned id classified."""
    case_id, turn = cv.parse_case_key(key)
    suite = "pmb-single-turn" if turn is None else "pmb-session"
    ranked = {i.run_id: i.display_name for i in ui.suite_identities(loaded, suite)}
    view = cv.case_view_of_rows(ui.case_rows(loaded, case_id, turn), ranked, fixture, case_id, turn)
    stem = f"memeval-case-{key.replace('/', '-turn-')}"
    ui.plain(f"{view.category}: {view.description}")
    if turn is not None:
        ui.plain(f"Session turn {turn} ({view.label}); topics: {', '.join(view.topics)}")
    st.caption("Query")
    st.code(view.query, language=None, wrap_lines=True)
    if not view.outcomes:
        st.info("No loaded run reports this case.")
        return
    st.markdown(cv.who_passed(view, lambda n: f"**{ui.md_escape(n)}**"))
    who_passed_table(view, stem)
    st.subheader("What the case asks for")
    expectation_section(view, stem)
    st.subheader("What each returned")
    st.caption(cv.CLASS_LEGEND)
    id_table(view, stem)
    failure_messages(view, stem)


loaded = ui.load_current()
st.title("One case, every system")
ui.flash_sync_result()
if not loaded.identities:
    ui.empty_state(loaded)
    st.stop()
if loaded.fixture is None:
    st.warning("The PrecisionMemBench fixture was not found, so cases cannot be shown.")
    st.stop()

keys = [*cv.case_keys(loaded.fixture, "pmb-single-turn"), *cv.case_keys(loaded.fixture, "pmb-session")]
check_case(keys)
key = ui.choice(
    "Case", "case", keys, keys[0], case_names(loaded.fixture, keys), width="stretch",
    help="Single-turn cases first, then session turns. Type to search ids and descriptions.",
)  # fmt: skip
show_case(loaded, loaded.fixture, key)
