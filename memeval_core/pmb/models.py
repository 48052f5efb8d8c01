"""Pydantic models of PrecisionMemBench fixtures and reports, as the upstream harness writes them.

Field names are snake_case in Python and camelCase in JSON (the harness's spelling). Unknown fields
are kept (``extra="allow"``) so that reports from newer harness versions load without losing data.
Numbers that are measurements must be finite: a NaN latency is an error, not a value.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from memeval_core.rounding import MAX_MS

FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
Milliseconds = Annotated[float, Field(allow_inf_nan=False, ge=0, le=MAX_MS)]
"""A duration: finite, not negative, at most :data:`memeval_core.rounding.MAX_MS`."""
Ratio = Annotated[float, Field(allow_inf_nan=False, ge=0, le=1)]


class PmbModel(BaseModel):
    """Base for PMB JSON: camelCase aliases, unknown fields kept, field docstrings as descriptions."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        use_attribute_docstrings=True,
        frozen=True,
    )


# --------------------------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------------------------


class BeliefsExpect(PmbModel):
    """Assertions on the relevant-beliefs tier of a case."""

    must_include: list[str] = []
    """Ids that must appear among pinned or relevant beliefs."""
    must_exclude: list[str] = []
    """Ids that must not appear among pinned or relevant beliefs."""
    should_include: list[str] = []
    """Ids that are expected among pinned or relevant beliefs."""
    should_only_include: list[str] | None = None
    """The gold relevant set: relevant beliefs must be exactly these (may be empty). None: not asserted."""
    ordered_before: list[tuple[str, str]] = []
    """Pairs (a, b): a must be ranked before b among relevant beliefs."""
    max_count: int | None = None
    """At most this many relevant beliefs."""
    min_count: int | None = None
    """At least this many relevant beliefs."""


class IdsExpect(PmbModel):
    """Inclusion/exclusion assertions on a tier of ids (pinned facts, open questions)."""

    must_include: list[str] = []
    """Ids that must be returned in this tier."""
    must_exclude: list[str] = []
    """Ids that must not be returned in this tier."""


class PreludeExpect(PmbModel):
    """Assertions on the persona prelude text (not stored in reports, so not re-derivable)."""

    non_empty: bool | None = None
    """The prelude must not be empty."""
    is_null: bool | None = None
    """The prelude must be empty."""
    contains: list[str] = []
    """Substrings the prelude must contain."""
    must_not_contain: list[str] = []
    """Substrings the prelude must not contain."""


class CaseExpect(PmbModel):
    """Everything a single-turn case asserts, per retrieval tier."""

    persona_prelude: PreludeExpect | None = None
    """Assertions on the persona prelude."""
    pinned_facts: IdsExpect | None = None
    """Assertions on the pinned-facts tier."""
    relevant_beliefs: BeliefsExpect | None = None
    """Assertions on the relevant-beliefs tier."""
    open_questions: IdsExpect | None = None
    """Assertions on the open-questions tier."""


class RetrievalCase(PmbModel):
    """One single-turn case of ``retrieval.cases.json``."""

    case_id: str
    """Stable id of the case."""
    category: str
    """Benchmark category (e.g. ``Alias resolution``)."""
    description: str = ""
    """What the case checks, in words."""
    scope: list[str] = []
    """Scopes the query is issued in (e.g. ``domain:code``)."""
    query: str = ""
    """The query text sent to the memory system."""
    user_id: str | None = None
    """User the query is issued for; the harness default ``test-user`` when absent."""
    budget: dict[str, Any] | None = None
    """Context budget, e.g. ``{"maxBeliefs": 2}``."""
    notes: str | None = None
    """Free-text notes of the benchmark authors."""
    expect: CaseExpect = CaseExpect()
    """The assertions."""


class NoiseCheck(PmbModel):
    """Beliefs from drift turns that must not surface on this turn."""

    must_not_surface: list[str] = []
    """Ids that count as noise when returned."""


