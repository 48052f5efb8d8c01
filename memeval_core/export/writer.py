"""``python -m memeval_core export``: write ``leaderboard.json``, the details, the snapshot and a ready Space.

Layout of an export (all relative paths):

- ``leaderboard.json``: :class:`memeval_core.export.models.Leaderboard`, canonical JSON;
- ``data/details/<benchmark>.parquet``: one row per PMB case/turn or QA question, ``run_id`` and
  ``display_name`` first; ``data/details/README.md``, the dataset card (one config per benchmark), makes the
  folder a dataset ``datasets.load_dataset`` reads;
- ``data/snapshot/``: what the Space app reads: the PMB snapshot
  (:func:`memeval_core.pmb.snapshot.write_snapshot`) and the QA snapshot
  (:func:`memeval_core.qa.snapshot.write_qa_snapshot`), each when the export has such runs;
- ``README.md``, ``Dockerfile``, ``requirements.txt`` and the app code (:mod:`memeval_core.export.space`).

The export is built in a temporary folder beside ``out`` and swapped in only when complete and
clean, so a failed export leaves ``out`` as it was. Before the swap every file (binary included)
is scanned for the absolute results/fixtures/project paths, ``$HOME``, Hugging Face tokens and
any secret the caller names; a hit aborts the export.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from memeval_core import SCORING_VERSION, __version__, leaderboard, licences, parquet, tree
from memeval_core.errors import IngestError
from memeval_core.export import space
from memeval_core.export.models import (
    InputFile,
    Leaderboard,
    PmbRow,
    PmbTable,
    QaRow,
    QaTable,
    RoundingRule,
    Table,
    dumps,
    fingerprint,
    loads,
)
from memeval_core.pmb.ingest import PmbLoad
from memeval_core.pmb.run import BENCHMARKS
from memeval_core.pmb.runs_table import runs_table
from memeval_core.pmb.snapshot import cases_table, write_snapshot
from memeval_core.qa import leaderboard as qa_leaderboard
from memeval_core.qa.ingest import LoadedRun, QaLoad, load_qa
from memeval_core.qa.snapshot import write_qa_snapshot
from memeval_core.qa.table import SCHEMA
from memeval_core.results import load_pmb_results
from memeval_core.settings import PROJECT_ROOT, SPACE_MARKER

LEADERBOARD_FILE = "leaderboard.json"
"""Name of the leaderboard document inside an export."""
_PLACEHOLDERS = frozenset({"README.md", ".gitkeep"})
_TOKEN_PATTERN = re.compile(rb"hf_[A-Za-z0-9]{30,}")


class ExportError(Exception):
    """The export could not be written; ``out`` is unchanged. The message names the file and the problem."""


@dataclass(frozen=True)
class ExportedFile:
    """One file of an export."""

    path: str
    """POSIX path relative to the export folder."""
    size: int
    """Bytes."""
    sha256: str
    """SHA-256 of the bytes."""


@dataclass(frozen=True)
class QaPart:
    """What QA runs contribute to an export."""

    rows: tuple[Mapping[str, Any], ...]
    """Leaderboard rows as :func:`memeval_core.qa.leaderboard.rows` returns them."""
    inputs: tuple[InputFile, ...]
    """The QA result files (and sidecars, dataset) the rows were computed from."""
    details: Mapping[str, pa.Table]
    """Per benchmark, one row per question of every run."""
    errors: tuple[str, ...] = ()
    """Files that looked like QA runs but could not be loaded."""
    load: QaLoad | None = None
    """The load the rows were computed from; written as the QA snapshot the Space app reads."""
    withheld: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    """Benchmarks whose question, gold-answer and answer text the details leave empty, with the licences
    that keep it out (non-commercial or unknown; see :mod:`memeval_core.licences`)."""


@dataclass(frozen=True)
class ExportResult:
    """A finished export."""

    out: Path
    """The export folder."""
    board: Leaderboard
    """The leaderboard document written to ``leaderboard.json``."""
    files: tuple[ExportedFile, ...]
    """Every file written, sorted by path."""
    skipped_errors: tuple[str, ...]
    """Input files that could not be loaded and were left out (only with ``allow_errors``)."""

    @property
    def fingerprint(self) -> str:
        """The input fingerprint."""
        return self.board.fingerprint


# --------------------------------------------------------------------------------------------
# The leaderboard document
# --------------------------------------------------------------------------------------------


def pmb_inputs(load: PmbLoad, results: Path, fixtures: Path | None) -> list[InputFile]:
    """The fixture files and every loaded report, with relative paths and SHA-256."""
    out: list[InputFile] = []
    if load.fixture is not None:
        base = Path(load.fixture.source)
        rel_dir = tree.relative_inside(base, fixtures if fixtures is not None else results)
        for name, sha in sorted(load.fixture.sha256.items()):
            path = name if rel_dir in (None, ".", "") else f"{rel_dir}/{name}"
            out.append(InputFile(path=path, sha256=sha, role="pmb-fixture"))
    for run in load.runs:
        out.append(InputFile(path=run.identity.source, sha256=run.identity.sha256, role="pmb-report"))
    return out


def pmb_tables(load: PmbLoad) -> list[PmbTable]:
    """One table per PMB suite that has runs, in the leaderboard page's row order."""
    sources = {r.identity.run_id: r.identity.source for r in load.runs}
    table = runs_table(load.runs)
    tables = []
    for benchmark in BENCHMARKS:
        rows = leaderboard.table_rows(table, benchmark)
        if rows:
            tables.append(
                PmbTable(
                    benchmark=benchmark,
                    rows=[
                        PmbRow.model_validate({**r, "rank": i, "source": sources[r["run_id"]]})
                        for i, r in enumerate(rows, start=1)
                    ],
                )
            )
    return tables


