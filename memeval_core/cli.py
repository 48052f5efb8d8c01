"""Command line: ``python -m memeval_core leaderboard|verify|sync``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from memeval_core import leaderboard
from memeval_core.pmb.ingest import PmbLoad, load_pmb
from memeval_core.sources import DEFAULT_RESULTS, RESULTS_ENV, fixtures_dir, results_dir
from memeval_core.sync import SyncError, has_results, sync


def _add_source_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--results", metavar="DIR", help=f"results directory (default: ${RESULTS_ENV} or {DEFAULT_RESULTS.name}/)"
    )
    p.add_argument(
        "--fixtures", metavar="DIR", help="folder with the PMB fixtures (default: found under the results directory)"
    )


def _load(args: argparse.Namespace) -> PmbLoad:
    root = results_dir(args.results)
    if not root.is_dir():
        raise SystemExit(
            f"error: results directory {root} does not exist (run `python -m memeval_core sync` or pass --results DIR)"
        )
    load = load_pmb(root, fixtures_dir(args.fixtures))
    for err in load.errors:
        print(f"error: {err}", file=sys.stderr)
    return load


def cmd_leaderboard(args: argparse.Namespace) -> int:
    load = _load(args)
    rows = leaderboard.rows(load.runs)
    render = {"json": leaderboard.to_json, "csv": leaderboard.to_csv, "table": leaderboard.to_table}[args.format]
    sys.stdout.write(render(rows))
    return 2 if load.errors and not load.runs else 0


def cmd_verify(args: argparse.Namespace) -> int:
    load = _load(args)
    bad = 0
    for run in load.runs:
        if run.mismatches:
            bad += 1
            ident = run.identity
            print(f"{ident.display_name} [{ident.benchmark}] {ident.source}: {len(run.mismatches)} mismatch(es)")
            for m in run.mismatches:
                print(f"  - {m}")
    print(f"{len(load.runs)} run(s) checked, {bad} with mismatches, {len(load.errors)} file(s) not loaded")
    return 1 if bad or load.errors else 0


def cmd_sync(args: argparse.Namespace) -> int:
    root = results_dir(args.results)
    if args.if_empty and has_results(root):
        print(f"{root} already holds results; nothing to do")
        return 0
    try:
        res = sync(root, Path(args.from_dir) if args.from_dir else None, progress=lambda m: print(m, file=sys.stderr))
    except SyncError as exc:
        print(f"error: sync failed: {exc}", file=sys.stderr)
        return 1
    print(f"synced {len(res.files)} files from {res.source} into {res.target}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m memeval_core", description="memeval: re-score and rank memory-benchmark results."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("leaderboard", help="print one row per run, re-derived from per-case data")
    _add_source_args(p)
    p.add_argument("--format", choices=("json", "csv", "table"), default="table")
    p.set_defaults(func=cmd_leaderboard)
    p = sub.add_parser("verify", help="compare every stated aggregate with the re-derived value; exit 1 on mismatch")
    _add_source_args(p)
    p.set_defaults(func=cmd_verify)
    p = sub.add_parser(
        "sync", help="download PMB fixtures and baseline reports from upstream into the results directory"
    )
    p.add_argument("--results", metavar="DIR", help="results directory to write into")
    p.add_argument(
        "--from",
        dest="from_dir",
        metavar="DIR",
        help="copy from a local tree laid out like the upstream repo instead of downloading",
    )
    p.add_argument(
        "--if-empty", action="store_true", help="do nothing when the results directory already holds results"
    )
    p.set_defaults(func=cmd_sync)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code: int = args.func(args)
    return code