class SessionTurnExpect(PmbModel):
    """Assertions of one session turn."""

    relevant_beliefs: BeliefsExpect | None = None
    """Assertions on the relevant-beliefs tier."""
    pinned_facts: IdsExpect | None = None
    """Assertions on the pinned-facts tier."""
    open_questions: IdsExpect | None = None
    """Assertions on the open-questions tier."""
    noise_check: NoiseCheck | None = None
    """Noise ids that must not surface."""


class SessionTurn(PmbModel):
    """One turn of a multi-turn session case."""

    turn_index: int
    """Position of the turn in the session (0-based)."""
    label: str
    """Role of the turn: establishes_topic, drift, implicit_continuation, re_entry."""
    scope: list[str] = []
    """Scopes of the turn."""
    user_message: str = ""
    """The user's message, used as the retrieval query."""
    assistant_message: str = ""
    """The assistant's reply in the scripted session."""
    topics: list[str] = []
    """Topics the turn is about."""
    create_belief_at_turn: dict[str, Any] | None = None
    """A belief ingested after this turn."""
    update_belief_at_turn: dict[str, Any] | None = None
    """An alias update applied after this turn."""
    expect: SessionTurnExpect = SessionTurnExpect()
    """The assertions."""


class SessionCase(PmbModel):
    """One multi-turn case of ``session-retrieval.cases.json``."""

    case_id: str
    """Stable id of the session case."""
    description: str = ""
    """What the session checks."""
    notes: str | None = None
    """Free-text notes."""
    turns: list[SessionTurn]
    """The turns, in order."""


class Belief(BaseModel):
    """One belief of ``beliefs.seed.json`` (the memory corpus); the file is snake_case."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True, frozen=True)

    id: str = Field(alias="_id")
    """Belief id, e.g. ``b-kubernetes-entity``."""
    user_id: str
    """Owner of the belief."""
    type: str
    """preference, entity, open_question, decision or relation."""
    canonical_name: str = ""
    """Canonical name."""
    aliases: list[str] = []
    """Alternative surface forms."""
    content: str = ""
    """The belief's text."""
    scope: list[str] = []
    """Scopes the belief belongs to."""
    epistemic_status: str = "active"
    """active, superseded, exploratory or inferred."""
    pinned: bool = False
    """Pinned beliefs are always returned in the pinned-facts tier."""


# --------------------------------------------------------------------------------------------
# Reports
# --------------------------------------------------------------------------------------------


class PassTypes(PmbModel):
    """How the passes of a run split by what they demonstrate."""

    active_retrieval: int = 0
    """Passes with a positive retrieval precision: the system retrieved the right beliefs."""
    structural: int = 0
    """Passes of structural categories (scope, supersession, routing, budget, ...) without precision."""
    trivially_empty: int = 0
    """Passes any system returning nothing would also get."""


class CategoryBreakdown(PmbModel):
    """Stated per-category aggregates of a report."""

    category: str
    """Category name."""
    case_count: int
    """Cases in the category."""
    passed: int
    """Cases passed."""
    failed: int
    """Cases failed."""
    mean_precision: FiniteFloat | None = None
    """Mean of non-null precisions (4 decimals)."""
    mean_recall: FiniteFloat | None = None
    """Mean of non-null recalls (4 decimals)."""


class RetrievalSummary(PmbModel):
    """The aggregates a report states about itself; every one is re-derived and verified."""

    mean_latency_ms: Milliseconds | None = None
    """Mean per-case latency (2 decimals)."""
    p50_latency_ms: Milliseconds | None = None
    """Median per-case latency by nearest rank."""
    p95_latency_ms: Milliseconds | None = None
    """95th percentile per-case latency by nearest rank."""
    case_count: int | None = None
    """Cases in the fixture (sessions: session cases)."""
    turn_count: int | None = None
    """Session reports: turns reported."""
    mean_precision: FiniteFloat | None = None
    """Mean of non-null precisions (4 decimals)."""
    mean_recall: FiniteFloat | None = None
    """Mean of non-null recalls (4 decimals)."""
    total_passed: int | None = None
    """Entries passed."""
    total_cases: int | None = None
    """Entries reported."""
    pass_rate: FiniteFloat | None = None
    """total_passed / total_cases (4 decimals)."""
    active_retrieval_passes: int | None = None
    """Same as pass_types.active_retrieval."""
    pass_types: PassTypes | None = None
    """Pass-type breakdown; absent in the oldest reports."""
    categories: list[CategoryBreakdown] = []
    """Per-category aggregates."""


