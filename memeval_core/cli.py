"""Command line: ``python -m memeval_core leaderboard|verify|sync|add|export|push|judge|run|wrapper``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Sequence
from itertools import chain
from pathlib import Path

from memeval_core import cli_judge, cli_publish, cli_run, leaderboard, tree
from memeval_core.catalogue import CatalogueError, default_catalogue, load_catalogue
from memeval_core.errors import IngestError, SnapshotError, cli_error, is_text
from memeval_core.hub_location import HubLocation
from memeval_core.pmb.ingest import find_fixture_dir, load_fixture
from memeval_core.qa import leaderboard as qa_leaderboard
from memeval_core.qa.ingest import read_source
from memeval_core.qa.locomo import find_locomo
from memeval_core.qa.shapes import mapping_skeleton
from memeval_core.qa.snapshot import QaHeaders
from memeval_core.results import load_pmb_headers, open_results
from memeval_core.settings import (
    DEFAULT_RESULTS,
    MB,
    RESULTS_ENV,
    datasets_dir,
    fixtures_dir,
    limits,
    results_dir,
    results_root,
)
from memeval_core.store import Validator, add_files
from memeval_core.sync import (
    PARALLEL,
    ProgressBar,
    SyncError,
    check_upstream,
    has_results,
    listing,
    sync_catalogue,
)
from memeval_core.unloaded import NotLoaded, PmbFiles, QaFiles, not_loaded
from memeval_core.upload import validate_any


def _add_source_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--results", metavar="DIR", help=f"results directory (default: ${RESULTS_ENV} or {DEFAULT_RESULTS.name}/)"
    )
    p.add_argument(
        "--fixtures", metavar="DIR", help="folder with the PMB fixtures (default: found under the results directory)"
    )


def _root(args: argparse.Namespace) -> Path | HubLocation:
    root = results_root(args.results)
    if isinstance(root, Path) and not root.is_dir():
        raise SystemExit(
            f"error: results directory {root} does not exist (run `python -m memeval_core sync` or pass --results DIR)"
        )
    return root


def _print_not_loaded(pmb: PmbFiles | None, qa: QaFiles | None) -> list[NotLoaded]:
    """Print every file that was not loaded (one list for PMB and QA) to stderr; return them.

    Without the QA load (``leaderboard --kind pmb``) the files that are not PMB reports are only counted: they
    may well be QA results, which that command does not read.
    """
    missed = not_loaded(pmb, qa)
    shown = missed if qa is not None else [m for m in missed if m.failed]
    if shown:
        print(f"{len(shown)} file(s) not loaded:", file=sys.stderr)
    for m in shown:
        print(f"  {m}", file=sys.stderr)
    if len(shown) < len(missed):
        others = len(missed) - len(shown)
        print(f"{others:,} other file(s) are not PMB reports or fixtures (--kind all reads QA results too)",
              file=sys.stderr)  # fmt: skip
    return missed


def _nothing_loaded(root: Path | HubLocation, n_loaded: int, missed: Sequence[NotLoaded]) -> bool:
    """True when nothing was loaded although the folder holds files: the caller exits non-zero."""
    if n_loaded or not missed:
        return False
    print(f"error: nothing was loaded from {root}: none of its files is a result memeval can read", file=sys.stderr)
    return True


def _write_chunks(chunks: Iterable[bytes]) -> None:
    """Write UTF-8 output as it comes (no text copy of a large JSON), or as text where stdout has no bytes layer."""
    buffer = getattr(sys.stdout, "buffer", None)
    sys.stdout.flush()
    for data in chunks:
        if buffer is None:
            sys.stdout.write(data.decode())
        else:
            buffer.write(data)
    (sys.stdout if buffer is None else buffer).flush()


def cmd_leaderboard(args: argparse.Namespace) -> int:
    datasets = datasets_dir(args.datasets)
    root = _root(args)
    qa: QaHeaders | None = None
    # Header-only: rows need no case or question, so a warm start reads the runs tables alone.
    if args.kind in ("all", "qa") or isinstance(root, HubLocation):
        opened = open_results(root, fixtures_dir(args.fixtures), datasets)
        load, qa = opened.pmb, (opened.qa if args.kind in ("all", "qa") else None)
    else:
        load = load_pmb_headers(root, fixtures_dir(args.fixtures))
    missed = _print_not_loaded(load, qa)
    pmb_table = load.table if args.kind in ("all", "pmb") else load.table.slice(0, 0)
    qa_rows = qa_leaderboard.rows(qa.runs) if qa is not None else []
    if args.format == "json":
        # Batch by batch: a large leaderboard is never held as Python values and text at once.
        _write_chunks(leaderboard.json_chunks(chain(leaderboard.row_batches(pmb_table), [qa_rows])))
        return 2 if _nothing_loaded(root, pmb_table.num_rows + len(qa_rows), missed) else 0
    pmb_rows = leaderboard.table_rows(pmb_table)
    if args.format == "csv":
        if pmb_rows and qa_rows:
            print(
                "error: PMB and QA rows have different columns; pass --kind pmb or --kind qa for CSV", file=sys.stderr
            )
            return 2
        sys.stdout.write(leaderboard.to_csv(pmb_rows) if pmb_rows else qa_leaderboard.to_csv(qa_rows))
    else:
        if pmb_rows:
            sys.stdout.write(leaderboard.to_table(pmb_rows))
        if qa_rows:
            sys.stdout.write(("\n" if pmb_rows else "") + qa_leaderboard.to_table(qa_rows))
    return 2 if _nothing_loaded(root, len(pmb_rows) + len(qa_rows), missed) else 0


def cmd_verify(args: argparse.Namespace) -> int:
    root = _root(args)
    # Header-only: the mismatches are in the runs table.
    opened = open_results(root, fixtures_dir(args.fixtures), datasets_dir(None))
    load, qa = opened.pmb, opened.qa
    missed = _print_not_loaded(load, qa)
    bad = 0
    runs = load.table.select(["display_name", "benchmark", "source", "mismatches"]).to_pylist()
    for run in runs:
        if run["mismatches"]:
            bad += 1
            where = f"{run['display_name']} [{run['benchmark']}] {run['source']}"
            print(f"{where}: {len(run['mismatches'])} mismatch(es)")
            for m in run["mismatches"]:
                print(f"  - {m}")
    print(f"{len(runs)} run(s) checked, {bad} with mismatches, {len(missed)} file(s) not loaded")
    if _nothing_loaded(root, len(runs) + len(qa.runs), missed):
        return 2
    return 1 if bad or any(m.failed for m in missed) else 0


def cmd_mapping(args: argparse.Namespace) -> int:
    """Write a generic-mapping skeleton for a rows file, guessed from its own column names."""
    data_path = Path(args.file)
    if not is_text(str(data_path.absolute())):
        return cli_error(f"{tree.printable(args.file)}: its path is not UTF-8 text; rename it", 2)
    out = Path(args.out) if args.out else data_path.with_name(f"{data_path.stem}.mapping.json")
    try:
        src = read_source(data_path, data_path.name)
    except IngestError as exc:
        return cli_error(str(exc), 2)
    if out.exists():
        return cli_error(f"{out} already exists; pass --out to write elsewhere", 2)
    relative = os.path.relpath(data_path.resolve(), out.resolve().parent).replace(os.sep, "/")
    skeleton = mapping_skeleton(src.data, relative)
    out.write_text(json.dumps(skeleton, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}: edit the TODO values and check each guessed column, then put both files under the results")
    return 0


def cmd_sync(args: argparse.Namespace) -> int:
    """Download the catalogue's files (or list them, or compare their pins with upstream)."""
    root = results_dir(args.results)
    try:
        cat = load_catalogue(Path(args.catalogue)) if args.catalogue else default_catalogue()
    except CatalogueError as exc:
        return cli_error(str(exc), 2)
    kinds = sorted({"dataset" if k == "datasets" else k for k in args.only}) if args.only else None
    if args.check:
        checks = check_upstream(cat, kinds)
        for check in checks:
            print("\n".join(check.lines()))
        return 1 if any(c.newer or c.error for c in checks) else 0
    if args.list:
        print("\n".join(listing(root, cat, kinds)))
        return 0
    if args.if_empty and has_results(root):
        print(f"{root} already holds results; nothing to do")
        return 0
    from_dir = Path(args.from_dir) if args.from_dir else None
    try:
        res = sync_catalogue(
            root, catalogue=cat, kinds=kinds, from_dir=from_dir, reporter=ProgressBar(sys.stderr), parallel=args.jobs
        )
    except SyncError as exc:
        return cli_error(f"sync failed: {exc}", 1)
    for line in res.notes:
        print(line, file=sys.stderr)
    for line in res.failures:
        print(f"error: {line}", file=sys.stderr)
    print(res.summary())
    return 1 if res.failures else 0


