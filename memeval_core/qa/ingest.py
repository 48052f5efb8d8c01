"""Find, recognise, import, join, merge and score every QA result file under a results directory.

Files (``*.json``, ``*.jsonl``; ``*.csv`` through a generic mapping) are recognised by content, not
name. Steps: read every file; recognise the LoCoMo dataset, locomo-audit's disputed-answer list,
generic mapping files, zep grades/responses pairs and each importer's format; import; join LoCoMo
runs to ``locomo10.json`` (from ``datasets`` or found under ``results``); fill unstated answer
model, judge and top-k from configuration files beside the result (``metadata_sources``); merge
shards (files of one folder and format that cover disjoint conversations, e.g. one file per LoCoMo
conversation) into one run; drop exact duplicates (same answers and verdicts in two files); score;
check the publishable protocol. A bad file yields one :class:`IngestError`; the others still load.

A file that is a run on its own is imported, joined and scored as soon as it is read (in worker processes
when the load is large, :mod:`memeval_core.file_pool`), and only its table is kept: the parsed files of a
thousand runs would not fit in memory together. Files that may be shards of one run are read again to be merged.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import posixpath
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import orjson
import pyarrow as pa

from memeval_core import file_pool, settings, tree
from memeval_core.errors import IngestError, refuse_unwritable
from memeval_core.pmb.ingest import parse_json_bytes
from memeval_core.pmb.ingest import sniff as pmb_sniff
from memeval_core.pmb.run import with_short_hash
from memeval_core.qa import locomo, publishable, shapes
from memeval_core.qa.columns import ColumnRun, Columns
from memeval_core.qa.importers import (
    cognitive_memory,
    evermemos,
    generic,
    mem0_eval,
    memorybench,
    mflow_longmemeval,
    native,
    zep,
)
from memeval_core.qa.importers._common import Source, UnjudgedError
from memeval_core.qa.locomo import JoinReport, LocomoDataset
from memeval_core.qa.models import QaRun, RunMeta
from memeval_core.qa.scoring import (
    QuestionScore,
    RunScore,
    accuracy_without,
    is_disputed_list,
    parse_disputed,
    score_columns,
    summarize_table,
)
from memeval_core.qa.table import questions_from_table, scores_from_table, table_of

SUFFIXES = (".json", ".jsonl", ".csv")
SIDECAR_MAX_BYTES = 256 * 1024
"""Configuration files beside a result are small; larger JSON files are not read for metadata."""

Importer = Callable[[Source], list[ColumnRun]]
SNIFFERS: tuple[tuple[str, Callable[[Any, str], bool], Importer], ...] = (
    ("memeval", native.sniff, native.load),
    ("evermemos", evermemos.sniff, evermemos.load),
    ("memorybench", memorybench.sniff, memorybench.load),
    ("cognitive-memory", cognitive_memory.sniff, cognitive_memory.load),
    ("mflow-longmemeval", mflow_longmemeval.sniff, mflow_longmemeval.load),
    ("mem0-eval", mem0_eval.sniff, mem0_eval.load),
)
"""Single-file importers, in the order their sniffers are tried."""


@dataclass(frozen=True)
class Skipped:
    """A file that holds no QA run to score, and why."""

    file: str
    """Path relative to the results directory."""
    reason: str
    """Why it was left alone."""
    fix: str = ""
    """What to do to load it, when it can be loaded."""


MAPPING_FIX = "describe it with a mapping file: `python -m memeval_core mapping {file}` writes one to edit"
"""The fix offered for a file of an unknown shape."""


@dataclass(frozen=True, kw_only=True)
class QaRunHeader:
    """What a leaderboard row of a QA run needs: its metadata, aggregates, join and protocol verdict.

    One line of the snapshot's ``qa-runs.jsonl``; a header-only load (:func:`memeval_core.results.load_headers`)
    reads these without any question.
    """

    meta: RunMeta
    """What ran, how, and where it came from."""
    run_id: str
    """Stable id: source stem (merged runs: system and folder) plus the first 10 hex digits of the SHA-256."""
    display_name: str
    """Name unique within the benchmark: the system, plus the variant where systems repeat."""
    score: RunScore
    """Aggregates re-derived from the questions."""
    join: JoinReport | None
    """How the questions matched locomo10.json (LoCoMo runs with the dataset available)."""
    publishable: bool
    """The run meets its benchmark's declared protocol."""
    not_publishable_because: tuple[str, ...]
    """Every protocol condition the run fails."""
    merged_from: tuple[str, ...] = ()
    """Shard files merged into this run (empty for single-file runs)."""
    duplicates: tuple[str, ...] = ()
    """Other files with exactly the same answers and verdicts (not loaded as separate runs)."""
    accuracy_without_disputed: float | None = None
    """LoCoMo: accuracy without locomo-audit's disputed questions; None without the list or for other benchmarks."""
    n_disputed: int = 0
    """Scored questions left out of ``accuracy_without_disputed``."""