def qa_tables(rows: Sequence[Mapping[str, Any]]) -> list[QaTable]:
    """One table per QA benchmark, benchmarks sorted by id, rows in the order given."""
    by_benchmark: dict[str, list[QaRow]] = {}
    for r in rows:
        row = QaRow.model_validate({k: r[k] for k in QaRow.model_fields})
        by_benchmark.setdefault(row.benchmark, []).append(row)
    return [QaTable(benchmark=b, rows=rs) for b, rs in sorted(by_benchmark.items())]


_ROLE_ORDER = {"pmb-fixture": 0, "pmb-report": 1, "qa-run": 2}


def sorted_inputs(files: Iterable[InputFile]) -> tuple[InputFile, ...]:
    """Each input once (a file used twice, e.g. a sidecar shared by two runs, is one input), by role then path."""
    unique = {(f.role, f.path): f for f in files}
    return tuple(sorted(unique.values(), key=lambda f: (_ROLE_ORDER[f.role], f.path)))


def folder_inputs(
    load: PmbLoad, results: Path, fixtures: Path | None = None, qa: QaPart | None = None
) -> tuple[InputFile, ...]:
    """The input files of a folder's runs, each with the licence the catalogue or the nearest statement gives."""
    stated: dict[str, str | None] = {}

    def licensed(f: InputFile) -> InputFile:
        base = fixtures if f.role == "pmb-fixture" and fixtures is not None else results
        return f.model_copy(update={"license": licences.of_file(base, f.path, stated, f.sha256)})

    return tuple(licensed(f) for f in sorted_inputs([*pmb_inputs(load, results, fixtures), *(qa.inputs if qa else ())]))


@dataclass(frozen=True)
class ExportSource:
    """What an export is written from: the runs, the files they were computed from, and where they were read."""

    name: str
    """What the runs were read from, for messages: the results folder or the dataset."""
    pmb: PmbLoad
    """PMB runs and the fixture they were scored against."""
    qa: QaPart | None
    """What QA runs contribute; None when there is none."""
    inputs: tuple[InputFile, ...]
    """Every input file with its licence, by role then path (:func:`sorted_inputs`); the fingerprint covers them."""
    problems: tuple[str, ...] = ()
    """Input files left out because they could not be loaded (only with ``allow_errors``)."""
    origin: str | None = None
    """Runs read from a Hub dataset: ``hf://datasets/OWNER/NAME@COMMIT``, which the cards name; None for a folder."""
    results: Path | None = None
    """The results folder, which the QA snapshot names the LoCoMo dataset relative to; None for a dataset."""
    private: tuple[tuple[str, Path], ...] = ()
    """Local folders (what each is, and where) that no exported file may name and the export may not lie in."""