def file_validator(results: Path, fixtures: Path | None, datasets: Path | None = None) -> Validator:
    """A validator that accepts a file only when it loads as a PMB report or a QA run."""
    fixture_dir = fixtures if fixtures is not None else find_fixture_dir(results) if results.is_dir() else None
    fixture = load_fixture(fixture_dir) if fixture_dir is not None else None
    if datasets is None and results.is_dir():
        found = find_locomo(results)
        datasets = found.parent if found is not None else None
    validate: Validator = validate_any(fixture, datasets)
    return validate


def cmd_add(args: argparse.Namespace) -> int:
    root = results_dir(args.results)
    try:
        validate = file_validator(root, fixtures_dir(args.fixtures))
    except IngestError as exc:
        return cli_error(str(exc), 2)
    files: list[tuple[str, bytes]] = []
    for f in args.files:
        try:
            files.append((Path(f).name, Path(f).read_bytes()))
        except OSError as exc:
            return cli_error(f"{f}: cannot be read: {exc.strerror}", 2)
    results = add_files(root, files, validate, int(args.max_size * 1024 * 1024))
    for r in results:
        if r.status == "stored":
            print(f"stored {tree.printable(r.name)} as {r.path}")
        elif r.status == "duplicate":
            print(f"skipped {tree.printable(r.name)}: identical to {r.path} (same SHA-256)")
        else:
            print(f"rejected {r.error}", file=sys.stderr)
    return 1 if any(r.status == "rejected" for r in results) else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m memeval_core", description="memeval: re-score and rank memory-benchmark results."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("leaderboard", help="print one row per run, re-derived from per-case data")
    _add_source_args(p)
    p.add_argument(
        "--datasets", metavar="DIR", help="folder with locomo10.json (default: found under the results directory)"
    )
    p.add_argument("--kind", choices=("all", "pmb", "qa"), default="all", help="which runs to list (default: all)")
    p.add_argument("--format", choices=("json", "csv", "table"), default="table")
    p.set_defaults(func=cmd_leaderboard)
    p = sub.add_parser("verify", help="compare every stated aggregate with the re-derived value; exit 1 on mismatch")
    _add_source_args(p)
    p.set_defaults(func=cmd_verify)
    p = sub.add_parser(
        "sync", help="download the catalogue's pinned public runs and datasets into the results directory"
    )
    p.add_argument("--results", metavar="DIR", help="results directory to write into")
    p.add_argument(
        "--from",
        dest="from_dir",
        metavar="DIR",
        help="copy from a local tree (laid out like ../shared/data, or like an upstream repository) instead",
    )
    p.add_argument(
        "--if-empty", action="store_true", help="do nothing when the results directory already holds results"
    )
    p.add_argument("--only", action="append", choices=("pmb", "qa", "datasets"), help="only these files (repeatable)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--list", action="store_true", help="list what would be fetched (sizes, licences); fetch nothing")
    what.add_argument("--check", action="store_true", help="list newer upstream commits touching catalogued files")
    p.add_argument("--catalogue", metavar="FILE", help="another catalogue file (default: the one memeval ships)")
    p.add_argument(
        "--jobs",
        type=int,
        default=PARALLEL,
        choices=range(1, 17),
        metavar="N",
        help=f"files at once (default {PARALLEL})",
    )
    p.set_defaults(func=cmd_sync)
    p = sub.add_parser("add", help="validate result files and store them in the results directory")
    _add_source_args(p)
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument(
        "--max-size",
        type=float,
        default=limits().max_upload_bytes / MB,
        metavar="MB",
        help="largest file accepted, in MB (default 200, or $MEMEVAL_MAX_UPLOAD_MB)",
    )
    p.set_defaults(func=cmd_add)
    p = sub.add_parser("mapping", help="write a mapping skeleton for a rows file no importer knows")
    p.add_argument("file", metavar="FILE", help="the rows file (CSV, JSON or JSON Lines)")
    p.add_argument("--out", metavar="PATH", help="where to write the mapping (default: FILE's stem + .mapping.json)")
    p.set_defaults(func=cmd_mapping)
    cli_publish.register(sub)
    cli_judge.register(sub)
    cli_run.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.func(args)
    except SnapshotError as exc:
        return cli_error(str(exc), 2)
    return code
