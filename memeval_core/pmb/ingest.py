"""Find, parse, recognise, re-score and verify every PMB file under a results directory.

Files are recognised by their content, not their name: a report is an object with ``provider``
and a ``cases`` list (session reports have ``turnIndex`` on their entries), fixtures are lists of
cases or beliefs. Each bad file yields one :class:`IngestError` naming the file and the JSON path;
the other files still load.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import count, repeat
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, TypeAdapter, ValidationError

from memeval_core import file_pool, settings, tree
from memeval_core.errors import IngestError, json_path, refuse_unwritable
from memeval_core.pmb.case_table import CaseTable
from memeval_core.pmb.entries import ReportColumns, columns_of_report, report_columns
from memeval_core.pmb.fixtures import BELIEFS_FILE, CASES_FILE, SESSION_CASES_FILE, PmbFixture
from memeval_core.pmb.models import Belief, RetrievalCase, SessionCase, SessionReport, SingleTurnReport
from memeval_core.pmb.rescore import aggregate_columns, columns, session_rows, single_turn_rows
from memeval_core.pmb.run import (
    Benchmark,
    PmbRun,
    RunIdentity,
    assign_display_names,
    load_order,
    provenance_pairs,
)
from memeval_core.pmb.verify import verify_columns, verify_ingestion, verify_summary

Kind = Literal["single-turn-report", "session-report", "cases", "session-cases", "beliefs"]

_REPORT_NAME_HINT = "retrieval-report"


@dataclass(frozen=True)
class RawFile:
    """A JSON file read from disk: its bytes' hash and parsed content."""

    path: Path
    """Absolute path."""
    rel: str
    """Path relative to the directory it was found under (POSIX separators)."""
    sha256: str
    """SHA-256 of the bytes."""
    data: Any
    """Parsed JSON."""


@dataclass(frozen=True)
class PmbLoad:
    """Everything loaded from one results directory."""

    runs: tuple[PmbRun, ...]
    """Re-scored runs, single-turn first, in file order."""
    errors: tuple[IngestError, ...]
    """One error per file that could not be loaded."""
    fixture: PmbFixture | None
    """The fixture the runs were scored against."""
    skipped: tuple[str, ...]
    """JSON files that are neither PMB reports nor fixtures (left alone)."""


_BOM = b"\xef\xbb\xbf"


def parse_json_bytes(raw: bytes, rel: str) -> Any:
    """Parse JSON bytes; raise :class:`IngestError` for empty, non-UTF-8, too deeply nested or invalid JSON
    (NaN included)."""
    if (deep := tree.too_deep(raw, settings.limits())) is not None:
        raise IngestError(rel, "$", deep, "flatten the document; no result format nests this deep")
    try:
        # orjson is several times faster than json and, like the strict path below, rejects NaN and Infinity.
        return orjson.loads(raw[3:] if raw.startswith(_BOM) else raw)
    except orjson.JSONDecodeError:
        # The standard parser explains the problem (line, column, byte offset); it also reads integers
        # wider than 64 bits, which orjson refuses.
        return _parse_json_strict(raw, rel)


def _parse_json_strict(raw: bytes, rel: str) -> Any:
    if not raw or raw.isspace():  # isspace stops at the first other byte; strip() would copy the file
        raise IngestError(rel, "$", "file is empty", "re-export the run; an empty file holds no results")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise IngestError(
            rel, "$", f"not UTF-8 text (bad byte at offset {exc.start})", "save the file as UTF-8 JSON"
        ) from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise IngestError(
            rel,
            "$",
            f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            "fix the JSON syntax or re-export the file",
        ) from exc
    except ValueError as exc:
        raise IngestError(rel, "$", f"not valid JSON: {exc}", "fix the JSON syntax or re-export the file") from exc
    except RecursionError as exc:
        raise IngestError(rel, "$", "JSON nested too deeply", "flatten the document") from exc
    refuse_unwritable(data, rel)
    return data