def build_leaderboard(source: ExportSource) -> Leaderboard:
    """The leaderboard document of an export's runs: tables, inputs, fingerprint."""
    qa = source.qa
    tables: list[Table] = [*pmb_tables(source.pmb), *(qa_tables(qa.rows) if qa is not None else [])]
    return Leaderboard(
        memeval_version=__version__,
        scoring_version=SCORING_VERSION,
        fingerprint=fingerprint((f.sha256 for f in source.inputs), SCORING_VERSION),
        rounding=RoundingRule(),
        inputs=list(source.inputs),
        tables=tables,
        text_withheld={b: list(found) for b, found in qa.withheld.items()} if qa is not None else {},
    )


# --------------------------------------------------------------------------------------------
# QA runs (memeval_core.qa)
# --------------------------------------------------------------------------------------------


_QA_DETAIL_COLUMNS = ("question_id", "conversation", "category", "category_name", "question", "gold_answer", "answer",
                      "scored", "failure", "score", "correct", "majority")  # fmt: skip
"""The question table's columns the details keep (:data:`memeval_core.qa.table.SCHEMA`), in the details' order."""
_QA_DETAILS_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("display_name", pa.string()),
        *(SCHEMA.field(name) for name in _QA_DETAIL_COLUMNS),
        ("n_verdicts", pa.int64()),
        SCHEMA.field("latency_ms"),
    ]
)


def _source_files(run: LoadedRun) -> list[str]:
    """The result files a QA run was read from (relative paths; several for a run merged from parts)."""
    return [s for s in (run.meta.source_file or "").split(" + ") if s]


def qa_details(load: QaLoad, withheld: Mapping[str, Sequence[str]]) -> dict[str, pa.Table]:
    """Per benchmark, one row per question of every run, sorted by run and question; a benchmark in ``withheld``
    has its question, gold-answer and answer text left empty."""
    by_benchmark: dict[str, list[pa.Table]] = {}
    for r in load.runs:
        t, n = r.table, r.table.num_rows
        if not n:
            continue  # a run without questions adds no row, nor a benchmark of its own
        columns = [
            pa.array([r.run_id] * n, pa.string()),
            pa.array([r.display_name] * n, pa.string()),
            *t.select(_QA_DETAIL_COLUMNS).columns,
            pc.list_value_length(t["verdicts"]).cast(pa.int64()),
            t["latency_ms"],
        ]
        by_benchmark.setdefault(r.meta.benchmark, []).append(pa.Table.from_arrays(columns, schema=_QA_DETAILS_SCHEMA))
    details: dict[str, pa.Table] = {}
    for b, tables in sorted(by_benchmark.items()):
        table = pa.concat_tables(tables).sort_by([("run_id", "ascending"), ("question_id", "ascending")])
        if b in withheld:
            for name in ("question", "gold_answer", "answer"):
                i = table.schema.get_field_index(name)
                table = table.set_column(i, table.schema.field(i), pa.nulls(table.num_rows, pa.string()))
        details[b] = table.combine_chunks()  # one chunk per column: the file's pages follow the chunks
    return details


def withheld_text(load: QaLoad, run_licences: Callable[[LoadedRun], Iterable[str]]) -> dict[str, tuple[str, ...]]:
    """Per benchmark whose text may not be republished, the licences that keep it out: the dataset's text licence
    and ``run_licences`` of each of its runs (the licences of the files the run was read from)."""
    by_benchmark: dict[str, set[str]] = {}
    for r in load.runs:
        benchmark = r.meta.benchmark
        found = by_benchmark.setdefault(benchmark, {licences.DATASET_TEXT.get(benchmark, licences.UNKNOWN)})
        found.update(run_licences(r))
    return {
        b: tuple(sorted(found - licences.PERMISSIVE))
        for b, found in sorted(by_benchmark.items())
        if not licences.text_allowed(found)
    }


def qa_part(
    load: QaLoad, inputs: Iterable[InputFile], withheld: Mapping[str, tuple[str, ...]], errors: tuple[str, ...] = ()
) -> QaPart:
    """What the runs of ``load`` contribute to an export: rows, details (``withheld`` text left out), inputs."""
    return QaPart(
        rows=tuple(qa_leaderboard.rows(load.runs)),
        inputs=tuple(sorted(inputs, key=lambda f: f.path)),
        details=qa_details(load, withheld),
        errors=errors,
        load=load,
        withheld=withheld,
    )