@dataclass(frozen=True, kw_only=True)
class LoadedRun(QaRunHeader):
    """One imported, joined and scored run: its header, and its questions as one table.

    The questions live in :attr:`table` (see :mod:`memeval_core.qa.table`); :attr:`run` and
    :attr:`question_scores` rebuild them as objects on first read, for the pages that show questions one
    by one. Pages that rank or aggregate read :attr:`meta`, :attr:`score` and the table's columns.
    """

    table: pa.Table = field(repr=False, hash=False)
    """One row per question: its fields and its score (:data:`memeval_core.qa.table.SCHEMA`)."""

    @classmethod
    def of(cls, run: QaRun, run_id: str, display_name: str, **rest: Any) -> LoadedRun:
        """A loaded run from a run in memeval's format: scored, its questions put in a table.

        ``rest``: the other fields (``join``, ``publishable`` and ``not_publishable_because`` default to
        none, False and no reasons).
        """
        return loaded_run(ColumnRun.of(run), run_id, display_name, **rest)

    @cached_property
    def run(self) -> QaRun:
        """The run in memeval's format, rebuilt from :attr:`table` on first read."""
        return QaRun(run=self.meta, questions=questions_from_table(self.table))

    @cached_property
    def question_scores(self) -> tuple[QuestionScore, ...]:
        """Every question's score, in run order, rebuilt from :attr:`table` on first read."""
        return scores_from_table(self.table)

    def with_run(self, run: QaRun) -> LoadedRun:
        """This loaded run with other questions or metadata (re-judged, say): scored again."""
        fresh = LoadedRun.of(run, self.run_id, self.display_name)
        return replace(self, meta=fresh.meta, table=fresh.table, score=fresh.score)


def loaded_run(run: ColumnRun, run_id: str, display_name: str, **rest: Any) -> LoadedRun:
    """:meth:`LoadedRun.of` of a run held as columns: scored column by column, its columns put in a table."""
    rest = {"join": None, "publishable": False, "not_publishable_because": (), **rest}
    table, score = _scored_table(run.columns)
    return LoadedRun(meta=run.run, table=table, run_id=run_id, display_name=display_name, score=score, **rest)


def _scored_table(columns: Columns) -> tuple[pa.Table, RunScore]:
    """A run's questions scored and put in a table, and its aggregates."""
    table = table_of(columns, score_columns(columns))
    return table, summarize_table(table)


@dataclass(frozen=True)
class QaLoad:
    """Everything loaded from one results directory."""

    runs: tuple[LoadedRun, ...]
    """Runs, by benchmark then display name."""
    errors: tuple[IngestError, ...]
    """One error per file that could not be loaded."""
    skipped: tuple[Skipped, ...]
    """Files with no QA run, each with the reason."""
    locomo: LocomoDataset | None
    """The LoCoMo dataset used for joining, when found."""
    disputed: frozenset[str]
    """Canonical ids of LoCoMo questions with disputed gold answers (locomo-audit ``errors.json``), when found."""


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def read_source(path: Path, rel: str, root_name: str = "") -> Source:
    """Read and parse one file (JSON, JSON Lines, CSV); raise :class:`IngestError` naming the line or offset."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise IngestError(rel, "$", f"cannot be read: {exc.strerror}") from exc
    if not raw or raw.isspace():  # isspace stops at the first other byte; strip() would copy the file
        raise IngestError(rel, "$", "file is empty", "re-export the run; an empty file holds no results")
    sha = hashlib.sha256(raw).hexdigest()
    if not rel.endswith((".csv", ".jsonl")):
        return Source(rel, sha, parse_json_bytes(raw, rel), root_name)
    limits = settings.limits()
    if rel.endswith(".jsonl") and (deep := tree.too_deep(raw, limits)) is not None:
        raise IngestError(rel, "$", deep, "flatten the document; no result format nests this deep")
    try:
        body = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise IngestError(rel, "$", f"not UTF-8 text (bad byte at offset {exc.start})", "save as UTF-8") from exc
    if rel.endswith(".csv"):
        return Source(rel, sha, _csv_rows(body, rel, limits.max_csv_field_bytes), root_name)
    rows = []
    for n, line in enumerate(body.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(orjson.loads(line))
            continue
        except orjson.JSONDecodeError:
            pass  # the standard parser says what is wrong
        try:
            rows.append(json.loads(line, parse_constant=_reject_constant))
        except (json.JSONDecodeError, ValueError, RecursionError) as exc:
            raise IngestError(rel, f"line {n}", f"not valid JSON: {exc}", "one JSON object per line") from exc
        refuse_unwritable(rows[-1], rel, n)
    return Source(rel, sha, rows, root_name)


def _csv_rows(body: str, rel: str, max_field: int) -> list[dict[str, str]]:
    """The rows of a CSV file as dicts; raise :class:`IngestError` naming the line of a malformed or overlong cell."""
    previous = csv.field_size_limit(max_field)
    reader = csv.DictReader(io.StringIO(body))
    try:
        return list(reader)
    except csv.Error as exc:
        hint = "raise MEMEVAL_MAX_CSV_FIELD_KB" if "field larger" in str(exc) else "fix the CSV quoting"
        # line_num counts the lines of the records read so far; the broken record starts on the next one.
        raise IngestError(rel, f"line {reader.line_num + 1}", f"not valid CSV: {exc}", hint) from exc
    finally:
        csv.field_size_limit(previous)


# ------------------------------------------------------------------ sidecar metadata

_SIDECAR_KEYS: dict[str, tuple[tuple[str, ...], ...]] = {
    "answer_model": (
        ("answer_model",),
        ("answering_model",),
        ("response_model",),
        ("llm_answer", "model"),
        ("evaluation", "answer_model"),
        ("config", "response_model"),
        ("configuration", "answer_model"),
    ),
    "judge_model": (
        ("judge_model",),
        ("llm_judge", "model"),
        ("evaluation", "judge_model"),
        ("config", "judge_model"),
        ("configuration", "judge_model"),
    ),
    "top_k": (
        ("top_k",),
        ("retrieval_top_k",),
        ("evaluation", "retrieval_top_k"),
        ("retrieval", "top_k"),
        ("config", "top_k_total"),
        ("configuration", "top_k"),
    ),
}


def _dig(obj: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


@dataclass
class SidecarCache:
    """What side-car lookups of one load have read: runs of one folder share the same neighbours."""

    listings: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    """Folder relative to the results (``""`` for the top) -> (name, size) of its ``*.json`` files, by name."""
    parsed: dict[str, Any] = field(default_factory=dict)
    """File path -> its parsed content, or :data:`_BROKEN` when it could not be read or parsed."""

    @classmethod
    def of(cls, listing: tree.Listing) -> SidecarCache:
        """The side-car candidates are the ``*.json`` files of the load's own walk (same rules, same limits)."""
        cache = cls()
        for entry in listing.files:
            if entry.rel.endswith(".json"):
                folder, _, name = entry.rel.rpartition("/")
                cache.listings.setdefault(folder, []).append((name, entry.size))
        return cache


