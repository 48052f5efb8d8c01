"""A scored PMB run: identity, re-derived cases, aggregates and verification result."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from memeval_core.pmb.case_table import CaseTable
from memeval_core.pmb.models import Ingestion, RetrievalSummary
from memeval_core.pmb.rescore import AGGREGATED, Aggregate, ScoredCase, aggregate_columns

Benchmark = Literal["pmb-single-turn", "pmb-session"]
BENCHMARKS: tuple[Benchmark, ...] = ("pmb-single-turn", "pmb-session")

_STEM = re.compile(r"^(?P<prefix>.*?)-?(?:session-)?retrieval-report-?(?P<suffix>.*)$")


@dataclass(frozen=True)
class RunIdentity:
    """Who a run is and where it came from."""

    run_id: str
    """Stable id: file stem plus the first 10 hex digits of the file's SHA-256."""
    display_name: str
    """Name shown to people; tells apart runs that share a provider string."""
    provider: str
    """Provider string stated in the report."""
    benchmark: Benchmark
    """Which PMB suite the run belongs to."""
    source: str
    """File path relative to the results directory."""
    sha256: str
    """SHA-256 of the file's bytes."""


@dataclass(frozen=True)
class PmbRun:
    """One ingested, re-scored and verified PMB report.

    Its cases are kept as columns (:attr:`table`), not as objects, so that a thousand runs fit in memory
    and load fast from the cache; :attr:`cases` rebuilds the objects on demand. A load builds one straight from
    the re-derived columns, a snapshot read back with :meth:`from_table`.
    """

    identity: RunIdentity
    """Who and where."""
    table: CaseTable
    """Re-derived cases (session: turns) as columns, in report order (session: case, turn order)."""
    aggregate: Aggregate
    """Re-derived aggregates (grouped by the fixture's categories)."""
    stated: RetrievalSummary
    """The aggregates the report states."""
    ingestion: Ingestion | None
    """Ingestion timings, when present."""
    mismatches: tuple[str, ...] = field(default=())
    """Stated values that do not match the re-derived ones."""
    extra_fields: tuple[str, ...] = field(default=())
    """Top-level report fields memeval keeps but does not interpret (e.g. provenance)."""
    provenance: tuple[tuple[str, str], ...] = field(default=())
    """The report's own ``provenance`` object as (key, text) pairs: who made it, when, against what."""

    @classmethod
    def from_table(
        cls,
        identity: RunIdentity,
        table: CaseTable,
        stated: RetrievalSummary,
        ingestion: Ingestion | None,
        mismatches: tuple[str, ...] = (),
        extra_fields: tuple[str, ...] = (),
    ) -> PmbRun:
        """A run from its re-derived cases given as a table (a run's rows of a snapshot), as a load makes it."""
        aggregated = {name: tuple(values) for name, values in table.arrow.select(AGGREGATED).to_pydict().items()}
        return cls(
            identity=identity,
            table=table,
            aggregate=aggregate_columns(aggregated),
            stated=stated,
            ingestion=ingestion,
            mismatches=mismatches,
            extra_fields=extra_fields,
        )

    @property
    def cases(self) -> tuple[ScoredCase, ...]:
        """Every case as an object, rebuilt from :attr:`table` on each access (bind it once; prefer the table
        for aggregations over many runs)."""
        return self.table.cases()

    @property
    def verified(self) -> bool:
        """True when every stated value matches its re-derived value."""
        return not self.mismatches

    @property
    def ingestion_total_ms(self) -> float | None:
        """Total ingestion time; from per-belief timings when present, else as stated."""
        if self.ingestion is None:
            return None
        if self.ingestion.per_belief:
            return sum(b.latency_ms for b in self.ingestion.per_belief)
        return self.ingestion.total_ms


def provenance_pairs(doc: dict[str, Any] | None) -> tuple[tuple[str, str], ...]:
    """A report's ``provenance`` object as (key, text) pairs, nested values as compact JSON."""
    if not doc:
        return ()
    return tuple(
        (str(k), v if isinstance(v, str) else json.dumps(v, sort_keys=True, separators=(",", ":")))
        for k, v in doc.items()
    )


def file_variant(stem: str, provider: str) -> str:
    """What the file name says beyond the provider, e.g. ``nomic`` for ``nomic-retrieval-report-vector``."""
    m = _STEM.match(stem)
    if not m:
        return stem
    parts = [p for p in (m["prefix"], m["suffix"]) if p and p != provider]
    return "-".join(dict.fromkeys(parts))


def load_order(identity: RunIdentity) -> tuple[bool, str]:
    """Where a run stands in a load: single-turn runs first, then by file."""
    return identity.benchmark != "pmb-single-turn", identity.source


def display_names(identities: Sequence[RunIdentity]) -> list[str]:
    """A display name per run, unique within its benchmark.

    The provider string alone when it is unique and the file name says nothing more; otherwise
    ``provider (variant)`` from the file name; the short hash as a last resort.
    """
    names = []
    for ident in identities:
        variant = file_variant(ident.source.rsplit("/", 1)[-1].removesuffix(".json"), ident.provider)
        names.append(f"{ident.provider} ({variant})" if variant else ident.provider)
    groups = [(ident.benchmark, ident.provider) for ident in identities]
    return with_short_hash(names, groups, [ident.sha256 for ident in identities])


def with_short_hash(names: Sequence[str], groups: Sequence[Hashable], hashes: Sequence[str]) -> list[str]:
    """``names``, each followed by `` #`` and the first 8 characters of its hash where another run of its group
    has the same name (a group: one benchmark and one provider or system; see :func:`display_names`)."""
    counts = Counter(zip(groups, names, strict=True))
    return [
        f"{name} #{sha[:8]}" if counts[(group, name)] > 1 else name
        for name, group, sha in zip(names, groups, hashes, strict=True)
    ]


def assign_display_names(runs: Iterable[PmbRun]) -> list[PmbRun]:
    """The runs, each renamed by :func:`display_names`."""
    runs = list(runs)
    names = display_names([r.identity for r in runs])
    return [replace(r, identity=replace(r.identity, display_name=name)) for r, name in zip(runs, names, strict=True)]