class BeliefIngestion(PmbModel):
    """Ingestion latency of one belief."""

    belief_id: str
    """Belief id."""
    latency_ms: Milliseconds
    """Time to ingest it."""


class Ingestion(PmbModel):
    """Ingestion timings; absent when the run did not re-seed the provider."""

    belief_count: int = 0
    """Beliefs ingested."""
    total_ms: Milliseconds = 0.0
    """Total ingestion time (2 decimals)."""
    mean_per_belief_ms: Milliseconds = 0.0
    """Mean time per belief (2 decimals)."""
    per_belief: list[BeliefIngestion] = []
    """Per-belief timings."""


class SingleTurnEntry(PmbModel):
    """One case of a single-turn report: what the system returned and what the harness concluded."""

    case_id: str
    """Case id; must exist in the fixture."""
    category: str = ""
    """Category as the report states it."""
    description: str = ""
    """Case description as the report states it."""
    pinned_beliefs: list[str] = []
    """Ids returned in the pinned-facts tier."""
    relevant_beliefs: list[str] = []
    """Ids returned in the relevant tier, in returned order (the rank)."""
    retrieved_questions: list[str] = []
    """Ids returned in the open-questions tier."""
    retrieval_precision: Ratio | None = None
    """Stated precision of the relevant tier."""
    retrieval_recall: Ratio | None = None
    """Stated recall of the relevant tier."""
    pinned_coverage: Ratio | None = None
    """Stated share of required pinned facts returned."""
    passed: bool
    """Stated verdict."""
    failures: list[str] = []
    """Stated failure messages."""
    retrieval_latency_ms: Milliseconds
    """Time to build the context for this case."""


class SessionEntry(PmbModel):
    """One turn of a session report."""

    case_id: str
    """Session case id; must exist in the session fixture."""
    category: str = "Session-level noise isolation"
    """Category (always session-level noise isolation upstream)."""
    turn_index: int
    """Turn index within the session case."""
    label: str = ""
    """Turn label as the report states it."""
    retrieved_belief_ids: list[str] = []
    """Ids returned in the relevant tier, in returned order."""
    pinned_belief_ids: list[str] = []
    """Ids returned in the pinned tier."""
    retrieved_questions: list[str] | None = None
    """Ids returned in the open-questions tier, when the report records them."""
    noise_belief_ids: list[str] = []
    """Stated noise ids that surfaced."""
    drift_score: Ratio = 0.0
    """Stated drift (harness: 1 - precision, 0 when nothing was returned)."""
    passed: bool
    """Stated verdict."""
    failures: list[str] = []
    """Stated failure messages."""
    retrieval_latency_ms: Milliseconds
    """Time to build the context for this turn."""
    retrieval_precision: Ratio | None = None
    """Stated precision."""
    retrieval_recall: Ratio | None = None
    """Stated recall."""


class _ReportBase(PmbModel):
    provider: str
    """Provider name as the harness was told it (two runs may share it)."""
    retrieval: RetrievalSummary = RetrievalSummary()
    """Stated aggregates."""
    ingestion: Ingestion | None = None
    """Ingestion timings, when the run seeded the provider."""
    provenance: dict[str, Any] | None = None
    """Run provenance (git commit, versions) in newer reports."""


class ReportHeader(_ReportBase):
    """A report's top-level fields without its entries (a load validates those as columns)."""


class SingleTurnReport(_ReportBase):
    """A ``retrieval-report-*.json``."""

    cases: list[SingleTurnEntry]
    """Per-case results."""


class SessionReport(_ReportBase):
    """A ``session-retrieval-report-*.json``."""

    cases: list[SessionEntry]
    """Per-turn results."""