def read_json(path: Path, rel: str) -> RawFile:
    """Read and parse one file; raise :class:`IngestError` for unreadable, empty or invalid JSON."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise IngestError(rel, "$", f"cannot be read: {exc.strerror}") from exc
    return RawFile(path, rel, hashlib.sha256(raw).hexdigest(), parse_json_bytes(raw, rel))


def sniff(data: Any) -> Kind | None:
    """What a parsed JSON document is, judged by its content."""
    if isinstance(data, dict) and "provider" in data and isinstance(data.get("cases"), list):
        entries = [e for e in data["cases"] if isinstance(e, dict)]
        if any("turnIndex" in e or "retrievedBeliefIds" in e for e in entries):
            return "session-report"
        if not entries and isinstance(data.get("retrieval"), dict) and "turnCount" in data["retrieval"]:
            return "session-report"
        return "single-turn-report"
    if isinstance(data, list) and data and all(isinstance(x, dict) for x in data):
        first = data[0]
        if "caseId" in first and "turns" in first:
            return "session-cases"
        if "caseId" in first and "expect" in first:
            return "cases"
        if "_id" in first and "canonical_name" in first:
            return "beliefs"
    return None


def _validation_error(rel: str, exc: ValidationError, what: str) -> IngestError:
    errs = exc.errors()
    first = errs[0]
    more = f" (and {len(errs) - 1} more problem{'s' if len(errs) > 2 else ''})" if len(errs) > 1 else ""
    got = first.get("input")
    shown = json.dumps(got)[:60] if isinstance(got, (str, int, float, bool)) or got is None else type(got).__name__
    return IngestError(
        rel,
        json_path(first["loc"]),
        f"{first['msg']} (got {shown}){more}",
        f"this does not match the {what} format; see docs/FORMATS.md",
    )


def _validate(model: type[BaseModel] | TypeAdapter[Any], raw: RawFile, what: str) -> Any:
    try:
        if isinstance(model, TypeAdapter):
            return model.validate_python(raw.data)
        return model.model_validate(raw.data)
    except ValidationError as exc:
        raise _validation_error(raw.rel, exc, what) from exc


_CASES = TypeAdapter(list[RetrievalCase])
_SESSION_CASES = TypeAdapter(list[SessionCase])
_BELIEFS = TypeAdapter(list[Belief])


def load_fixture(directory: Path) -> PmbFixture:
    """Load the three PMB fixture files from a directory; raise :class:`IngestError` on any problem."""
    return _read_fixture(directory)[0]


def _read_fixture(directory: Path) -> tuple[PmbFixture, dict[Path, RawFile]]:
    """:func:`load_fixture`, and the files it read by path."""
    files: dict[str, RawFile] = {}
    for name in (CASES_FILE, SESSION_CASES_FILE, BELIEFS_FILE):
        p = directory / name
        if not p.is_file():
            raise IngestError(
                str(p), "$", "fixture file is missing", "run `python -m memeval_core sync` or pass --fixtures DIR"
            )
        files[name] = read_json(p, str(p))
    fixture = PmbFixture(
        cases=tuple(_validate(_CASES, files[CASES_FILE], "retrieval.cases.json")),
        session_cases=tuple(_validate(_SESSION_CASES, files[SESSION_CASES_FILE], "session-retrieval.cases.json")),
        beliefs=tuple(_validate(_BELIEFS, files[BELIEFS_FILE], "beliefs.seed.json")),
        source=str(directory),
        sha256={k: v.sha256 for k, v in files.items()},
    )
    return fixture, {raw.path: raw for raw in files.values()}


def find_fixture_dir(root: Path) -> Path | None:
    """The shallowest directory under root (then by path) that holds ``retrieval.cases.json``."""
    if (root / CASES_FILE).is_file():
        return root
    found = [e.rel for e in tree.walk(root, (CASES_FILE,)).files if e.rel.rpartition("/")[2] == CASES_FILE]
    candidates = sorted(((root / rel).parent for rel in found), key=lambda d: (len(d.parts), str(d)))
    return candidates[0] if candidates else None


def _entry_index(rel: str, report: ReportColumns, fixture: PmbFixture) -> dict[tuple[str, int | None], int]:
    """Position of each entry by (case id, turn index or None); raise :class:`IngestError` for the first entry
    (in file order) whose case the fixture lacks or that repeats an earlier one."""
    ids: list[str] = report.entries["case_id"]
    keys: list[tuple[str, int | None]]
    if report.session:
        keys = list(zip(ids, report.entries["turn_index"], strict=True))
        known = fixture.turn_by_key.keys() >= set(keys)
    else:
        keys = list(zip(ids, repeat(None)))
        known = fixture.case_by_id.keys() >= set(ids)
    index = dict(zip(keys, count()))
    if known and len(index) == len(keys):
        return index
    index = {}
    for i, key in enumerate(keys):
        if report.session:
            where, found = SESSION_CASES_FILE, key in fixture.turn_by_key
        else:
            where, found = CASES_FILE, key[0] in fixture.case_by_id
        if not found:
            what = key[0] if key[1] is None else f"{key[0]} turn {key[1]}"
            raise IngestError(
                rel,
                f"$.cases[{i}].caseId",
                f"{what!r} is not a case of {where} of {fixture.source}",
                "check that the report and the fixture come from the same benchmark version",
            )
        if key in index:
            raise IngestError(
                rel,
                f"$.cases[{i}].caseId",
                f"{key[0]!r} appears twice (first at $.cases[{index[key]}])",
                "each case may be reported once per run",
            )
        index[key] = i
    return index


def build_run(raw: RawFile, kind: Kind, fixture: PmbFixture) -> PmbRun:
    """Validate, re-score and verify one report; raise :class:`IngestError` on bad content."""
    return _scored(raw.rel, raw.sha256, _validated(raw, kind, fixture), fixture)


OVERSIZE_FACTOR = 10
"""A report listing more than this many times the fixture's entries is refused before validation: every
entry beyond the fixture's repeats or is unknown, and validating a million bad entries costs gigabytes."""