_BROKEN = object()


def _parsed(path: str, cache: SidecarCache) -> Any:
    hit = cache.parsed.get(path, None)
    if hit is None:
        try:
            raw = Path(path).read_bytes()
            hit = orjson.loads(raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw)
        except (OSError, ValueError, RecursionError):  # a broken sidecar only means no metadata from it
            hit = _BROKEN
        cache.parsed[path] = hit
    return hit


def _sidecar_candidates(rel: str, root: Path, result_files: set[str], cache: SidecarCache) -> Iterator[tuple[str, str]]:
    """Small non-result JSON files in the result's folder and up to two folders up (and their ``config/``)."""
    folder = posixpath.dirname(rel)  # "" for the results folder itself
    for _ in range(3):
        for sub in (folder, f"{folder}/config" if folder else "config"):
            for name, size in cache.listings.get(sub, []):
                prel = f"{sub}/{name}" if sub else name
                if prel not in result_files and size <= SIDECAR_MAX_BYTES:
                    yield prel, str(root / prel)
        if not folder:
            break
        folder = posixpath.dirname(folder)


def fill_from_sidecars(run: ColumnRun, rel: str, root: Path, result_files: set[str], cache: SidecarCache) -> ColumnRun:
    """Fill answer model, judge model and top-k the run does not state from nearby configuration files.

    ``cache``: shared by the runs of one load (the load's walk), so that each file is parsed once.
    """
    update = sidecar_update(run.run, rel, root, result_files, cache)
    return run.with_meta(**update) if update else run


def sidecar_update(meta: RunMeta, rel: str, root: Path, result_files: set[str], cache: SidecarCache) -> dict[str, Any]:
    """The metadata :func:`fill_from_sidecars` sets (an empty dict when no side-car adds any)."""
    want = {
        "answer_model": meta.answer_model is None,
        "judge_model": not meta.judge_models,
        "top_k": meta.top_k is None,
    }
    found: dict[str, Any] = {}
    sources: list[str] = []
    for prel, path in _sidecar_candidates(rel, root, result_files, cache):
        if not any(want[k] and k not in found for k in want):
            break
        data = _parsed(path, cache)
        if data is _BROKEN:
            continue
        used = False
        for key, paths in _SIDECAR_KEYS.items():
            if not want[key] or key in found:
                continue
            for pth in paths:
                value = _dig(data, pth)
                ok = (
                    isinstance(value, int) and not isinstance(value, bool) if key == "top_k" else isinstance(value, str)
                )
                if ok and value:
                    found[key] = value
                    used = True
                    break
        if used:
            sources.append(prel)
    if not found:
        return {}
    if "judge_model" in found:
        found["judge_models"] = [found.pop("judge_model")]
    return {"metadata_sources": [*meta.metadata_sources, *sources], **found}


# ------------------------------------------------------------------ joining, merging, duplicates


def _join_locomo(run: ColumnRun, ds: LocomoDataset | None) -> tuple[ColumnRun, JoinReport | None]:
    if run.run.benchmark != locomo.BENCHMARK or ds is None:
        return run, None
    joined, report = locomo.join_columns(run, ds)
    if report.joined == report.total:
        # The dataset's codes are authoritative: whether category 5 is scored follows from the joined questions.
        c = joined.columns
        adversarial = any(s and cat == locomo.ADVERSARIAL for s, cat in zip(c["scored"], c["category"], strict=True))
        joined = joined.with_meta(includes_adversarial=adversarial)
    return joined, report


def _conversations(run: ColumnRun) -> frozenset[str] | None:
    convs = set(run.columns["conversation"])
    return None if None in convs else frozenset(c for c in convs if c is not None)


def _disjoint(convs: Sequence[frozenset[str] | None]) -> bool:
    """True when every run names its conversations and no two runs share one: shards of one run."""
    return all(c is not None for c in convs) and sum(len(c or ()) for c in convs) == len(
        set().union(*[c or set() for c in convs])
    )


def _shard_key(m: RunMeta) -> tuple[Any, ...]:
    folder = PurePosixPath(m.source_file or "").parent.as_posix()
    return (folder, m.format, m.benchmark, m.system, m.answer_model, m.top_k, tuple(m.judge_models))


_CONVERSATION_ORDER: dict[str | None, int] = {sample_id: i for i, sample_id in enumerate(locomo.SAMPLE_IDS)}


def _order_key(conversation: str | None, question_index: int | None, question_id: str) -> tuple[int, int, str]:
    conv = _CONVERSATION_ORDER.get(conversation, len(locomo.SAMPLE_IDS))
    return (conv, question_index if question_index is not None else -1, question_id)