def _qa_inputs(results: Path, load: QaLoad) -> list[InputFile]:
    """The QA result files, sidecars and (when runs were joined against it) the LoCoMo dataset, hashed."""
    inputs: dict[str, InputFile] = {}
    for r in load.runs:
        for rel in [*_source_files(r), *r.meta.metadata_sources]:
            p = results / rel
            if rel not in inputs and p.is_file():
                inputs[rel] = InputFile(path=rel, sha256=tree.file_sha256(p), role="qa-run")
    if load.locomo is not None and load.runs:
        src = Path(load.locomo.source)
        ds_rel = tree.relative_inside(src, results) if src.is_absolute() else load.locomo.source
        if ds_rel is not None and (results / ds_rel).is_file():
            inputs[ds_rel] = InputFile(path=ds_rel, sha256=tree.file_sha256(results / ds_rel), role="qa-run")
    return list(inputs.values())


def load_qa_part(results: Path, pmb_sources: frozenset[str], include_text: bool = False) -> QaPart:
    """QA rows, inputs and per-question details of every QA run under ``results``.

    Files the PMB loader already accounted for are not QA errors. A benchmark's question, gold-answer and
    answer text goes into the details only when the dataset's licence and every run file's are permissive,
    or with ``include_text``.
    """
    load = load_qa(results)
    errors = tuple(str(e) for e in load.errors if e.file not in pmb_sources)
    stated: dict[str, str | None] = {}

    def run_licences(r: LoadedRun) -> list[str]:
        return [licences.of_file(results, rel, stated) for rel in _source_files(r)]

    withheld = {} if include_text else withheld_text(load, run_licences)
    return qa_part(load, _qa_inputs(results, load), withheld, errors)


# --------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------


def pmb_details(load: PmbLoad) -> dict[str, pa.Table]:
    """Per PMB suite, every re-derived case/turn of every run, ``run_id`` and ``display_name`` first."""
    out: dict[str, pa.Table] = {}
    for benchmark in BENCHMARKS:
        runs = tuple(r for r in load.runs if r.identity.benchmark == benchmark)
        if not runs:
            continue
        # One chunk per column, not one per run: the file's page breaks follow the chunks (parquet.write).
        table = cases_table(runs).combine_chunks()
        names = {r.identity.run_id: r.identity.display_name for r in runs}
        display = pa.array([names[rid] for rid in table.column("run_id").to_pylist()], type=pa.string())
        out[benchmark] = table.add_column(1, "display_name", display)
    return out


