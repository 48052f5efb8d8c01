"""A self-contained snapshot of loaded QA runs: what an export ships and what the warm-start cache keeps.

Three files rebuild a :class:`QaLoad` without the raw result files, the sidecars or ``locomo10.json``:

- ``qa-load.json``: ``snapshot_version``, the scoring version, the LoCoMo dataset the runs were joined
  against (relative path and SHA-256 only; the dataset is CC BY-NC and is never shipped) and the
  disputed LoCoMo question ids (locomo-audit);
- ``qa-runs.jsonl``: one line per run, in load order: ``run_id``, ``display_name``, the join report, the
  publishable verdict and its reasons, ``merged_from``, ``duplicates``, ``accuracy_without_disputed``,
  ``n_disputed``, ``meta`` (the run's metadata, :class:`memeval_core.qa.models.RunMeta`) and ``score`` (its
  aggregates, :class:`memeval_core.qa.scoring.RunScore`);
- ``qa-questions.parquet``: every run's question table (:mod:`memeval_core.qa.table`) one after the other,
  ``run_id`` first.

Reading builds no object per question: each run's table is a slice of the one Parquet table. A snapshot
written by other scoring code is refused. The run lines never use the key ``run``, so a snapshot folder
scanned as raw results is never mistaken for runs written in memeval's own format.

Writing is deterministic (fixed key order, no timestamps, compact JSON) so equal loads give
byte-identical files, and writing a snapshot read back from disk reproduces it byte for byte.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
from pydantic import ValidationError

from memeval_core import SCORING_VERSION, parquet, tree
from memeval_core.errors import IngestError, SnapshotError
from memeval_core.pmb.snapshot import versioned_document
from memeval_core.qa.ingest import LoadedRun, QaLoad, QaRunHeader, Skipped
from memeval_core.qa.locomo import JoinReport, LocomoDataset
from memeval_core.qa.models import RunMeta
from memeval_core.qa.scoring import GroupScore, RunScore
from memeval_core.qa.table import SCHEMA

LOAD_FILE = "qa-load.json"
"""Load-level facts: version, LoCoMo dataset reference, disputed ids."""
RUNS_FILE = "qa-runs.jsonl"
"""One run per line."""
QUESTIONS_FILE = "qa-questions.parquet"
"""Every run's questions and their scores."""
SNAPSHOT_VERSION = 2
"""Layout version of the two files."""


def _dump_line(obj: Any) -> str:
    # No sort_keys: pydantic keeps extra fields in source order and a re-dump must give the same bytes.
    return json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _dataset_name(ds: LocomoDataset, results: Path | None) -> str:
    """Where the dataset lay: relative to ``results`` when it lies inside, a relative path without ``..`` as
    it is, else its file name (never absolute)."""
    src = Path(ds.source)
    if results is not None and (inside := tree.relative_inside(src, results)) is not None:
        return inside
    # A relative path without ``..`` (e.g. read back from a snapshot) already names the file safely.
    if not src.is_absolute() and ".." not in src.parts:
        return src.as_posix()
    return src.name


def run_record(r: LoadedRun) -> dict[str, Any]:
    """One ``qa-runs.jsonl`` line of a loaded run (JSON-ready)."""
    return {
        "run_id": r.run_id,
        "display_name": r.display_name,
        "join": None if r.join is None else dataclasses.asdict(r.join),
        "publishable": r.publishable,
        "not_publishable_because": list(r.not_publishable_because),
        "merged_from": list(r.merged_from),
        "duplicates": list(r.duplicates),
        "accuracy_without_disputed": r.accuracy_without_disputed,
        "n_disputed": r.n_disputed,
        "meta": r.meta.model_dump(mode="json"),
        "score": dataclasses.asdict(r.score),
    }


_WITH_RUN_ID = SCHEMA.insert(0, pa.field("run_id", pa.string()))


def questions_of(runs: Sequence[LoadedRun]) -> pa.Table:
    """Every run's question table, one after the other, ``run_id`` first."""
    tables = [r.table.add_column(0, "run_id", pa.array([r.run_id] * r.table.num_rows, pa.string())) for r in runs]
    return pa.concat_tables(tables) if tables else _WITH_RUN_ID.empty_table()