def _validated(raw: RawFile, kind: Kind, fixture: PmbFixture) -> ReportColumns:
    session = kind == "session-report"
    expected = len(fixture.turn_by_key) if session else len(fixture.cases)
    listed = len(raw.data["cases"])
    if listed > OVERSIZE_FACTOR * max(expected, 1):
        raise IngestError(
            raw.rel,
            "$.cases",
            f"lists {listed:,} entries; the fixture has {expected:,} "
            f"{'session turns' if session else 'cases'}, so most of them repeat or are unknown",
            "check that the report and the fixture come from the same benchmark",
        )
    columns = report_columns(raw.data, session)
    if columns is not None:
        return columns
    # Something does not validate as columns: the report model says what (or, should it accept the data,
    # gives the same columns).
    report: SingleTurnReport | SessionReport = _validate(
        SessionReport if session else SingleTurnReport, raw, "session report" if session else "single-turn report"
    )
    return columns_of_report(report)


def _scored(rel: str, sha256: str, report: ReportColumns, fixture: PmbFixture) -> PmbRun:
    """:func:`build_run` of a validated report (``rel``, ``sha256``: its file's)."""
    session = report.session
    keys = _entry_index(rel, report, fixture)
    cols = columns(session_rows(report.entries, fixture) if session else single_turn_rows(report.entries, fixture))
    header = report.header
    derived = aggregate_columns(cols, stated_categories=True)
    mismatches = verify_summary(header.retrieval, derived, session)
    if header.ingestion is not None:
        mismatches += verify_ingestion(header.ingestion)
    mismatches += verify_columns(cols, keys)
    stem = rel.rsplit("/", 1)[-1].removesuffix(".json")
    benchmark: Benchmark = "pmb-session" if session else "pmb-single-turn"
    return PmbRun(
        identity=RunIdentity(
            run_id=f"{stem}-{sha256[:10]}",
            display_name=header.provider,
            provider=header.provider,
            benchmark=benchmark,
            source=rel,
            sha256=sha256,
        ),
        table=CaseTable.from_columns(cols),
        # Every entry states the fixture's category (or none) in current reports: the grouping is the same.
        aggregate=derived if cols["stated_category"] == cols["category"] else aggregate_columns(cols),
        stated=header.retrieval,
        ingestion=header.ingestion,
        mismatches=tuple(mismatches),
        extra_fields=tuple(
            sorted((header.model_extra or {}).keys() | ({"provenance"} if header.provenance else set()))
        ),
        provenance=provenance_pairs(header.provenance),
    )


