"""Session drift timeline: per provider and turn, two drift measures, noise, verdict and latency.

**Harness drift** (what PMB reports): ``1 - precision``, and 0 when the relevant tier is empty. An
empty answer is *not* isolation: such turns carry ``returned_nothing=True`` and a ``status`` that
says whether a required belief went missing, never "no drift".

**Topic drift** (the benchmark README's definition: "the fraction of retrieved non-pinned beliefs
that belong to topics introduced in drift turns"), made precise here:

- *Attribution*: a belief belongs to the topics of every session turn whose expectation names it
  as wanted: ``relevantBeliefs.shouldOnlyInclude`` / ``mustInclude`` / ``shouldInclude``,
  ``pinnedFacts.mustInclude``, ``openQuestions.mustInclude``, or ``createBeliefAtTurn._id``. Ids
  named only as unwanted (``noiseCheck.mustNotSurface``, ``mustExclude``) are *not* attributed to
  that turn: a noise list names beliefs of other topics (turn 9's list names the Kubernetes, React,
  ... beliefs while its topic is Redis). All session cases of the fixture are used, in order,
  because they run against one store (the cross-session case relies on a belief the first case
  created); attribution is a property of the belief, not of the moment.
- *Topics introduced in drift turns* ``D``: the topics of turns labelled ``drift`` that are not
  topics of an earlier turn (fixture order) labelled otherwise.
- On turn ``t`` with topics ``T_t``, the *retrieved non-pinned beliefs* ``N`` are the relevant-tier
  ids that are not pinned beliefs of the harness user. A belief of ``N`` with attributed topics
  ``A`` is a **drift belief** when ``A`` is non-empty, ``A ⊆ D`` and ``A ∩ T_t = ∅`` (a belief of
  the turn's own topic, or of any topic outside ``D``, is never drift); it is **unattributed** when
  ``A`` is empty (no turn names it), counted apart in ``n_unattributed``.
- ``topic_drift = |drift beliefs| / |N|``; None when ``N`` is empty (nothing retrieved: no fraction).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from memeval_core.pmb.fixtures import HARNESS_USER, PmbFixture
from memeval_core.pmb.models import SessionTurn
from memeval_core.pmb.run import PmbRun
from memeval_core.pmb.session import gold_turn

DRIFT_LABEL = "drift"

STATUS_DRIFT = "drift"
STATUS_CLEAN = "no drift"
STATUS_EMPTY_MISSING = "returned nothing: required belief missing"
STATUS_EMPTY_OK = "returned nothing: nothing required"

TIMELINE_COLUMNS = [
    "display_name",
    "run_id",
    "case_id",
    "turn_index",
    "label",
    "topics",
    "is_drift_turn",
    "passed",
    "precision",
    "harness_drift",
    "returned_nothing",
    "status",
    "noise_ids",
    "n_returned",
    "n_non_pinned",
    "n_drift_beliefs",
    "n_unattributed",
    "drift_belief_ids",
    "unattributed_ids",
    "topic_drift",
    "latency_ms",
]


@dataclass(frozen=True)
class TopicMap:
    """Which topics each belief belongs to, and which topics drift turns introduced."""

    belief_topics: dict[str, frozenset[str]]
    """Belief id -> topics of the turns whose expectations name it as wanted."""
    drift_topics: frozenset[str]
    """Topics introduced in drift turns (not topics of an earlier non-drift turn)."""


def _wanted_ids(turn: SessionTurn) -> list[str]:
    e = turn.expect
    ids: list[str] = []
    if e.relevant_beliefs is not None:
        ids += e.relevant_beliefs.should_only_include or []
        ids += e.relevant_beliefs.must_include + e.relevant_beliefs.should_include
    if e.pinned_facts is not None:
        ids += e.pinned_facts.must_include
    if e.open_questions is not None:
        ids += e.open_questions.must_include
    created = turn.create_belief_at_turn
    if created is not None and isinstance(created.get("_id"), str):
        ids.append(created["_id"])
    return ids


def topic_map(fixture: PmbFixture) -> TopicMap:
    """Attribution of beliefs to turn topics and the drift topics ``D`` (see the module docstring)."""
    topics: dict[str, set[str]] = {}
    earlier_non_drift: set[str] = set()
    drift: set[str] = set()
    for session in fixture.session_cases:
        for turn in session.turns:
            for i in _wanted_ids(turn):
                topics.setdefault(i, set()).update(turn.topics)
            if turn.label == DRIFT_LABEL:
                drift.update(t for t in turn.topics if t not in earlier_non_drift)
            else:
                earlier_non_drift.update(turn.topics)
    return TopicMap({k: frozenset(v) for k, v in topics.items()}, frozenset(drift))


def drift_turns(fixture: PmbFixture) -> pd.DataFrame:
    """The turns labelled drift and the topics they name.

    Columns: ``case_id, turn_index, topics, introduced`` (the topics of the turn that are in ``D``).
    """
    tm = topic_map(fixture)
    rows = [
        {
            "case_id": s.case_id,
            "turn_index": t.turn_index,
            "topics": tuple(t.topics),
            "introduced": tuple(x for x in t.topics if x in tm.drift_topics),
        }
        for s in fixture.session_cases
        for t in s.turns
        if t.label == DRIFT_LABEL
    ]
    return pd.DataFrame(rows, columns=["case_id", "turn_index", "topics", "introduced"])


def _is_harness_pinned(fixture: PmbFixture, belief_id: str) -> bool:
    b = fixture.belief_by_id.get(belief_id)
    return b is not None and b.pinned and b.user_id == HARNESS_USER


def drift_timeline(runs: Sequence[PmbRun], fixture: PmbFixture) -> pd.DataFrame:
    """One row per session run and turn, in run order then (fixture case order, turn index).

    Single-turn runs are ignored. Columns: ``display_name, run_id, case_id, turn_index, label,
    topics, is_drift_turn, passed, precision, harness_drift, returned_nothing, status`` (``no
    drift`` / ``drift`` / ``returned nothing: required belief missing`` / ``returned nothing:
    nothing required``), ``noise_ids, n_returned, n_non_pinned, n_drift_beliefs, n_unattributed,
    drift_belief_ids, unattributed_ids, topic_drift, latency_ms``.
    """
    tm = topic_map(fixture)
    case_rank = {s.case_id: i for i, s in enumerate(fixture.session_cases)}
    rows = []
    for run in runs:
        if run.identity.benchmark != "pmb-session":
            continue
        ordered = sorted(run.cases, key=lambda c: (case_rank.get(c.case_id, len(case_rank)), c.turn_index or 0))
        for c in ordered:
            if c.turn_index is None:
                continue
            turn = fixture.turn_by_key.get((c.case_id, c.turn_index))
            if turn is None:
                raise ValueError(
                    f"{run.identity.source}: turn ({c.case_id!r}, {c.turn_index}) is not in the session fixture"
                )
            own = set(turn.topics)
            non_pinned = [i for i in c.relevant if not _is_harness_pinned(fixture, i)]
            drift_ids = tuple(
                i for i in non_pinned if (a := tm.belief_topics.get(i)) and a <= tm.drift_topics and not (a & own)
            )
            unattributed = tuple(i for i in non_pinned if i not in tm.belief_topics)
            if c.returned_nothing:
                status = STATUS_EMPTY_MISSING if gold_turn(turn.expect.relevant_beliefs) else STATUS_EMPTY_OK
            else:
                status = STATUS_CLEAN if c.drift == 0 else STATUS_DRIFT
            rows.append(
                {
                    "display_name": run.identity.display_name,
                    "run_id": run.identity.run_id,
                    "case_id": c.case_id,
                    "turn_index": c.turn_index,
                    "label": turn.label,
                    "topics": tuple(turn.topics),
                    "is_drift_turn": turn.label == DRIFT_LABEL,
                    "passed": c.passed,
                    "precision": c.precision,
                    "harness_drift": c.drift,
                    "returned_nothing": c.returned_nothing,
                    "status": status,
                    "noise_ids": c.noise_ids,
                    "n_returned": len(c.relevant),
                    "n_non_pinned": len(non_pinned),
                    "n_drift_beliefs": len(drift_ids),
                    "n_unattributed": len(unattributed),
                    "drift_belief_ids": drift_ids,
                    "unattributed_ids": unattributed,
                    "topic_drift": len(drift_ids) / len(non_pinned) if non_pinned else None,
                    "latency_ms": c.latency_ms,
                }
            )
    frame = pd.DataFrame(rows, columns=TIMELINE_COLUMNS)
    return frame.astype(dict.fromkeys(("precision", "harness_drift", "topic_drift", "latency_ms"), "float64"))


def session_latency(runs: Sequence[PmbRun]) -> pd.DataFrame:
    """Each session run's p50 next to the single-turn p50 of the run with the same display name.

    ``ratio = session_p50_ms / single_turn_p50_ms`` (nearest-rank medians); NaN when there is no
    single-turn run of that name. Columns: ``display_name, session_run_id, single_turn_run_id,
    session_p50_ms, single_turn_p50_ms, ratio``.
    """
    single = {r.identity.display_name: r for r in runs if r.identity.benchmark == "pmb-single-turn"}
    rows = []
    for run in runs:
        if run.identity.benchmark != "pmb-session":
            continue
        s_p50 = run.aggregate.latency.p50_ms
        other = single.get(run.identity.display_name)
        o_p50 = None if other is None else other.aggregate.latency.p50_ms
        rows.append(
            {
                "display_name": run.identity.display_name,
                "session_run_id": run.identity.run_id,
                "single_turn_run_id": None if other is None else other.identity.run_id,
                "session_p50_ms": s_p50,
                "single_turn_p50_ms": o_p50,
                "ratio": s_p50 / o_p50 if s_p50 is not None and o_p50 else None,
            }
        )
    frame = pd.DataFrame(
        rows,
        columns=[
            "display_name",
            "session_run_id",
            "single_turn_run_id",
            "session_p50_ms",
            "single_turn_p50_ms",
            "ratio",
        ],
    )
    return frame.astype(dict.fromkeys(("session_p50_ms", "single_turn_p50_ms", "ratio"), "float64"))


def turn_labels(fixture: PmbFixture) -> dict[tuple[str, int], str]:
    """Axis label of every session turn, in fixture order: ``<turn index> · <label>``.

    Turns of the second and later session cases get `` (case k)`` appended (``k`` = 1-based
    position of the case in the fixture), so every label is unique on a shared axis.
    """
    out: dict[tuple[str, int], str] = {}
    for k, session in enumerate(fixture.session_cases, start=1):
        suffix = "" if k == 1 else f" (case {k})"
        for turn in session.turns:
            out[(session.case_id, turn.turn_index)] = f"{turn.turn_index} · {turn.label}{suffix}"
    return out


def turn_latency(runs: Sequence[PmbRun], fixture: PmbFixture) -> pd.DataFrame:
    """Per session run and turn: latency next to the run's single-turn p50 (same display name).

    ``ratio = latency_ms / single_turn_p50_ms``: how many times slower the turn was than the
    provider's typical single-turn retrieval; NaN without a single-turn partner. Rows in
    :func:`drift_timeline` order. Columns: ``display_name, case_id, turn_index, turn, latency_ms,
    single_turn_p50_ms, ratio`` (``turn`` = :func:`turn_labels` label).
    """
    timeline = label_turns(drift_timeline(runs, fixture), fixture)
    p50 = session_latency(runs).set_index("display_name")["single_turn_p50_ms"]
    frame = timeline[["display_name", "case_id", "turn_index", "turn", "latency_ms"]].copy()
    frame["single_turn_p50_ms"] = frame["display_name"].map(p50).astype("float64")
    frame["ratio"] = frame["latency_ms"] / frame["single_turn_p50_ms"]
    return frame


def label_turns(frame: pd.DataFrame, fixture: PmbFixture) -> pd.DataFrame:
    """``frame`` (with ``case_id`` and ``turn_index`` columns) with a ``turn`` axis label inserted after ``turn_index``.

    Labels come from :func:`turn_labels`; a turn the fixture does not have is refused with its key.
    """
    labels = turn_labels(fixture)
    turn = []
    for c, t in zip(frame["case_id"], frame["turn_index"], strict=True):
        key = (str(c), int(t))
        if key not in labels:
            raise ValueError(f"turn ({c!r}, {t}) is not in the session fixture")
        turn.append(labels[key])
    out = frame.copy()
    out.insert(list(out.columns).index("turn_index") + 1, "turn", turn)
    return out


def returned_nothing_summary(timeline: pd.DataFrame) -> pd.DataFrame:
    """Per provider of a :func:`drift_timeline`: how many turns came back empty.

    Columns: ``display_name, turns, returned_nothing, required_missing`` (empty turns where a required
    belief went missing), in timeline order; only providers with at least one empty turn.
    """
    rows = []
    for name, group in timeline.groupby("display_name", sort=False):
        empty = int(group["returned_nothing"].sum())
        if empty:
            rows.append(
                {
                    "display_name": name,
                    "turns": len(group),
                    "returned_nothing": empty,
                    "required_missing": int((group["status"] == STATUS_EMPTY_MISSING).sum()),
                }
            )
    return pd.DataFrame(rows, columns=["display_name", "turns", "returned_nothing", "required_missing"])


def turn_axis(fixture: PmbFixture) -> pd.DataFrame:
    """The session turns as a numeric x axis, in fixture order (the order a session runs them).

    Columns: ``case_id, turn_index, position`` (0, 1, ... along the axis), ``turn`` (:func:`turn_labels`),
    ``tick`` (short tick text: the turn index, ``s<k>·<index>`` for the k-th session case from the second on),
    ``is_drift_turn``.
    """
    full = turn_labels(fixture)
    rows = [
        {
            "case_id": session.case_id,
            "turn_index": turn.turn_index,
            "turn": full[(session.case_id, turn.turn_index)],
            "tick": str(turn.turn_index) if k == 1 else f"s{k}·{turn.turn_index}",
            "is_drift_turn": turn.label == DRIFT_LABEL,
        }
        for k, session in enumerate(fixture.session_cases, start=1)
        for turn in session.turns
    ]
    frame = pd.DataFrame(rows, columns=["case_id", "turn_index", "turn", "tick", "is_drift_turn"])
    frame.insert(2, "position", range(len(frame)))
    return frame


def drift_spans(axis: pd.DataFrame) -> list[tuple[int, int]]:
    """Runs of consecutive drift turns of a :func:`turn_axis` as ``(first position, last position)`` pairs."""
    spans: list[tuple[int, int]] = []
    for pos, is_drift in zip(axis["position"], axis["is_drift_turn"], strict=True):
        if not is_drift:
            continue
        if spans and spans[-1][1] == int(pos) - 1:
            spans[-1] = (spans[-1][0], int(pos))
        else:
            spans.append((int(pos), int(pos)))
    return spans