def _merged_columns(shards: Sequence[ColumnRun]) -> Columns:
    """The shards' questions as one set of columns, in conversation, raw index and id order."""
    columns: Columns = {name: [v for s in shards for v in s.columns[name]] for name in shards[0].columns}
    keys = list(map(_order_key, columns["conversation"], columns["question_index"], columns["question_id"]))
    order = sorted(range(len(keys)), key=lambda i: keys[i])
    return {name: [values[i] for i in order] for name, values in columns.items()}


def merge_shards(
    items: Sequence[tuple[ColumnRun, JoinReport | None]],
) -> list[tuple[ColumnRun, JoinReport | None, tuple[str, ...], tuple[int, int]]]:
    """Merge runs of one folder, format, system and configuration whose conversations are disjoint.

    Each merged run lists its shard files in ``source_file`` (joined by `` + ``), hashes the
    shards' SHA-256 values in path order, and sums their join reports. The last element of each
    output names the items it came from: (first item of its shard group, first item of its own).
    """
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, (run, _) in enumerate(items):
        groups.setdefault(_shard_key(run.run), []).append(i)
    out: list[tuple[ColumnRun, JoinReport | None, tuple[str, ...], tuple[int, int]]] = []
    for idx in groups.values():
        if len(idx) < 2 or not _disjoint([_conversations(items[i][0]) for i in idx]):
            out.extend((items[i][0], items[i][1], (), (idx[0], i)) for i in idx)
            continue
        shards = sorted((items[i] for i in idx), key=lambda it: it[0].run.source_file or "")
        files = tuple(s.run.source_file or "" for s, _ in shards)
        first = shards[0][0].run
        dates = sorted(d for s, _ in shards if (d := s.run.date))
        sha = hashlib.sha256("".join(s.run.source_sha256 or "" for s, _ in shards).encode()).hexdigest()
        folder = PurePosixPath(files[0]).parent
        meta = first.model_copy(
            update={
                "variant": first.variant if len({s.run.variant for s, _ in shards}) == 1 else folder.name,
                "source_file": " + ".join(files),
                "source_sha256": sha,
                "date": dates[0] if dates else None,
                "includes_adversarial": any(s.run.includes_adversarial for s, _ in shards),
                "stated": {"shards": {s.run.source_file: s.run.stated for s, _ in shards}},
                "metadata_sources": sorted({m for s, _ in shards for m in s.run.metadata_sources}),
            }
        )
        merged = ColumnRun(meta, _merged_columns([s for s, _ in shards]))
        reports = [r for _, r in shards]
        report = None
        if all(r is not None for r in reports):
            rs = [r for r in reports if r is not None]
            report = JoinReport(
                total=sum(r.total for r in rs),
                joined=sum(r.joined for r in rs),
                by_key={k: sum(r.by_key.get(k, 0) for r in rs) for k in rs[0].by_key},
                unmatched=tuple(u for r in rs for u in r.unmatched),
                text_mismatches=sum(r.text_mismatches for r in rs),
                category_conflicts=sum(r.category_conflicts for r in rs),
                duplicates=sum(r.duplicates for r in rs),
            )
        out.append((merged, report, files, (idx[0], idx[0])))
    return out


def _fingerprint(loaded: LoadedRun) -> bytes:
    """Digest of what makes two runs exact duplicates: benchmark, system, and every answer with its verdicts."""
    c = loaded.table.select(["question_id", "answer", "verdicts"]).to_pydict()
    rows = sorted(
        # + 0.0: -0.0 equals 0.0 but serialises apart. Question ids are unique, so the sort never compares further.
        (qid, answer or "", sorted([(v["judge"], v["score"] + 0.0) for v in verdicts]))
        for qid, answer, verdicts in zip(c["question_id"], c["answer"], c["verdicts"], strict=True)
    )
    return hashlib.sha256(orjson.dumps([loaded.meta.benchmark, loaded.meta.system, rows])).digest()


def _richness(run: ColumnRun) -> tuple[int, int]:
    c = run.columns
    timed = sum(a is not None or b is not None for a, b in zip(c["latency_ms"], c["retrieval_latency_ms"], strict=True))
    return timed, sum(len(extra) for extra in c["extra"] if extra)


# ------------------------------------------------------------------ naming


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "run"


def _run_id(meta: RunMeta, merged: bool) -> str:
    first = (meta.source_file or "run").split(" + ")[0]
    stem = f"{meta.system}-{PurePosixPath(first).parent.name}" if merged else PurePosixPath(first).stem
    return f"{_slug(stem)}-{(meta.source_sha256 or '')[:10]}"


def assign_display_names(runs: Sequence[LoadedRun]) -> list[LoadedRun]:
    """The system where it is unique within its benchmark; else ``system (variant)``; the short hash last."""
    groups = [(r.meta.benchmark, r.meta.system) for r in runs]
    sizes = Counter(groups)
    names = []
    for r, group in zip(runs, groups, strict=True):
        system, variant = r.meta.system, r.meta.variant
        names.append(system if sizes[group] == 1 or not variant else f"{system} ({variant})")
    names = with_short_hash(names, groups, [r.meta.source_sha256 or "" for r in runs])
    return [replace(r, display_name=name) for r, name in zip(runs, names, strict=True)]


# ------------------------------------------------------------------ the whole load


_PMB_REPORT = object()
"""Stands in for the parsed content of a PrecisionMemBench report, which no QA importer reads."""