def write_qa_snapshot(load: QaLoad, out: Path, *, results: Path | None = None) -> list[Path]:
    """Write ``qa-load.json`` and ``qa-runs.jsonl`` into ``out``; returns their paths.

    ``results``: the results directory the load came from, so the LoCoMo dataset is named relative to it
    (otherwise by file name). Load errors and skipped files are not part of a snapshot.
    """
    out.mkdir(parents=True, exist_ok=True)
    load_doc = {
        "snapshot_version": SNAPSHOT_VERSION,
        "scoring_version": SCORING_VERSION,
        "locomo": None
        if load.locomo is None
        else {"source": _dataset_name(load.locomo, results), "sha256": load.locomo.sha256},
        "disputed": sorted(load.disputed),
        "runs": len(load.runs),
    }
    paths = [out / LOAD_FILE, out / RUNS_FILE, out / QUESTIONS_FILE]
    paths[0].write_text(json.dumps(load_doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    with paths[1].open("w", encoding="utf-8", newline="\n") as f:
        for r in load.runs:
            f.write(_dump_line(run_record(r)) + "\n")
    parquet.write(questions_of(load.runs), paths[2])
    return paths


def has_qa_snapshot(directory: Path) -> bool:
    """True when ``directory`` holds the three QA snapshot files."""
    return all((directory / f).is_file() for f in (LOAD_FILE, RUNS_FILE, QUESTIONS_FILE))


def _field(rec: dict[str, Any], key: str, where: str) -> Any:
    if key not in rec:
        raise SnapshotError(f"{where}: field {key!r} is missing")
    return rec[key]


def _score(doc: Any) -> RunScore:
    """A :class:`RunScore` from its ``dataclasses.asdict`` form."""
    groups = {name: {k: GroupScore(**g) for k, g in doc[name].items()} for name in ("categories", "kinds")}
    return RunScore(**{**doc, **groups, "judges": tuple(doc["judges"]), "latency_ms": tuple(doc["latency_ms"])})


def _header_fields(rec: Any, where: str) -> dict[str, Any]:
    """The :class:`QaRunHeader` fields of one run line, checked."""
    if not isinstance(rec, dict):
        raise SnapshotError(f"{where}: a run line must be a JSON object")
    try:
        meta = RunMeta.model_validate(_field(rec, "meta", where))
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise SnapshotError(f"{where}: field meta.{loc}: {err['msg']}") from exc
    join = _field(rec, "join", where)
    try:
        report = None if join is None else JoinReport(**{**join, "unmatched": tuple(join["unmatched"])})
        score = _score(_field(rec, "score", where))
    except (TypeError, KeyError, AttributeError) as exc:
        raise SnapshotError(f"{where}: field 'join' or 'score' is malformed ({exc})") from exc
    return {
        "meta": meta,
        "run_id": str(_field(rec, "run_id", where)),
        "display_name": str(_field(rec, "display_name", where)),
        "score": score,
        "join": report,
        "publishable": bool(_field(rec, "publishable", where)),
        "not_publishable_because": tuple(_field(rec, "not_publishable_because", where)),
        "merged_from": tuple(_field(rec, "merged_from", where)),
        "duplicates": tuple(_field(rec, "duplicates", where)),
        "accuracy_without_disputed": _field(rec, "accuracy_without_disputed", where),
        "n_disputed": int(_field(rec, "n_disputed", where)),
    }


def _tables_by_run(path: Path) -> dict[str, pa.Table]:
    """Each run's question table: a slice (no copy) of the one Parquet table, which holds a run's rows together."""
    table = parquet.read(path)
    if table.schema.names != ["run_id", *SCHEMA.names]:
        raise SnapshotError(f"{path}: the columns are not those of this memeval's question table")
    # Parquet names list items ``element``: cast back to the schema the load builds (same values).
    table = table.cast(_WITH_RUN_ID)
    spans = parquet.spans(table.column("run_id"), f"{path}: the rows of run")
    return {run_id: table.slice(lo, hi - lo).drop_columns(["run_id"]) for run_id, (lo, hi) in spans.items()}


def _load_doc(directory: Path) -> dict[str, Any]:
    """``qa-load.json``, checked: a JSON object of this layout and this scoring code."""
    load_path = directory / LOAD_FILE
    doc = versioned_document(load_path, SNAPSHOT_VERSION)
    if doc.get("scoring_version") != SCORING_VERSION:
        raise SnapshotError(
            f"{load_path}: scoring_version {doc.get('scoring_version')!r} differs from this memeval's "
            f"{SCORING_VERSION!r}; export the results again"
        )
    return doc


def _run_fields(directory: Path, doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The header fields of every line of ``qa-runs.jsonl``, in order; their number checked against ``doc``."""
    runs_path = directory / RUNS_FILE
    out: list[dict[str, Any]] = []
    with runs_path.open("rb") as f:
        for n, line in enumerate(f, start=1):
            where = f"{runs_path} line {n}"
            try:
                rec = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise SnapshotError(f"{where}: not valid JSON: {exc.msg}") from exc
            out.append(_header_fields(rec, where))
    if len(out) != doc.get("runs"):
        raise SnapshotError(
            f"{directory / LOAD_FILE}: field 'runs' says {doc.get('runs')!r} runs, {runs_path.name} holds {len(out)}"
        )
    return out


def read_qa_snapshot(directory: Path) -> QaLoad:
    """Rebuild the :class:`QaLoad` a snapshot was written from (no errors, no skipped files).

    ``locomo`` is a :class:`LocomoDataset` without questions that names the dataset the runs were joined
    against: the joins themselves are in the runs, the dataset is not shipped. Raise ``ValueError`` naming
    the file and field when the snapshot is malformed, of another layout version or other scoring code.
    """
    doc = _load_doc(directory)
    ds_doc = _field(doc, "locomo", str(directory / LOAD_FILE))
    ds = None if ds_doc is None else LocomoDataset((), str(ds_doc["source"]), str(ds_doc["sha256"]))
    tables = _tables_by_run(directory / QUESTIONS_FILE)
    # A run without questions gets an empty table, made only then: building one from Python makes pyarrow
    # import pandas, which a warm start otherwise never needs.
    runs = tuple(
        LoadedRun(**f, table=tables[f["run_id"]] if f["run_id"] in tables else SCHEMA.empty_table())
        for f in _run_fields(directory, doc)
    )
    disputed = _field(doc, "disputed", str(directory / LOAD_FILE))
    return QaLoad(runs, (), (), ds, frozenset(str(d) for d in disputed))


QaRunsReader = Callable[[Sequence[str]], tuple[LoadedRun, ...]]
"""Reads the runs of the given ids, questions included, in that order; ``KeyError`` for an unknown id."""


@dataclass(frozen=True)
class QaHeaders:
    """A QA load opened for reading: every run's header in memory, a run's questions read when it is asked for."""

    runs: tuple[QaRunHeader, ...]
    """Run headers (every leaderboard row), in load order."""
    locomo_source: str | None
    """The LoCoMo dataset the runs were joined against, when any."""
    disputed: frozenset[str]
    """Disputed LoCoMo question ids (locomo-audit)."""
    read_runs: QaRunsReader
    """Whole runs by id."""
    errors: tuple[IngestError, ...] = ()
    """One error per file that could not be loaded."""
    skipped: tuple[Skipped, ...] = ()
    """Files with no QA run, each with the reason."""


def headers_of(load: QaLoad) -> QaHeaders:
    """:class:`QaHeaders` over a load already in memory."""
    by_id = {r.run_id: r for r in load.runs}
    source = None if load.locomo is None else load.locomo.source
    return QaHeaders(
        load.runs, source, load.disputed, lambda ids: tuple(by_id[i] for i in ids), load.errors, load.skipped
    )


def open_qa_snapshot(directory: Path) -> QaHeaders:
    """A QA snapshot opened for per-run reads: the run lines now, a run's questions (the Parquet row groups that
    hold its rows) when it is asked for. Same checks as :func:`read_qa_snapshot`."""
    doc = _load_doc(directory)
    ds_doc = _field(doc, "locomo", str(directory / LOAD_FILE))
    disputed = frozenset(str(d) for d in _field(doc, "disputed", str(directory / LOAD_FILE)))
    headers = tuple(QaRunHeader(**fields) for fields in _run_fields(directory, doc))
    path = directory / QUESTIONS_FILE
    by_id = {h.run_id: h for h in headers}

    @functools.cache
    def spans() -> dict[str, tuple[int, int]]:  # read on the first request: a leaderboard never needs it
        if parquet.schema(path).names != _WITH_RUN_ID.names:
            raise SnapshotError(f"{path}: the columns are not those of this memeval's question table")
        return parquet.run_spans(path)

    def read_runs(run_ids: Sequence[str]) -> tuple[LoadedRun, ...]:
        headers = [by_id[i] for i in run_ids]
        tables = parquet.read_spans(path, [spans().get(i, (0, 0)) for i in run_ids])
        return tuple(_run(h, t) for h, t in zip(headers, tables, strict=True))

    return QaHeaders(headers, None if ds_doc is None else str(ds_doc["source"]), disputed, read_runs)


def _run(header: QaRunHeader, rows: pa.Table) -> LoadedRun:
    """The run ``header`` describes, with its rows of the question table."""
    fields = {f.name: getattr(header, f.name) for f in dataclasses.fields(QaRunHeader)}
    if not rows.num_rows:
        return LoadedRun(**fields, table=SCHEMA.empty_table())
    return LoadedRun(**fields, table=rows.cast(_WITH_RUN_ID).drop_columns(["run_id"]))
