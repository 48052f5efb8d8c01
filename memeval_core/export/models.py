"""The published leaderboard format: ``leaderboard.json``, a versioned, documented pydantic model.

One document holds every table the leaderboard page shows (PMB single-turn and session, and QA
benchmarks once QA runs exist), the inputs it was computed from (relative path and SHA-256 of
each file), the rounding rule every number follows, and a fingerprint that identifies the inputs
together with the scoring code:

    fingerprint = SHA-256( "\\n".join(sorted(input sha256 hex digests)) + "\\n" + scoring_version )

so two exports of the same files by the same scoring code carry the same fingerprint, whatever
the files are called or where they lie.

Versioning: ``schema_version`` names the layout. :meth:`Leaderboard._migrate` (``mode="before"``)
upgrades an older document one step at a time through :data:`MIGRATIONS` before validation and
refuses a document from a newer memeval. ``docs/leaderboard.schema.json`` is generated from
:class:`Leaderboard` by :func:`schema_text` (``python -m memeval_core.export.models``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from memeval_core.rounding import MS_DECIMALS, RATIO_DECIMALS
from memeval_core.versioning import migrate

SCHEMA_VERSION = 1
"""The layout version this memeval writes and reads natively."""
FIRST_VERSION = 1
"""The oldest layout :data:`MIGRATIONS` can upgrade from."""

SCHEMA_ID = "https://memeval.dev/schemas/leaderboard.schema.json"
"""``$id`` of the published JSON Schema."""

MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}
"""``MIGRATIONS[v]`` turns a version-``v`` document into a version ``v + 1`` document.

Empty while version 1 is the only published layout; a layout change bumps :data:`SCHEMA_VERSION`
and adds the step from the previous version here, so older files keep loading.
"""

Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
Ratio = Annotated[float, Field(allow_inf_nan=False, ge=0, le=1)]
Millis = Annotated[float, Field(allow_inf_nan=False, ge=0)]


class ExportModel(BaseModel):
    """Base of the leaderboard format: unknown fields refused, frozen, field docstrings become descriptions."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class RoundingRule(ExportModel):
    """The one rounding rule every number in the document follows (:mod:`memeval_core.rounding`)."""

    rule: Literal["half-up"] = "half-up"
    """``half-up``: ``floor(x * 10**d + 0.5) / 10**d``, as JavaScript's ``Math.round`` (the PMB harness's rule)."""
    ratio_decimals: int = RATIO_DECIMALS
    """Decimals kept for ratios: precision, recall, drift, accuracy."""
    ms_decimals: int = MS_DECIMALS
    """Decimals kept for durations in milliseconds."""


class InputFile(ExportModel):
    """One file the export was computed from."""

    path: str = Field(min_length=1)
    """POSIX path relative to the results directory (or, for a fixture given with ``--fixtures``, to that folder;
    for a results dataset on the Hub, the part file's path in the dataset)."""
    sha256: Sha256
    """SHA-256 of the file's bytes."""
    role: Literal["pmb-fixture", "pmb-report", "qa-run"]
    """What the file is: a PMB fixture file, a PMB report, or a QA run result file (from a results dataset: the
    part file that holds the fixture, the PMB runs, or the QA runs)."""
    license: str = "unknown"
    """SPDX id of the licence stated nearest the file (a LICENSE file or PROVENANCE.md at or above its folder),
    ``unknown`` when none is recognised (see memeval_core.licences); for a part file of a results dataset, the one
    licence the catalogue records for the files its runs were pushed from."""

    @field_validator("path")
    @classmethod
    def _relative(cls, value: str) -> str:
        # A published file must never reveal where the maintainer keeps their files.
        parts = value.split("/")
        if value.startswith(("/", "\\", "~")) or (len(value) > 1 and value[1] == ":") or ".." in parts:
            raise ValueError(f"input path {value!r} must be relative and stay inside its folder")
        return value


class PassTypes(ExportModel):
    """Passes of a PMB run by type (see :mod:`memeval_core.pmb.pass_types`)."""

    active_retrieval: int = Field(ge=0)
    """Passes with a positive precision: the gold beliefs and nothing else were returned."""
    structural: int = Field(ge=0)
    """Passes in structural categories without precision."""
    trivially_empty: int = Field(ge=0)
    """Passes a system returning nothing also gets."""