def _without_pmb_report(src: Source) -> Source:
    """``src``, or a stand-in without its content when it is a PMB report that no QA sniffer claims.

    A results folder with a thousand PMB reports holds gigabytes of them; keeping each parsed report
    until classification would hold all of them in memory at once.
    """
    if pmb_sniff(src.data) not in ("single-turn-report", "session-report"):
        return src
    route = _route(src)
    if route is not None and not isinstance(route, Skipped):
        return src
    return replace(src, data=_PMB_REPORT)


_Bucket = Literal["disputed", "mappings", "grades", "responses"]
"""The files that need others to make a run (or, disputed lists, that change the others' runs)."""


def _route(src: Source) -> _Bucket | Importer | Skipped | None:
    """Where :func:`_classify` puts ``src``: a bucket, the single-file importer that claims it, why it holds no run,
    or None when no format recognises it (the reason is worked out only for the files it is kept for)."""
    data = src.data
    if data is _PMB_REPORT:
        return Skipped(src.rel, "a PrecisionMemBench report (the PMB loader reads it)")
    if locomo.is_locomo_dataset(data):
        return Skipped(src.rel, "LoCoMo dataset (join target)")
    if is_disputed_list(data):
        return "disputed"
    if generic.sniff(data, src.rel):
        return "mappings"
    if zep.sniff(data, src.rel):
        return "grades"
    if zep.sniff_responses(data):
        return "responses"
    if zep.sniff_search_results(data):
        return Skipped(src.rel, "zep search results: retrieved context text only, no ids or verdicts")
    return next((load for _, sniff, load in SNIFFERS if sniff(data, src.rel)), None)


def _classify(
    sources: Sequence[Source],
) -> tuple[list[tuple[Source, Importer]], list[Source], list[Source], list[Source], list[Source], list[Skipped]]:
    """(singles with their importer, grades, responses, mappings, disputed lists, skips) of ``sources``."""
    singles: list[tuple[Source, Importer]] = []
    buckets: dict[_Bucket, list[Source]] = {"grades": [], "responses": [], "mappings": [], "disputed": []}
    skipped: list[Skipped] = []
    for src in sources:
        route = _route(src)
        if route is None:
            skipped.append(_unrecognised(src))
        elif isinstance(route, Skipped):
            skipped.append(route)
        elif isinstance(route, str):
            buckets[route].append(src)
        else:
            singles.append((src, route))
    return singles, buckets["grades"], buckets["responses"], buckets["mappings"], buckets["disputed"], skipped


def _unrecognised(src: Source) -> Skipped:
    """Why no importer took ``src``: the closest format and a mapping to write, when it holds records at all."""
    if shapes.closest_format(src.data) is None:
        return Skipped(src.rel, "holds no per-question records (a summary or configuration file)")
    reason = f"not a result file of a known format ({shapes.describe(src.data)})"
    return Skipped(src.rel, reason, MAPPING_FIX.format(file=src.rel))


Key = tuple[Any, ...]
"""Where the serial load lists an item: (step, file number, ...); see :func:`_load_files`."""


_DATASET_NAMES = ("locomo10.json", "locomo.json")


@dataclass
class _Dataset:
    """The LoCoMo dataset of one load, found and parsed on first use (before the files are read: each file's LoCoMo
    runs are joined where it is read)."""

    datasets: Path | None
    """Where to look first (``--datasets``), else None."""
    results: Path
    rels: tuple[str, ...]
    """Every candidate file of the load, relative to ``results``."""
    root_name: str

    @cached_property
    def found(self) -> tuple[LocomoDataset | None, str | None, tuple[IngestError, ...]]:
        """(the dataset or None, its file under ``results`` (not read again as a result) or None, its errors)."""
        if self.datasets is not None and (path := locomo.find_locomo(self.datasets)) is not None:
            try:
                return locomo.load_locomo(path), None, ()
            except IngestError as exc:
                return None, None, (exc,)
        found = _locomo_among(self.results, self.rels, self.root_name)
        if found is None:
            return None, None, ()
        try:
            return locomo.parse_locomo(found.data, str(self.results / found.rel), found.sha256), found.rel, ()
        except IngestError as exc:
            return None, found.rel, (exc,)


@dataclass(frozen=True)
class _Context:
    """What the steps of a load share: the folder and the LoCoMo dataset."""

    results: Path
    root_name: str
    dataset: _Dataset


@dataclass(frozen=True)
class _ScoredRun:
    """One run as the load gave it: imported, joined, merged, scored; not yet de-duplicated."""

    order: Key
    """(key of its shard group's first import, key of its own first import): the serial load's order."""
    loaded: LoadedRun
    duplicate_key: tuple[str, str, int]
    """Benchmark, system and number of questions: what two duplicates (equal :func:`_fingerprint`) share, so
    only runs sharing it need the full digest."""
    richness: tuple[int, int]
    """:func:`_richness`: of two duplicates, the richer file stays."""


@dataclass(frozen=True)
class _FilesLoad:
    """Everything the files gave, each error and skip with its serial-order key."""

    runs: list[_ScoredRun]
    errors: list[tuple[Key, IngestError]]
    skipped: list[tuple[Key, Skipped]]
    disputed: frozenset[str]


def load_qa(results: Path, datasets: Path | None = None) -> QaLoad:
    """Load every QA run under ``results``; LoCoMo runs are joined to locomo10.json from ``datasets`` or results."""
    listing = tree.walk(results, SUFFIXES, settings.limits())
    files = [(i, e.rel) for i, e in enumerate(listing.files)]
    root_name = results.resolve().name
    context = _Context(results, root_name, _Dataset(datasets, results, tuple(rel for _, rel in files), root_name))
    refused = tuple(IngestError(r.rel, "$", f"not read: {r.reason}", r.fix) for r in listing.refused)
    load = _load_files(context, files, SidecarCache.of(listing))
    ds, _, head = context.dataset.found
    errors = [*refused, *head, *(e for _, e in sorted(load.errors, key=lambda ke: ke[0]))]
    skipped = [s for _, s in sorted(load.skipped, key=lambda ks: ks[0])]
    scored = sorted(load.runs, key=lambda r: r.order)
    return QaLoad(tuple(_finish(scored, load.disputed)), tuple(errors), tuple(skipped), ds, load.disputed)