def _write_parquet(table: pa.Table, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    parquet.write(table, path)


def _leak_needles(private: Sequence[tuple[str, Path]], project_root: Path, secrets: Sequence[str]) -> dict[bytes, str]:
    # needle -> what it is; the label is what an error may say, the needle never is.
    needles: dict[bytes, str] = {}
    for label, p in (*private, ("project", project_root)):
        for variant in (str(p.resolve()), str(p.absolute())):
            if len(variant) > 1:
                needles.setdefault(variant.encode(), f"the absolute path of the {label}")
    home = os.environ.get("HOME", "")
    if len(home) > 1:
        needles.setdefault(home.encode(), "the home directory path ($HOME)")
    for s in secrets:
        if s:
            needles[s.encode()] = "a secret (token)"
    return needles


def _known_tokens() -> list[str]:
    found = [os.environ.get(k, "") for k in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")]
    try:
        from huggingface_hub import get_token

        found.append(get_token() or "")
    except Exception:  # a broken login must not stop an export; the hf_ pattern scan still runs
        pass
    return [t for t in found if t]


def scan_for_leaks(root: Path, needles: Mapping[bytes, str]) -> None:
    """Raise :class:`ExportError` when any file under ``root`` (bytes, binary included) holds a needle or an
    ``hf_`` token. The message names the file and what was found, never the secret itself."""
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        rel = path.relative_to(root).as_posix()
        for needle, label in needles.items():
            if needle in data:
                raise ExportError(f"{rel}: contains {label}; an export must not reveal local paths or secrets")
        if _TOKEN_PATTERN.search(data):
            raise ExportError(f"{rel}: contains something that looks like a Hugging Face token (hf_...)")


def _check_out(out: Path, private: Sequence[tuple[str, Path]], project_root: Path) -> None:
    o = out.resolve()
    for label, p in private:
        pr = p.resolve()
        if o == pr or o in pr.parents or pr in o.parents:
            raise ExportError(f"{out}: the export folder must lie outside the {label} {p}")
    if o == project_root.resolve() or o in project_root.resolve().parents:
        raise ExportError(f"{out}: the export folder must not be the project folder or one of its parents")
    if out.exists():
        if not out.is_dir():
            raise ExportError(f"{out}: exists and is not a folder")
        names = {p.name for p in out.iterdir()}
        if names and LEADERBOARD_FILE not in names and not names <= _PLACEHOLDERS:
            raise ExportError(
                f"{out}: folder is not empty and holds no previous export ({LEADERBOARD_FILE}); "
                "choose an empty folder so nothing of yours is replaced"
            )


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _swap_in(tmp: Path, out: Path) -> None:
    old: Path | None = None
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        old.rmdir()
        out.rename(old)
    try:
        tmp.rename(out)
    except OSError:
        if old is not None:
            old.rename(out)
        raise
    if old is not None:
        # hf_export/ is kept in git by an empty .gitkeep; an export must not show it as deleted.
        if (old / ".gitkeep").is_file():
            (out / ".gitkeep").touch()
        shutil.rmtree(old, ignore_errors=True)


def _write_tree(
    tmp: Path, source: ExportSource, board: Leaderboard, project_root: Path, options: space.SpaceOptions, date: Any
) -> None:
    load, qa = source.pmb, source.qa
    (tmp / LEADERBOARD_FILE).write_text(dumps(board), encoding="utf-8")
    details = {**pmb_details(load), **(dict(qa.details) if qa is not None else {})}
    for benchmark, table in sorted(details.items()):
        _write_parquet(table, tmp / space.DETAILS_DIR / f"{benchmark}.parquet")
    if details:
        # The details folder is a dataset of its own: datasets.load_dataset(<folder>, <benchmark>).
        card = space.dataset_card(board, None, options, data_dir="", origin=source.origin)
        (tmp / space.DETAILS_DIR / "README.md").write_text(card, encoding="utf-8")
    if load.fixture is not None and load.runs:
        write_snapshot(load, tmp / space.SNAPSHOT_DIR)
    if qa is not None and qa.load is not None and qa.load.runs:
        write_qa_snapshot(qa.load, tmp / space.SNAPSHOT_DIR, results=source.results)
    (tmp / "README.md").write_text(space.readme(board, options, date, origin=source.origin), encoding="utf-8")
    (tmp / "Dockerfile").write_text(space.dockerfile(), encoding="utf-8")
    # The Space is read-only by its own code, whatever environment it is started in.
    (tmp / SPACE_MARKER).write_text(
        "This file makes the memeval app in this folder read-only (no Upload, no Publish).\n", encoding="utf-8"
    )
    (tmp / "requirements.txt").write_text(space.requirements(project_root), encoding="utf-8")
    for rel in space.app_files(project_root):
        dest = tmp / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes((project_root / rel).read_bytes())


def list_files(root: Path) -> tuple[ExportedFile, ...]:
    """Every file under ``root`` with size and SHA-256, sorted by relative path."""
    out = []
    for p in sorted(root.rglob("*")):
        if p.is_file():
            data = p.read_bytes()
            out.append(ExportedFile(p.relative_to(root).as_posix(), len(data), hashlib.sha256(data).hexdigest()))
    return tuple(sorted(out, key=lambda f: f.path))


def load_folder(
    results: Path,
    fixtures: Path | None = None,
    *,
    allow_errors: bool = False,
    include_text: bool = False,
) -> ExportSource:
    """Load and score every run under ``results`` for :func:`write_export`; raise :class:`ExportError` when the
    folder is missing or (without ``allow_errors``) a file fails to load. See :func:`export` for the options."""
    if not results.is_dir():
        raise ExportError(f"{results}: results directory does not exist")
    try:
        load = load_pmb_results(results, fixtures)
    except (IngestError, ValueError) as exc:
        raise ExportError(str(exc)) from exc
    problems = [str(e) for e in load.errors]
    try:
        # Files the PMB loader read or already reported are not QA errors (each problem is named once).
        pmb_files = {r.identity.source for r in load.runs} | set(load.skipped) | {e.file for e in load.errors}
        part = load_qa_part(results, frozenset(pmb_files), include_text)
    except (IngestError, ValueError) as exc:
        raise ExportError(str(exc)) from exc
    problems += list(part.errors)
    qa = part if part.rows else None
    if problems and not allow_errors:
        raise ExportError(
            f"{len(problems)} input file(s) could not be loaded (pass --allow-errors to export without them): "
            + "; ".join(problems)
        )
    try:
        inputs = folder_inputs(load, results, fixtures, qa)
    except ValueError as exc:
        raise ExportError(str(exc)) from exc
    private = _folder_private(results, fixtures)
    return ExportSource(str(results), load, qa, inputs, tuple(problems), results=results, private=private)


def _folder_private(results: Path, fixtures: Path | None) -> tuple[tuple[str, Path], ...]:
    return (("results directory", results), *((("fixtures directory", fixtures),) if fixtures else ()))


def write_export(
    source: ExportSource,
    out: Path,
    *,
    options: space.SpaceOptions | None = None,
    project_root: Path = PROJECT_ROOT,
    secrets: Sequence[str] = (),
) -> ExportResult:
    """Write the export of ``source`` into ``out`` atomically; raise :class:`ExportError` (``out`` unchanged) on any
    problem. ``secrets`` are extra strings (e.g. a token typed into the app) that must not appear in any file."""
    options = options or space.SpaceOptions()
    _check_out(out, source.private, project_root)
    if not source.pmb.runs and source.qa is None:
        raise ExportError(f"{source.name}: no runs found to export")
    try:
        date = space.export_date()
        board = build_leaderboard(source)
    except ValueError as exc:
        raise ExportError(str(exc)) from exc

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-", dir=out.parent))
    try:
        tmp.chmod(0o777 & ~_umask())
        _write_tree(tmp, source, board, project_root, options, date)
        scan_for_leaks(tmp, _leak_needles(source.private, project_root, [*secrets, *_known_tokens()]))
        files = list_files(tmp)
        _swap_in(tmp, out)
    except ExportError:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    except (OSError, ValueError) as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise ExportError(f"{out}: export failed, nothing was changed: {exc}") from exc
    return ExportResult(out, board, files, source.problems)


def export(
    results: Path,
    out: Path,
    fixtures: Path | None = None,
    *,
    allow_errors: bool = False,
    options: space.SpaceOptions | None = None,
    project_root: Path = PROJECT_ROOT,
    secrets: Sequence[str] = (),
    include_text: bool = False,
) -> ExportResult:
    """Export ``results`` into ``out`` atomically; raise :class:`ExportError` (``out`` unchanged) on any problem.

    ``allow_errors`` leaves files that fail to load out of the export instead of refusing it.
    ``secrets`` are extra strings (e.g. a token typed into the app) that must not appear in any file.
    ``include_text`` puts question and answer text under a non-commercial or unknown licence into the
    details (see :func:`load_qa_part`); the cards say which licences apply either way.
    """
    _check_out(out, _folder_private(results, fixtures), project_root)  # before loading: a wrong ``out`` fails at once
    source = load_folder(results, fixtures, allow_errors=allow_errors, include_text=include_text)
    return write_export(source, out, options=options, project_root=project_root, secrets=secrets)


def scratch_root() -> Path:
    """Where the app builds export previews: one folder per user under the system temp dir."""
    return Path(tempfile.gettempdir()) / f"memeval-preview-{os.getuid()}"


def preview_export(results: Path, fingerprint: str, root: Path | None = None) -> Path:
    """The export of ``results`` in a scratch folder named by ``fingerprint``, built when absent.

    Older previews (other fingerprints) are removed first, so the scratch space holds one export, not one
    per change; raise :class:`ExportError` as :func:`export` does.
    """
    root = scratch_root() if root is None else root
    if not re.fullmatch(r"[0-9a-f]{16,64}", fingerprint):
        raise ValueError("the preview's fingerprint must be hexadecimal")
    out = root / fingerprint[:32]
    if (out / LEADERBOARD_FILE).is_file():
        return out
    root.mkdir(parents=True, exist_ok=True)
    for old in root.iterdir():
        if old.name != out.name:
            shutil.rmtree(old, ignore_errors=True)
    export(results, out)
    return out


# --------------------------------------------------------------------------------------------
# Diff of two exports
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RowChange:
    """One leaderboard row present in both exports whose values differ."""

    benchmark: str
    """Benchmark of the row."""
    run_id: str
    """Run id of the row."""
    display_name: str
    """Display name in the new export."""
    fields: tuple[tuple[str, Any, Any], ...]
    """``(field, old value, new value)`` for every field that differs."""


@dataclass(frozen=True)
class ExportDiff:
    """What changes from one export to another (e.g. the last export to a fresh one)."""

    old_fingerprint: str | None
    """Fingerprint of the old export; None when it has no leaderboard.json."""
    new_fingerprint: str
    """Fingerprint of the new export."""
    rows_added: tuple[tuple[str, str, str], ...]
    """``(benchmark, run_id, display_name)`` of rows only in the new export."""
    rows_removed: tuple[tuple[str, str, str], ...]
    """``(benchmark, run_id, display_name)`` of rows only in the old export."""
    rows_changed: tuple[RowChange, ...]
    """Rows in both whose values differ."""
    files_added: tuple[str, ...]
    """Files only in the new export."""
    files_removed: tuple[str, ...]
    """Files only in the old export."""
    files_changed: tuple[str, ...]
    """Files in both with different bytes."""
    readme_diff: str
    """Unified diff of README.md (empty when equal)."""


def _rows_by_key(board: Leaderboard | None) -> dict[tuple[str, str], dict[str, Any]]:
    if board is None:
        return {}
    return {(t.benchmark, r.run_id): r.model_dump(mode="json") for t in board.tables for r in t.rows}


def _read_board(directory: Path) -> Leaderboard | None:
    p = directory / LEADERBOARD_FILE
    if not p.is_file():
        return None
    return loads(p.read_bytes(), str(p.name))


def diff_exports(old_dir: Path, new_dir: Path) -> ExportDiff:
    """Rows added/removed/changed in ``leaderboard.json``, files added/removed/changed, and the README diff.

    ``old_dir`` may be missing or empty (first export). Raise ``ValueError`` when ``new_dir`` has no
    valid leaderboard.json.
    """
    new_board = _read_board(new_dir)
    if new_board is None:
        raise ValueError(f"{new_dir / LEADERBOARD_FILE}: missing; export first")
    old_board = _read_board(old_dir) if old_dir.is_dir() else None
    old_rows, new_rows = _rows_by_key(old_board), _rows_by_key(new_board)

    def ident(key: tuple[str, str], rows: dict[tuple[str, str], dict[str, Any]]) -> tuple[str, str, str]:
        return (key[0], key[1], str(rows[key]["display_name"]))

    changed = []
    for key in sorted(old_rows.keys() & new_rows.keys()):
        o, n = old_rows[key], new_rows[key]
        fields = tuple((f, o.get(f), n.get(f)) for f in n if o.get(f) != n.get(f))
        if fields:
            changed.append(RowChange(key[0], key[1], str(n["display_name"]), fields))
    old_files = {f.path: f.sha256 for f in list_files(old_dir)} if old_dir.is_dir() else {}
    new_files = {f.path: f.sha256 for f in list_files(new_dir)}
    old_readme = (old_dir / "README.md").read_text(encoding="utf-8") if (old_dir / "README.md").is_file() else ""
    new_readme = (new_dir / "README.md").read_text(encoding="utf-8") if (new_dir / "README.md").is_file() else ""
    readme_diff = "".join(
        difflib.unified_diff(
            old_readme.splitlines(keepends=True),
            new_readme.splitlines(keepends=True),
            fromfile="last export/README.md",
            tofile="new export/README.md",
        )
    )
    return ExportDiff(
        old_fingerprint=old_board.fingerprint if old_board is not None else None,
        new_fingerprint=new_board.fingerprint,
        rows_added=tuple(ident(k, new_rows) for k in sorted(new_rows.keys() - old_rows.keys())),
        rows_removed=tuple(ident(k, old_rows) for k in sorted(old_rows.keys() - new_rows.keys())),
        rows_changed=tuple(changed),
        files_added=tuple(sorted(new_files.keys() - old_files.keys())),
        files_removed=tuple(sorted(old_files.keys() - new_files.keys())),
        files_changed=tuple(sorted(p for p in old_files.keys() & new_files.keys() if old_files[p] != new_files[p])),
        readme_diff=readme_diff,
    )
