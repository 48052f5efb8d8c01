"""The canonical, versioned memeval QA run format: one run's metadata plus one record per question.

Every importer turns its source format into these models, and any harness can write them directly
(see ``docs/QA_RUN_FORMAT.md`` and the JSON Schema ``docs/qa-run.schema.json``). Unknown fields are
kept (``extra="allow"``) so that nothing a harness records is lost on the way through memeval.

Versioning: ``schema_version`` names the layout. A document from an older version is upgraded in
:meth:`QaRun._migrate` (``mode="before"``) by the functions in :data:`MIGRATIONS`, one version step
at a time, before validation; a document from a newer memeval is refused with a clear message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memeval_core.rounding import MAX_MS
from memeval_core.versioning import migrate

SCHEMA_VERSION = 1
"""The version this memeval writes and reads natively."""

MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}
"""``MIGRATIONS[v]`` turns a version-``v`` document into a version ``v + 1`` document.

Empty while version 1 is the only published layout; a future layout change adds its step here.
"""

Scale = Literal["binary", "rubric-0-5", "unit"]
"""How a judge scores: ``binary`` (0 or 1), ``rubric-0-5`` (0..5, rescaled by /5), ``unit`` (any value in [0, 1])."""

FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
Milliseconds = Annotated[float, Field(allow_inf_nan=False, ge=0, le=MAX_MS)]
"""A duration: finite, not negative, at most :data:`memeval_core.rounding.MAX_MS`."""
UnitFloat = Annotated[float, Field(allow_inf_nan=False, ge=0, le=1)]


class QaModel(BaseModel):
    """Base of the QA run format: unknown fields kept, field docstrings become schema descriptions."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True, frozen=True)


class Verdict(QaModel):
    """One judge's grade of one answer."""

    judge: str
    """Name of the verdict source, unique within the question (e.g. ``llm_score``, ``judgment_2``)."""
    score: FiniteFloat
    """Raw score as the judge gave it: 0/1 for ``binary``, 0..5 for ``rubric-0-5``, 0..1 for ``unit``."""
    scale: Scale = "binary"
    """The judge's scale; decides how the score is rescaled to [0, 1]."""
    model: str | None = None
    """Model behind the judge (e.g. ``gpt-4o-mini``), when known."""
    label: str | None = None
    """The judge's raw output label or text (e.g. ``CORRECT``, ``Yes.``, ``DIFFERENT``), when recorded."""

    @model_validator(mode="after")
    def _score_in_scale(self) -> Verdict:
        top = 5.0 if self.scale == "rubric-0-5" else 1.0
        if not 0.0 <= self.score <= top:
            raise ValueError(f"score {self.score} is outside the {self.scale} scale [0, {top:g}]")
        if self.scale == "binary" and self.score not in (0.0, 1.0):
            raise ValueError(f"a binary verdict must be 0 or 1, got {self.score}")
        return self