def _locomo_among(results: Path, rels: Sequence[str], root_name: str) -> Source | None:
    """The dataset :func:`locomo.find_locomo` would pick under ``results``.

    The shallowest ``locomo10.json`` / ``locomo.json`` (then by path) whose content is the dataset.
    """
    named = [rel for rel in rels if rel.rpartition("/")[2] in _DATASET_NAMES]
    named.sort(key=lambda rel: (len((results / rel).parts), str(results / rel)))
    for rel in named:
        try:
            src = read_source(results / rel, rel, root_name)
        except IngestError:
            continue  # the load reports it when it reads the file as a result
        if locomo.is_locomo_dataset(src.data):
            return src
    return None


@dataclass(frozen=True)
class _Piece:
    """One imported run joined and scored as a whole run: all the load keeps of it unless it may be a shard."""

    meta: RunMeta
    """Its metadata after the join, before side-car metadata is filled in."""
    join: JoinReport | None
    table: pa.Table
    score: RunScore
    richness: tuple[int, int]
    """:func:`_richness` of its questions."""
    conversations: frozenset[str] | None
    """:func:`_conversations` of its questions: whether it can be a shard of a run split by conversation."""


def _piece(run: ColumnRun, ds: LocomoDataset | None) -> _Piece:
    """``run`` joined to the LoCoMo dataset (when it is a LoCoMo run) and scored; its columns are not kept."""
    joined, report = _join_locomo(run, ds)
    table, score = _scored_table(joined.columns)
    return _Piece(joined.run, report, table, score, _richness(joined), _conversations(joined))


Imported = list[_Piece] | IngestError | Skipped
"""What importing one file gave: its runs, the error that names the file, or why it holds no run to score."""


@dataclass(frozen=True)
class _Single:
    """A file one of :data:`SNIFFERS` claims, imported and scored where it was read, so its parsed JSON can go."""

    rel: str
    sha256: str
    outcome: Imported


def _import(rel: str, fn: Callable[[], list[ColumnRun]], ds: LocomoDataset | None) -> Imported:
    """``fn()``'s runs joined and scored, or what the importer raised as this file's error (or skip)."""
    try:
        runs = fn()
    except IngestError as exc:
        return exc
    except UnjudgedError as exc:
        return Skipped(rel, f"answers without judge verdicts: {exc}")
    except (KeyError, IndexError, TypeError, AttributeError, ValueError, RecursionError) as exc:
        # Files come from other people's harnesses: a shape no importer check anticipated must
        # still end as this file's error, never take the other runs down with it.
        return IngestError(
            rel,
            "$",
            f"unexpected structure for its format ({type(exc).__name__}: {str(exc)[:120]})",
            "compare the file with the format's documentation or map it with a generic mapping file",
        )
    return [_piece(run, ds) for run in runs]


def _read_file(
    results: Path, rel: str, root_name: str, ds: LocomoDataset | None
) -> Source | _Single | IngestError | Skipped:
    """Read and recognise one file (in a worker process when the load is large).

    A single-file run is imported, joined and scored here and only its table comes back; a file that needs
    others (a mapping, zep grades or responses, a disputed list) comes back parsed; a file that holds no run,
    as its skip.
    """
    try:
        src = _without_pmb_report(read_source(results / rel, rel, root_name))
    except IngestError as exc:
        return exc
    singles, *_, skips = _classify([src])
    if singles:
        _, load = singles[0]
        return _Single(rel, src.sha256, _import(rel, partial(load, src), ds))
    return skips[0] if skips else src


_worker_dataset: LocomoDataset | None = None


def _init_worker(ds: LocomoDataset | None) -> None:
    global _worker_dataset
    _worker_dataset = ds


def _read_file_in_worker(results: Path, rel: str, root_name: str) -> Source | _Single | IngestError | Skipped:
    return _read_file(results, rel, root_name, _worker_dataset)


@dataclass
class _Collected:
    """What a load has gathered so far, each error, skip and run with its serial-order key."""

    errors: list[tuple[Key, IngestError]] = field(default_factory=list)
    skipped: list[tuple[Key, Skipped]] = field(default_factory=list)
    imported: list[tuple[Key, _Piece, str, Callable[[], ColumnRun]]] = field(default_factory=list)
    """(key, run, its file, the run again as columns: read again only if it turns out to be a shard)."""
    rereads: dict[str, list[ColumnRun] | IngestError] = field(default_factory=dict)
    """Files read again, by path: :func:`_read_again`."""

    def record(self, key: Key, rel: str, outcome: Imported, again: Callable[[int], ColumnRun]) -> None:
        if isinstance(outcome, IngestError):
            self.errors.append((key, outcome))
        elif isinstance(outcome, Skipped):
            self.skipped.append((key, outcome))
        else:
            self.imported.extend(((*key, j), p, rel, partial(again, j)) for j, p in enumerate(outcome))