class PmbRow(ExportModel):
    """One PMB run as the leaderboard page shows it; every number re-derived from the per-case ids."""

    rank: int = Field(ge=1)
    """Position in memeval's order: active passes, then passes, then drift, then precision, then name."""
    run_id: str
    """Stable id: file stem plus the first 10 hex digits of the file's SHA-256."""
    display_name: str
    """Name shown to people (provider, with the file's variant when providers repeat)."""
    provider: str
    """Provider string the report states."""
    benchmark: Literal["pmb-single-turn", "pmb-session"]
    """PMB suite of the run."""
    source: str
    """The report's path relative to the results directory."""
    cases: int = Field(ge=0)
    """Cases scored (turns for session runs)."""
    passed: int = Field(ge=0)
    """Cases where every assertion held."""
    pass_types: PassTypes
    """Passes by type."""
    mean_precision: Ratio | None
    """Mean precision over cases that have one; rounded to ``ratio_decimals``."""
    mean_recall: Ratio | None
    """Mean recall over cases that have one; rounded to ``ratio_decimals``."""
    mean_drift: Ratio | None
    """Session runs: mean of 1 - precision per turn; None for single-turn runs."""
    latency_mean_ms: Millis | None
    """Mean retrieval latency per case, ms."""
    latency_p50_ms: Millis | None
    """Median retrieval latency (nearest rank), ms."""
    latency_p95_ms: Millis | None
    """95th-percentile retrieval latency (nearest rank), ms."""
    ingestion_total_ms: Millis | None
    """Total time to ingest the belief corpus, ms, when the report records it."""
    verified: bool
    """True when every value the report states equals the re-derived value."""
    mismatches: list[str]
    """Stated values that differ from the re-derived ones (empty when verified)."""


class QaCategory(ExportModel):
    """Accuracy of one question category of a QA run."""

    name: str | None = None
    """Category name under memeval's convention (LoCoMo codes 1-5 have names), when known."""
    n: int | None = Field(default=None, ge=0)
    """Scored questions in the category, when known."""
    accuracy: Ratio | None
    """Mean question score in the category; rounded to ``ratio_decimals``."""

    @model_validator(mode="before")
    @classmethod
    def _from_number(cls, data: Any) -> Any:
        # QA rows may give a category as a bare accuracy.
        if data is None or (isinstance(data, (int, float)) and not isinstance(data, bool)):
            return {"accuracy": data}
        return data


class QaRow(ExportModel):
    """One QA run (LoCoMo, LongMemEval, ...) as the leaderboard page shows it (:mod:`memeval_core.qa.leaderboard`)."""

    run_id: str
    """Stable id of the run."""
    display_name: str
    """Name shown to people."""
    system: str
    """Memory system under test."""
    benchmark: str
    """Benchmark id (``locomo``, ``longmemeval-s``, ...)."""
    rank_group: str
    """Runs are ranked only within a group: the benchmark plus whether LoCoMo category 5 is scored."""
    rank: int | None = Field(ge=1)
    """Rank by accuracy within the rank group (1 = best, ties share a rank); None without an accuracy."""
    n_questions: int = Field(ge=0)
    """Scored questions (the accuracy denominator)."""
    accuracy: Ratio | None
    """Mean question score over scored questions (repeats averaged); rounded to ``ratio_decimals``."""
    majority_accuracy: Ratio | None
    """Share of questions passing by strict judge majority; None with a single verdict per question."""
    n_judges: int = Field(ge=0)
    """Distinct judges (or judge repeats) that graded the answers."""
    failures: int = Field(ge=0)
    """Scored questions that failed (no answer, error, not judged); each scored 0."""
    categories: dict[str, QaCategory]
    """Category code -> name, scored questions and accuracy, in code order."""
    includes_adversarial: bool | None
    """LoCoMo: category 5 (adversarial) is scored; None for other benchmarks."""
    publishable: bool
    """The run meets its benchmark's declared protocol (see :mod:`memeval_core.qa.publishable`)."""
    not_publishable_because: list[str]
    """Every protocol condition the run fails; empty when publishable."""

    @field_validator("categories", mode="before")
    @classmethod
    def _sorted_categories(cls, value: Any) -> Any:
        # Numeric codes in numeric order, then the others, so equal runs serialise identically.
        if isinstance(value, dict):
            return dict(sorted(value.items(), key=lambda kv: (0, int(kv[0])) if kv[0].isdigit() else (1, kv[0])))
        return value