@dataclass(frozen=True)
class _ReportError:
    """A report that could not be scored (listed after every read error, as the serial order has it)."""

    error: IngestError


_Outcome = PmbRun | _ReportError | IngestError | str | None
"""What one file gave: a run, a scoring error, a read error, a skipped file's path, or nothing (a fixture)."""


def _load_file(path: Path, rel: str, fixture: PmbFixture | None, read: RawFile | None = None) -> _Outcome:
    """Read, sniff and (for reports) score one file.

    ``read``: the file as already read (a fixture file), instead of reading it again.
    """
    if read is not None:
        raw = replace(read, rel=rel)
    else:
        try:
            raw = read_json(path, rel)
        except IngestError as exc:
            return exc
    kind = sniff(raw.data)
    if kind in ("single-turn-report", "session-report"):
        if fixture is None:
            return _ReportError(
                IngestError(
                    raw.rel,
                    "$",
                    "no PMB fixture found to score this report against",
                    "run `python -m memeval_core sync`, or pass --fixtures DIR (the folder with retrieval.cases.json)",
                )
            )
        try:
            report = _validated(raw, kind, fixture)
            sha256 = raw.sha256
            # Dropping the parsed JSON before scoring lets scoring reuse its (recently touched) memory.
            del raw
            return _scored(rel, sha256, report, fixture)
        except IngestError as exc:
            return _ReportError(exc)
    if kind is None:
        if _REPORT_NAME_HINT in path.name:
            return IngestError(
                rel,
                "$",
                "named like a PMB report but is not one: expected an object with 'provider' and a 'cases' list",
                "check that this is a retrieval-report JSON written by the PMB harness",
            )
        return rel
    return None


_worker_fixture: PmbFixture | None = None


def _init_worker(fixture: PmbFixture | None) -> None:
    global _worker_fixture
    _worker_fixture = fixture


_RUN_FIELDS = tuple(f.name for f in dataclasses.fields(PmbRun))


@dataclass(frozen=True)
class _Shipped:
    """A run scored in a worker process, as it travels back: its cases in Arrow's IPC format (:meth:`CaseTable.ipc`),
    its other fields as they are. Not the run with an empty table: pickling an Arrow table costs about as much
    empty as full."""

    cases: bytes
    fields: dict[str, Any]
    """Every field of :class:`PmbRun` but ``table``, by name."""

    @classmethod
    def of(cls, run: PmbRun) -> _Shipped:
        return cls(run.table.ipc(), {name: getattr(run, name) for name in _RUN_FIELDS if name != "table"})

    def unpacked(self) -> PmbRun:
        return PmbRun(table=CaseTable.from_ipc(self.cases), **self.fields)


def _load_file_in_worker(path: Path, rel: str) -> _Outcome | _Shipped:
    outcome = _load_file(path, rel, _worker_fixture)
    return _Shipped.of(outcome) if isinstance(outcome, PmbRun) else outcome


def _outcomes(
    paths: Sequence[Path],
    rels: Sequence[str],
    fixture: PmbFixture | None,
    read: Mapping[Path, RawFile] | None = None,
) -> Iterator[_Outcome | _Shipped]:
    """Every file's outcome, in file order (:func:`memeval_core.file_pool.in_order`).

    This process only collects: taking results file by file as they come keeps memory flat at a thousand
    reports. ``read``: files already read (the fixture's), by path.
    """
    read = read or {}

    def here(path: Path, rel: str) -> _Outcome | _Shipped:
        return _load_file(path, rel, fixture, read.get(path))

    items = list(zip(paths, rels, strict=True))
    return file_pool.in_order(
        _load_file_in_worker, items, paths, serial=here, initializer=_init_worker, initargs=(fixture,)
    )