def _read_files(
    context: _Context, files: Sequence[tuple[int, str]], got: _Collected
) -> tuple[list[Source], list[tuple[int, _Single]], set[str]]:
    """Read every file but CSV and the dataset (singles imported and scored as they are read).

    Returns the parsed files that need others, the singles by file number, and the CSV files.
    """
    csv_paths: set[str] = set()
    to_read: list[tuple[int, str]] = []
    for i, rel in files:
        if rel.endswith(".csv"):
            csv_paths.add(rel)  # read only when a mapping names it
        elif rel.rpartition("/")[2] in _DATASET_NAMES and rel == context.dataset.found[1]:
            got.skipped.append(((0, i), Skipped(rel, "LoCoMo dataset (join target)")))
        else:
            to_read.append((i, rel))
    ds = context.dataset.found[0]
    items = [(context.results, rel, context.root_name) for _, rel in to_read]
    paths = [context.results / rel for _, rel in to_read]
    here = partial(_read_file, ds=ds)
    outcomes = file_pool.in_order(
        _read_file_in_worker, items, paths, serial=here, initializer=_init_worker, initargs=(ds,)
    )
    sources: list[Source] = []
    singles: list[tuple[int, _Single]] = []
    for (i, _), outcome in zip(to_read, outcomes, strict=True):
        if isinstance(outcome, IngestError):
            got.errors.append(((0, i), outcome))
        elif isinstance(outcome, Skipped):
            got.skipped.append(((0, i), outcome))
        elif isinstance(outcome, _Single):
            singles.append((i, outcome))
        else:
            sources.append(outcome)
    return sources, singles, csv_paths


def _read_again(
    rereads: dict[str, list[ColumnRun] | IngestError], context: _Context, rel: str, sha256: str, j: int
) -> ColumnRun:
    """Run ``j`` of single-file ``rel`` as columns, imported again (a shard whose questions are merged);
    ``rereads`` keeps what each file gave, so a file is read again once per load."""
    if rel not in rereads:
        rereads[rel] = _reimported(context, rel, sha256)
    runs = rereads[rel]
    if isinstance(runs, IngestError):
        raise runs
    return runs[j]


def _reimported(context: _Context, rel: str, sha256: str) -> list[ColumnRun] | IngestError:
    changed = IngestError(rel, "$", "changed while it was being loaded", "load the results again")
    try:
        src = read_source(context.results / rel, rel, context.root_name)
    except IngestError:
        return changed
    singles = _classify([src])[0]
    return singles[0][1](src) if singles and src.sha256 == sha256 else changed


def _load_files(context: _Context, files: Sequence[tuple[int, str]], sidecars: SidecarCache) -> _FilesLoad:
    """Read, recognise, import, join, merge and score these files (numbered in the walk's order).

    Keys give each error, skip and run its place in the serial order: (0, file) reading and recognising,
    (1, file) disputed lists, (2, file) mappings, (3, file) zep grades, (4, file) unmatched zep responses,
    (5, file) single-file runs, (6, path) CSV files; an imported run adds its number within the file.
    """
    got = _Collected()
    number = {rel: i for i, rel in files}
    sources, singles, csv_paths = _read_files(context, files, got)
    _, grades, responses, mappings, disputed_src, skips = _classify(sources)
    got.skipped.extend(((0, number[sk.file]), sk) for sk in skips)
    by_rel = {s.rel: s for s in sources}
    ds = context.dataset.found[0]

    disputed: frozenset[str] = frozenset()
    for src in disputed_src:
        try:
            disputed = disputed | parse_disputed(src.data, src.rel)
        except IngestError as exc:
            got.errors.append(((1, number[src.rel]), exc))

    def run_importer(key: Key, rel: str, fn: Callable[[], list[ColumnRun]]) -> None:
        kept: list[ColumnRun] = []  # a mapped or zep run keeps its columns (there are few)

        def runs() -> list[ColumnRun]:
            kept.extend(fn())
            return kept

        got.record(key, rel, _import(rel, runs, ds), kept.__getitem__)

    consumed = _import_mappings(context, mappings, by_rel, number, got, run_importer)
    used_responses = _import_zep(grades, responses, number, run_importer)
    got.skipped.extend(
        ((4, number[r.rel]), Skipped(r.rel, "zep responses without a matching grades file (no verdicts)"))
        for r in responses
        if r.rel not in used_responses
    )
    for i, single in singles:
        if single.rel not in consumed:
            again = partial(_read_again, got.rereads, context, single.rel, single.sha256)
            got.record((5, i), single.rel, single.outcome, again)
    got.skipped.extend(((6, p), Skipped(p, "CSV without a mapping file naming it")) for p in csv_paths - consumed)
    result_files = {rel for _, _, rel, _ in got.imported} | {r.rel for r in responses}
    del sources, by_rel, singles, grades, responses, mappings  # the parsed files are no longer needed
    out = _scored_runs(context, got, ds, result_files, sidecars)
    return _FilesLoad(out, got.errors, got.skipped, disputed)


Runs = Callable[[Key, str, Callable[[], list[ColumnRun]]], None]
"""Imports one file's runs: (key, file, importer)."""


def _import_mappings(
    context: _Context, mappings: Sequence[Source], by_rel: dict[str, Source], number: dict[str, int],
    got: _Collected, run_importer: Runs,
) -> set[str]:  # fmt: skip
    """Import the data file each generic mapping names; return those files (not read as results of their own)."""
    consumed: set[str] = set()
    for mapping in mappings:
        key = (2, number[mapping.rel])
        try:
            target = generic.data_path(mapping, context.results)
            consumed.add(target)
            data_src = by_rel.get(target) or _without_pmb_report(
                read_source(context.results / target, target, context.root_name)
            )
        except IngestError as exc:
            got.errors.append((key, exc))
            continue
        run_importer(key, mapping.rel, partial(generic.load, mapping, data_src))
    return consumed