class PmbTable(ExportModel):
    """The leaderboard table of one PMB suite."""

    kind: Literal["pmb"] = "pmb"
    """Table family: ``pmb`` (retrieval precision benchmark)."""
    benchmark: Literal["pmb-single-turn", "pmb-session"]
    """PMB suite."""
    rows: list[PmbRow]
    """Runs, best first."""


class QaTable(ExportModel):
    """The leaderboard table of one QA benchmark."""

    kind: Literal["qa"] = "qa"
    """Table family: ``qa`` (question answering judged against gold answers)."""
    benchmark: str
    """Benchmark id."""
    rows: list[QaRow]
    """Runs by rank group, publishable first, then by accuracy, then by name."""


Table = Annotated[PmbTable | QaTable, Field(discriminator="kind")]


class Leaderboard(ExportModel):
    """``leaderboard.json``: every leaderboard table, its inputs, and how to tell two exports apart."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        use_attribute_docstrings=True,
        json_schema_extra={"$id": SCHEMA_ID, "$schema": "https://json-schema.org/draft/2020-12/schema"},
    )

    schema_version: Literal[1] = 1
    """Layout version of this document; older versions are migrated on load."""
    memeval_version: str
    """Version of memeval that wrote the document."""
    scoring_version: str
    """Version of the scoring code (bumped whenever a change could change a number shown)."""
    fingerprint: Sha256
    """SHA-256 over the sorted input SHA-256s and the scoring version (see the module docstring)."""
    rounding: RoundingRule
    """The rounding rule of every number in ``tables``."""
    inputs: list[InputFile]
    """Every input file, sorted by role then path."""
    tables: list[Table]
    """One table per benchmark: PMB single-turn, PMB session, then QA benchmarks by id."""
    text_withheld: dict[str, list[str]] = Field(default_factory=dict)
    """QA benchmarks whose details leave question, gold-answer and answer text empty, each with the licences
    (non-commercial or unknown) that keep it out; ``export --include-text`` puts it in."""

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        return migrate(data, SCHEMA_VERSION, MIGRATIONS, FIRST_VERSION)

    @model_validator(mode="after")
    def _fingerprint_matches_inputs(self) -> Leaderboard:
        expected = fingerprint((f.sha256 for f in self.inputs), self.scoring_version)
        if self.fingerprint != expected:
            raise ValueError(f"fingerprint {self.fingerprint} does not match the inputs and scoring version")
        return self

    def pmb_rows(self) -> list[PmbRow]:
        """Every PMB row, table by table."""
        return [r for t in self.tables if isinstance(t, PmbTable) for r in t.rows]


def fingerprint(input_sha256s: Iterable[str], scoring_version: str) -> str:
    """``SHA-256("\\n".join(sorted(input_sha256s)) + "\\n" + scoring_version)`` as hex.

    Sorting makes it independent of file names and order; the scoring version makes exports by
    different scoring code differ even on the same files.
    """
    text = "\n".join(sorted(input_sha256s)) + "\n" + scoring_version
    return hashlib.sha256(text.encode()).hexdigest()


def dumps(board: Leaderboard) -> str:
    """Canonical JSON text of a leaderboard: 2-space indent, field order of the model, UTF-8, no NaN, final newline."""
    return json.dumps(board.model_dump(mode="json"), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def loads(text: str | bytes, source: str = "leaderboard.json") -> Leaderboard:
    """Parse and validate a leaderboard document; raise ``ValueError`` naming ``source`` and the field."""
    try:
        return Leaderboard.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
        raise ValueError(f"{source}: {where}: {first['msg']}") from exc


def json_schema() -> dict[str, Any]:
    """The JSON Schema of :class:`Leaderboard` (draft 2020-12), as published in ``docs/leaderboard.schema.json``."""
    return Leaderboard.model_json_schema(mode="serialization")


def schema_text() -> str:
    """The JSON Schema as the exact text committed under ``docs/``."""
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    print(schema_text(), end="")
