"""``python -m memeval_core export`` and ``push``: publish the leaderboard as a Hugging Face Space.

:func:`register` adds both subcommands to the main CLI's subparsers. There is deliberately no ``--token`` flag:
a token on the command line lands in shell history, so it comes from ``HF_TOKEN`` or the saved
login only.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from memeval_core.errors import cli_error
from memeval_core.export.space import SpaceOptions
from memeval_core.export.writer import ExportError, ExportResult, export, write_export
from memeval_core.hub_location import HubLocation, HubResultsError
from memeval_core.results import load_all_results
from memeval_core.settings import DEFAULT_RESULTS, RESULTS_ENV, datasets_dir, fixtures_dir, results_dir, results_root

DEFAULT_OUT = "hf_export"
"""Default export folder (relative to the working directory)."""


def _export(args: argparse.Namespace, out: Path, options: SpaceOptions) -> ExportResult:
    """The export of ``--results``: a folder, or a results dataset read whole at the commit its revision names."""
    root = results_root(args.results)
    if not isinstance(root, HubLocation):
        return export(
            root,
            out,
            fixtures_dir(args.fixtures),
            allow_errors=args.allow_errors,
            options=options,
            include_text=args.include_text,
        )
    if args.fixtures:
        raise ExportError("--fixtures applies to a results folder: a dataset's runs were scored when they were pushed")
    from memeval_core.export import from_hub  # the Hub client costs 0.2 s to import: only a Hub root pays it

    return write_export(from_hub.dataset_source(root, include_text=args.include_text), out, options=options)


def main_export(args: argparse.Namespace) -> int:
    """Run ``export``: print the fingerprint and the file list with sizes; exit 1 with one error line on failure."""
    out = Path(args.out)
    overrides = {k: v for k, v in (("title", args.title), ("license", args.license)) if v}
    try:
        result = _export(args, out, SpaceOptions(**overrides))
    except (ExportError, ValueError) as exc:  # ValueError includes HubResultsError: a dataset that cannot be read
        return cli_error(f"export failed, {out} is unchanged: {exc}", 1)
    for problem in result.skipped_errors:
        print(f"warning: left out: {problem}", file=sys.stderr)
    total = sum(f.size for f in result.files)
    print(f"exported {len(result.files)} files ({total} bytes) to {out}")
    print(f"fingerprint {result.fingerprint}")
    if args.verbose:
        for f in result.files:
            print(f"  {f.size:>10}  {f.path}")
    return 0


def push_results(args: argparse.Namespace) -> int:
    """``push --dataset OWNER/NAME`` without ``--space``: add the results folder's new runs to a results dataset."""
    root = results_dir(args.results)
    if not root.is_dir():
        return cli_error(f"results directory {root} does not exist (pass --results DIR)", 1)
    from memeval_core.hub_results import push_runs  # the Hub client costs 0.2 s to import: only push pays it

    pmb, qa = load_all_results(root, root, fixtures_dir(args.fixtures), datasets_dir(None))
    for problem in (*pmb.errors, *qa.errors):
        print(f"warning: left out: {problem}", file=sys.stderr)
    try:
        outcome = push_runs(pmb, qa, args.dataset, token=None, private=args.private, results=root)
    except HubResultsError as exc:
        return cli_error(str(exc), 1)
    print(outcome.describe())
    return 0


def main_push(args: argparse.Namespace) -> int:
    """Run ``push``: one line per repo (and its file changes); exit 1 with one sentence on failure."""
    if args.space is None and args.dataset is None:
        return cli_error("pass --space OWNER/NAME (an export) or --dataset OWNER/NAME (results)", 1)
    # The Hub client costs 0.2 s to import: only push pays it (every other command starts without it).
    from huggingface_hub.utils.tqdm import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

    from memeval_core.export.hub import PushError, push_space

    # Upload progress bars would bury the one-line outcome (and the one-sentence error).
    bars_were_on = not are_progress_bars_disabled()
    disable_progress_bars()
    try:
        if args.space is None:
            return push_results(args)
        result = push_space(
            Path(args.from_dir),
            args.space,
            token=None,
            private=args.private,
            dry_run=args.dry_run,
            dataset=args.dataset,
            force=args.force,
        )
    except PushError as exc:
        return cli_error(str(exc), 1)
    finally:
        if bars_were_on:
            enable_progress_bars()
    for line in result.lines:
        print(line)
    return 0


def register(subparsers: Any) -> None:
    """Add the ``export`` and ``push`` subcommands to an ``argparse`` subparsers object."""
    p = subparsers.add_parser("export", help="write leaderboard.json, Parquet details and a ready Space to a folder")
    p.add_argument(
        "--results",
        metavar="DIR|URL",
        help="results directory, or a results dataset hf://datasets/OWNER/NAME[@REVISION] read at one commit "
        f"(token from HF_TOKEN or `hf auth login`; default: ${RESULTS_ENV} or {DEFAULT_RESULTS.name}/)",
    )
    p.add_argument(
        "--fixtures", metavar="DIR", help="folder with the PMB fixtures (default: under the results; not for a dataset)"
    )
    p.add_argument("--out", metavar="DIR", default=DEFAULT_OUT, help=f"export folder (default: {DEFAULT_OUT}/)")
    p.add_argument("--title", help="Space title (default: memeval leaderboard)")
    p.add_argument("--license", help="license id in the cards' front matter (default: from the inputs' licences)")
    p.add_argument(
        "--allow-errors", action="store_true", help="export without the input files that fail to load (listed)"
    )
    p.add_argument(
        "--include-text",
        action="store_true",
        help="put question and answer text under a non-commercial or unknown licence into the details too",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="list every exported file with its size")
    p.set_defaults(func=main_export)

    p = subparsers.add_parser(
        "push",
        help="upload an export to a Hugging Face Space, or add runs to a results dataset (token from HF_TOKEN or "
        "`hf auth login`)",
    )
    p.add_argument("--space", metavar="OWNER/NAME", help="the Space to create or update from the export")
    p.add_argument("--private", action="store_true", help="create the Space (and dataset) private")
    p.add_argument("--dry-run", action="store_true", help="list what would change; commit nothing")
    p.add_argument(
        "--dataset",
        metavar="OWNER/NAME",
        help="with --space: also push the Parquet details as this dataset repo; alone: add the new runs of --results "
        "to this results dataset (read it back with MEMEVAL_RESULTS=hf://datasets/OWNER/NAME)",
    )
    p.add_argument(
        "--results", metavar="DIR", help=f"results directory (default: ${RESULTS_ENV} or {DEFAULT_RESULTS.name}/)"
    )
    p.add_argument("--fixtures", metavar="DIR", help="folder with the PMB fixtures (default: under the results)")
    p.add_argument(
        "--from", dest="from_dir", metavar="DIR", default=DEFAULT_OUT, help=f"export folder (default: {DEFAULT_OUT}/)"
    )
    p.add_argument("--force", action="store_true", help="commit even when the Space already holds the same fingerprint")
    p.set_defaults(func=main_push)