def _import_zep(
    grades: Sequence[Source], responses: Sequence[Source], number: dict[str, int], run_importer: Runs
) -> set[str]:
    """Import each zep grades file with the responses file of its folder that matches it; return those."""
    used_responses: set[str] = set()
    for g in grades:
        partner = next(
            (
                r
                for r in responses
                if PurePosixPath(r.rel).parent == PurePosixPath(g.rel).parent
                and r.rel not in used_responses
                and zep.matches(g, r)
            ),
            None,
        )
        if partner is not None:
            used_responses.add(partner.rel)
        run_importer((3, number[g.rel]), g.rel, partial(zep.load, g, partner))
    return used_responses


def _scored_runs(
    context: _Context, got: _Collected, ds: LocomoDataset | None, result_files: set[str], sidecars: SidecarCache
) -> list[_ScoredRun]:
    """Every imported run with its side-car metadata, in :func:`merge_shards`'s groups: shards of one run are read
    again and merged; every other run stays as it was scored when it was read."""
    pieces = []
    for _, piece, rel, _ in got.imported:
        update = sidecar_update(piece.meta, rel, context.results, result_files, sidecars)
        pieces.append(replace(piece, meta=piece.meta.model_copy(update=update)))
    groups: dict[tuple[Any, ...], list[int]] = {}
    for n, piece in enumerate(pieces):
        groups.setdefault(_shard_key(piece.meta), []).append(n)
    out: list[_ScoredRun] = []
    for idx in groups.values():
        if len(idx) > 1 and _disjoint([pieces[n].conversations for n in idx]):
            out.extend(_merged(context, got, ds, result_files, sidecars, idx))
        else:
            out.extend(_scored((got.imported[idx[0]][0], got.imported[n][0]), pieces[n]) for n in idx)
    return out


def _merged(
    context: _Context, got: _Collected, ds: LocomoDataset | None, result_files: set[str], sidecars: SidecarCache,
    shards: Sequence[int],
) -> list[_ScoredRun]:  # fmt: skip
    """The imported runs at ``shards`` read again, filled, joined and merged into one run (a file that cannot be
    read again is an error, once)."""
    items: list[tuple[Key, tuple[ColumnRun, JoinReport | None]]] = []
    failed: set[str] = set()
    for n in shards:
        key, _, rel, again = got.imported[n]
        try:
            run = fill_from_sidecars(again(), rel, context.results, result_files, sidecars)
        except IngestError as exc:
            if exc.file not in failed:
                got.errors.append((key, exc))
                failed.add(exc.file)
            continue
        items.append((key, _join_locomo(run, ds)))
    out: list[_ScoredRun] = []
    for run, report, shard_files, (group, own) in merge_shards([item for _, item in items]):
        piece = replace(_piece(run, None), join=report)
        out.append(_scored((items[group][0], items[own][0]), piece, shard_files))
    return out


def _scored(order: tuple[Key, Key], piece: _Piece, shard_files: tuple[str, ...] = ()) -> _ScoredRun:
    """A scored run with its id, display name (made unique later) and protocol verdict."""
    meta = piece.meta
    # The protocol check reads the run's metadata only: it gets the run without its questions.
    ok, reasons = publishable.check(QaRun(run=meta, questions=[]), piece.score, piece.join)
    loaded = LoadedRun(
        meta=meta, table=piece.table, run_id=_run_id(meta, bool(shard_files)), display_name=meta.system,
        score=piece.score, join=piece.join, publishable=ok, not_publishable_because=tuple(reasons),
        merged_from=shard_files,
    )  # fmt: skip
    return _ScoredRun(order, loaded, (meta.benchmark, meta.system, piece.table.num_rows), piece.richness)


def _finish(scored: Sequence[_ScoredRun], disputed: frozenset[str]) -> list[LoadedRun]:
    """Drop exact duplicates (same benchmark, answers and verdicts; the file with most detail stays), then name."""
    counts: dict[tuple[str, str, int], int] = {}
    for r in scored:
        counts[r.duplicate_key] = counts.get(r.duplicate_key, 0) + 1
    kept: list[tuple[_ScoredRun, list[str]]] = []
    seen: dict[Any, int] = {}
    for i, r in enumerate(scored):
        # A run whose duplicate key is unique cannot equal another: its position stands in for the digest.
        fp: Any = _fingerprint(r.loaded) if counts[r.duplicate_key] > 1 else ("unique", i)
        if fp in seen:
            k = seen[fp]
            other, dups = kept[k]
            if r.richness > other.richness:
                kept[k] = (r, [*dups, other.loaded.meta.source_file or ""])
            else:
                dups.append(r.loaded.meta.source_file or "")
            continue
        seen[fp] = len(kept)
        kept.append((r, []))

    loaded: list[LoadedRun] = []
    for r, dups in kept:
        acc_wo, n_disp = (None, 0)
        if r.loaded.meta.benchmark == locomo.BENCHMARK and disputed:
            # The scored questions' ids and scores, read from the table rather than rebuilt as objects.
            table = r.loaded.table
            graded = table.filter(table.column("scored")).select(["question_id", "score"]).to_pydict()
            acc_wo, n_disp = accuracy_without(graded["question_id"], graded["score"], disputed)
        loaded.append(replace(r.loaded, duplicates=tuple(dups), accuracy_without_disputed=acc_wo, n_disputed=n_disp))
    loaded = assign_display_names(loaded)
    loaded.sort(key=lambda r: (r.meta.benchmark, r.display_name))
    return loaded