@dataclass
class PmbScan:
    """A PMB load under way: the fixture now, the runs one by one as they are scored (:attr:`runs`), and, once
    they are all taken, every file that could not be loaded or was skipped."""

    fixture: PmbFixture | None
    """The fixture the reports are scored against; None when none was found (then no report is scored)."""
    runs: Iterator[PmbRun]
    """The scored runs in file order, under their providers' names (see :func:`load_order`,
    :func:`display_names`); taking them fills :attr:`errors` and :attr:`skipped`."""
    errors: list[IngestError]
    """One error per file that could not be loaded: read errors as they come, then the reports not scored."""
    skipped: list[str]
    """JSON files that are neither PMB reports nor fixtures."""


def scan_pmb(results: Path, fixtures: Path | None = None) -> PmbScan:
    """Start loading every PMB report under ``results``, scored against ``fixtures`` (default: found under
    results)."""
    errors: list[IngestError] = []
    fixture: PmbFixture | None = None
    fixture_files: dict[Path, RawFile] = {}
    fixture_dir = fixtures if fixtures is not None else find_fixture_dir(results)
    if fixture_dir is not None:
        try:
            fixture, fixture_files = _read_fixture(fixture_dir)
        except IngestError as exc:
            errors.append(exc)
    listing = tree.walk(results, (".json",), settings.limits())
    errors.extend(IngestError(r.rel, "$", f"not read: {r.reason}", r.fix) for r in listing.refused)
    rels = [e.rel for e in listing.files]
    outcomes = _outcomes([results / rel for rel in rels], rels, fixture, fixture_files)
    scan = PmbScan(fixture, iter(()), errors, [])
    scan.runs = _runs_of(outcomes, scan)
    return scan


def _runs_of(outcomes: Iterator[_Outcome | _Shipped], scan: PmbScan) -> Iterator[PmbRun]:
    """The runs among ``outcomes``; the rest goes to ``scan``'s errors (scoring errors after all read errors)
    and skipped files."""
    report_errors: list[IngestError] = []
    for outcome in outcomes:
        if isinstance(outcome, _Shipped):
            yield outcome.unpacked()
        elif isinstance(outcome, PmbRun):
            yield outcome
        elif isinstance(outcome, _ReportError):
            report_errors.append(outcome.error)
        elif isinstance(outcome, IngestError):
            scan.errors.append(outcome)
        elif outcome is not None:
            scan.skipped.append(outcome)
    scan.errors.extend(report_errors)


def load_pmb(results: Path, fixtures: Path | None = None) -> PmbLoad:
    """Load every PMB report under ``results``, scored against ``fixtures`` (default: found under results).

    Each report is scored as soon as it is parsed and its JSON dropped: holding every parsed report first
    would need gigabytes at a thousand runs.
    """
    scan = scan_pmb(results, fixtures)
    runs = sorted(scan.runs, key=lambda r: load_order(r.identity))
    return PmbLoad(tuple(assign_display_names(runs)), tuple(scan.errors), scan.fixture, tuple(scan.skipped))


def run_from_bytes(name: str, data: bytes, fixture: PmbFixture) -> PmbRun:
    """Validate and score one uploaded PMB report without storing it; raise :class:`IngestError` if bad."""
    raw = RawFile(Path(name), name, hashlib.sha256(data).hexdigest(), parse_json_bytes(data, name))
    kind = sniff(raw.data)
    if kind not in ("single-turn-report", "session-report"):
        raise IngestError(
            name,
            "$",
            "not a PMB report: expected an object with 'provider' and a 'cases' list",
            "upload a retrieval-report or session-retrieval-report JSON written by the PMB harness",
        )
    return build_run(raw, kind, fixture)