class QaQuestion(QaModel):
    """One question of a run: what was asked, what the system answered, how the judges graded it."""

    benchmark: str
    """Benchmark id: ``locomo``, ``longmemeval-s``, ``longmemeval-oracle``, ``evolving-events``, ..."""
    question_id: str
    """Question id, unique within the run. LoCoMo: ``conv-<n>-q<i>`` with ``i`` the raw ``qa`` index."""
    question: str = ""
    """The question text."""
    conversation: str | None = None
    """Conversation / sample the question belongs to (LoCoMo: ``sample_id`` such as ``conv-26``)."""
    question_index: int | None = None
    """Index of the question in its conversation's raw question list (LoCoMo: ``qa`` index), when known."""
    category: str | None = None
    """Category code exactly as the dataset spells it (LoCoMo: ``"1"``..``"5"``; LongMemEval: question_type)."""
    category_name: str | None = None
    """Category name under memeval's declared convention (see :mod:`memeval_core.qa.locomo`)."""
    kind: str | None = None
    """GroupMemBench question kind: multi_hop, knowledge_update, temporal, user_implicit, term_ambiguity, abstention."""
    gold_answer: str | None = None
    """The dataset's reference answer (None: the dataset has none, e.g. most LoCoMo category-5 items)."""
    answer: str | None = None
    """The system's generated answer; None or empty means the system produced no answer (scores 0)."""
    retrieved_ids: list[str] | None = None
    """Ids the system retrieved, best first (rank order), when the harness records ids."""
    gold_evidence_ids: list[str] | None = None
    """Ids of the gold evidence (LoCoMo: ``dia_id`` of the evidence turns), when known."""
    verdicts: list[Verdict] = []
    """Every judge verdict on this answer (several judges, or repeated runs of one judge)."""
    latency_ms: Milliseconds | None = None
    """End-to-end time to answer (retrieval + generation), milliseconds, when recorded."""
    retrieval_latency_ms: Milliseconds | None = None
    """Retrieval (search) time alone, milliseconds, when recorded."""
    tokens: int | None = None
    """Tokens spent answering (prompt + context + completion as the harness counts them), when recorded."""
    error: bool = False
    """The harness reports that answering or judging this question failed; it scores 0 and is counted."""
    error_message: str | None = None
    """What failed, when the harness says."""
    scored: bool = True
    """False when the harness, by its declared protocol, did not grade this question (e.g. unjudged LoCoMo
    category 5); such questions are kept but lie outside the accuracy denominator."""
    is_abstention: bool | None = None
    """The question has no answer in the conversation; the correct behaviour is to abstain."""
    abstained: bool | None = None
    """The system abstained (said it does not know), when the harness records it."""
    mpa: UnitFloat | None = None
    """Memora FAMA: memory-point accuracy, the share of currently valid memory points the answer uses."""
    faa: UnitFloat | None = None
    """Memora FAMA: forgetting adherence, the share of forgetting criteria met (1 = no invalidated memory
    used); None when the question declares no forgetting criteria."""


class RunMeta(QaModel):
    """What ran, how, and where the results came from."""

    benchmark: str
    """Benchmark id, as in :attr:`QaQuestion.benchmark`."""
    system: str
    """Memory system under test (e.g. ``mem0``, ``zep``, ``memobase``)."""
    format: str = "memeval"
    """Source format the run was imported from (``memeval`` when a harness wrote this format directly)."""
    variant: str | None = None
    """What tells this run apart from others of the same system (configuration, version, file)."""
    answer_model: str | None = None
    """Model that generated the answers."""
    judge_models: list[str] = []
    """Models behind the judges, when known."""
    top_k: int | None = None
    """Memories retrieved per question."""
    prompt_mode: str | None = None
    """Answer prompt variant (e.g. ``mem0``, ``answer_prompt_cot``)."""
    seed: int | None = None
    """Random seed of the run, when stated."""
    repeat: int | None = None
    """Repeat number when the same configuration was run several times (1-based)."""
    date: str | None = None
    """When the run happened (ISO 8601 where the source allows)."""
    source_file: str | None = None
    """Source file(s) relative to the results directory; several joined by `` + ``."""
    source_sha256: str | None = None
    """SHA-256 of the source file's bytes (several files: of their concatenated hashes, in path order)."""
    includes_adversarial: bool | None = None
    """LoCoMo: category 5 (adversarial) questions are scored in this run. None for other benchmarks."""
    sampled: bool = False
    """The questions are a sample of the dataset (e.g. a stratified judge-reliability subset)."""
    dataset_questions: int | None = None
    """Questions the full dataset has for this benchmark (LoCoMo 1,986; LongMemEval 500), when known."""
    metadata_sources: list[str] = []
    """Files other than the result file that metadata was read from (e.g. a sibling ``system_config.json``)."""
    stated: dict[str, Any] = {}
    """Aggregates the source states about itself (e.g. its own accuracy), kept for verification."""


class QaRun(QaModel):
    """A whole run: metadata and every question. JSON: ``{"schema_version": 1, "run": {...}, "questions": [...]}``."""

    schema_version: int = SCHEMA_VERSION
    """Layout version of this document; older versions are migrated on load."""
    run: RunMeta
    """Run metadata."""
    questions: list[QaQuestion]
    """One record per question, in the harness's order."""

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        return migrate(data, SCHEMA_VERSION, MIGRATIONS, 1)
