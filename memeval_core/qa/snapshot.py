"""A self-contained snapshot of loaded QA runs: what an export ships so the Space shows LoCoMo/LongMemEval.

Two files rebuild a :class:`QaLoad` without the raw result files, the sidecars or ``locomo10.json``:

- ``qa-load.json``: ``snapshot_version``, the scoring version, the LoCoMo dataset the runs were joined
  against (relative path and SHA-256 only; the dataset is CC BY-NC and is never shipped) and the
  disputed LoCoMo question ids (locomo-audit);
- ``qa-runs.jsonl``: one line per run, in load order: ``run_id``, ``display_name``, the join report, the
  publishable verdict and its reasons, ``merged_from``, ``duplicates``, ``accuracy_without_disputed``,
  ``n_disputed`` - everything derived from data that is not shipped - and ``qa_run``, the run in
  memeval's canonical versioned run format (:class:`memeval_core.qa.models.QaRun`).

Per-question scores are not stored: reading re-scores each ``qa_run`` with
:func:`memeval_core.qa.scoring.score_run`, which is a pure function of the run, so the rebuilt
:class:`LoadedRun` equals the loaded one. A snapshot written by other scoring code is refused.

The run lines use the key ``qa_run`` rather than ``run`` so that a snapshot folder scanned as raw
results is never mistaken for runs written in memeval's own format.

Writing is deterministic (fixed key order, no timestamps, compact JSON) so equal loads give
byte-identical files, and writing a snapshot read back from disk reproduces it byte for byte.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from memeval_core import SCORING_VERSION
from memeval_core.qa.ingest import LoadedRun, QaLoad
from memeval_core.qa.locomo import JoinReport, LocomoDataset
from memeval_core.qa.models import QaRun

LOAD_FILE = "qa-load.json"
"""Load-level facts: version, LoCoMo dataset reference, disputed ids."""
RUNS_FILE = "qa-runs.jsonl"
"""One run per line."""
SNAPSHOT_VERSION = 1
"""Layout version of the two files."""


def _dump_line(obj: Any) -> str:
    # No sort_keys: pydantic keeps extra fields in source order and a re-dump must give the same bytes.
    return json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _dataset_name(ds: LocomoDataset, results: Path | None) -> str:
    """Where the dataset lay: relative to ``results`` when it lies inside, a relative path without ``..`` as
    it is, else its file name (never absolute)."""
    src = Path(ds.source)
    if results is not None:
        # Lexically first: through a symlinked results tree the file lies inside even when its target does not.
        for p, r in ((src.absolute(), results.absolute()), (src.resolve(), results.resolve())):
            try:
                return p.relative_to(r).as_posix()
            except ValueError:
                continue
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
        "qa_run": r.run.model_dump(mode="json"),
    }


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
    paths = [out / LOAD_FILE, out / RUNS_FILE]
    paths[0].write_text(json.dumps(load_doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    with paths[1].open("w", encoding="utf-8", newline="\n") as f:
        for r in load.runs:
            f.write(_dump_line(run_record(r)) + "\n")
    return paths


def has_qa_snapshot(directory: Path) -> bool:
    """True when ``directory`` holds both QA snapshot files."""
    return all((directory / f).is_file() for f in (LOAD_FILE, RUNS_FILE))


def _field(rec: dict[str, Any], key: str, where: str) -> Any:
    if key not in rec:
        raise ValueError(f"{where}: field {key!r} is missing")
    return rec[key]


def _loaded_run(rec: Any, where: str) -> LoadedRun:
    if not isinstance(rec, dict):
        raise ValueError(f"{where}: a run line must be a JSON object")
    try:
        run = QaRun.model_validate(_field(rec, "qa_run", where))
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise ValueError(f"{where}: field qa_run.{loc}: {err['msg']}") from exc
    join = _field(rec, "join", where)
    try:
        report = None if join is None else JoinReport(**{**join, "unmatched": tuple(join["unmatched"])})
    except (TypeError, KeyError) as exc:
        raise ValueError(f"{where}: field 'join' is not a join report ({exc})") from exc
    return LoadedRun.of(
        run,
        str(_field(rec, "run_id", where)),
        str(_field(rec, "display_name", where)),
        join=report,
        publishable=bool(_field(rec, "publishable", where)),
        not_publishable_because=tuple(_field(rec, "not_publishable_because", where)),
        merged_from=tuple(_field(rec, "merged_from", where)),
        duplicates=tuple(_field(rec, "duplicates", where)),
        accuracy_without_disputed=_field(rec, "accuracy_without_disputed", where),
        n_disputed=int(_field(rec, "n_disputed", where)),
    )


def read_qa_snapshot(directory: Path) -> QaLoad:
    """Rebuild the :class:`QaLoad` a snapshot was written from (runs re-scored; no errors, no skipped files).

    ``locomo`` is a :class:`LocomoDataset` without questions that names the dataset the runs were joined
    against: the joins themselves are in the runs, the dataset is not shipped. Raise ``ValueError`` naming
    the file and field when the snapshot is malformed, of another layout version or other scoring code.
    """
    load_path, runs_path = directory / LOAD_FILE, directory / RUNS_FILE
    try:
        doc = json.loads(load_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{load_path}: not valid JSON: {exc.msg} at line {exc.lineno}") from exc
    if not isinstance(doc, dict):
        raise ValueError(f"{load_path}: expected a JSON object")
    if doc.get("snapshot_version") != SNAPSHOT_VERSION:
        raise ValueError(f"{load_path}: snapshot_version {doc.get('snapshot_version')!r} is not supported")
    if doc.get("scoring_version") != SCORING_VERSION:
        raise ValueError(
            f"{load_path}: scoring_version {doc.get('scoring_version')!r} differs from this memeval's "
            f"{SCORING_VERSION!r}; export the results again"
        )
    ds_doc = _field(doc, "locomo", str(load_path))
    ds = None if ds_doc is None else LocomoDataset((), str(ds_doc["source"]), str(ds_doc["sha256"]))
    runs: list[LoadedRun] = []
    with runs_path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            where = f"{runs_path} line {n}"
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where}: not valid JSON: {exc.msg}") from exc
            runs.append(_loaded_run(rec, where))
    if len(runs) != doc.get("runs"):
        raise ValueError(f"{load_path}: field 'runs' says {doc.get('runs')!r} runs, {runs_path.name} holds {len(runs)}")
    disputed = _field(doc, "disputed", str(load_path))
    return QaLoad(tuple(runs), (), (), ds, frozenset(str(d) for d in disputed))
