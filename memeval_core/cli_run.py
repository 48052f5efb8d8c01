"""``python -m memeval_core run pmb ...`` and ``python -m memeval_core wrapper NAME ...``.

``run pmb`` runs PrecisionMemBench against a provider wrapper and writes reports in the harness's format
(docs/RUNNER.md); ``wrapper`` serves one of the reference wrappers on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from memeval_core.errors import IngestError, cli_error
from memeval_core.pmb.ingest import find_fixture_dir, load_fixture
from memeval_core.runner.client import WrapperError
from memeval_core.runner.config import ProviderConfig, load_provider_config
from memeval_core.runner.run import SUITES, RunOptions, run_pmb
from memeval_core.settings import fixtures_dir, results_dir
from memeval_core.wrappers.reference import Everything, Nothing
from memeval_core.wrappers.replay import Replay
from memeval_core.wrappers.server import Provider, WrapperServer
from memeval_core.wrappers.sqlite_fts import SqliteFts

WRAPPERS = ("sqlite-fts", "nothing", "everything", "replay")


def _fixture_dir(flag: str | None, results: str | None) -> Path:
    chosen = fixtures_dir(flag)
    if chosen is not None:
        return chosen
    root = results_dir(results)
    found = find_fixture_dir(root) if root.is_dir() else None
    if found is None:
        raise IngestError(str(root), "$", "no PMB fixture (retrieval.cases.json) found", "pass --fixtures DIR")
    return found


def cmd_run_pmb(args: argparse.Namespace) -> int:
    """Run the suites; one sentence on stderr and exit 1 when the wrapper fails."""
    try:
        fx_dir = _fixture_dir(args.fixtures, args.results)
        fixture = load_fixture(fx_dir)
        cfg = load_provider_config(Path(args.config) if args.config else None, args.provider)
    except IngestError as exc:
        return cli_error(str(exc), 2)
    if args.seed_delay_ms is not None:
        cfg = cfg.model_copy(update={"seed_delay_ms": args.seed_delay_ms})
    url = args.url or cfg.default_url
    if not url:
        return cli_error("--url is required (the provider's block in --config has no defaultUrl)", 2)
    opts = RunOptions(
        url=url,
        provider=args.provider,
        out=Path(args.out),
        fixture=fixture,
        fixture_dir=fx_dir,
        cfg=cfg,
        suites=SUITES[args.suite],
        reseed=args.reseed,
        resume=args.resume,
        timeout_s=args.timeout,
        retries=args.retries,
        drop_unknown_ids=args.drop_unknown_ids,
        progress=None if args.quiet else sys.stderr,
    )
    try:
        paths = run_pmb(opts)
    except (WrapperError, IngestError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        print("the cases finished so far are kept: run again with --resume to continue", file=sys.stderr)
        return 1
    for p in paths:
        print(f"wrote {p}")
    return 0


def make_provider(args: argparse.Namespace) -> Provider:
    """The provider ``wrapper NAME`` serves."""

    if args.name == "sqlite-fts":
        db = Path(args.db) if args.db else Path(tempfile.gettempdir()) / "memeval-sqlite-fts.db"
        return SqliteFts(db)
    if args.name == "nothing":
        return Nothing()
    if args.name == "everything":
        return Everything()
    if not args.report:
        raise IngestError("replay", "$", "needs the report to replay", "python -m memeval_core wrapper replay REPORT")
    report = Path(args.report)
    fx = fixtures_dir(args.fixtures) or find_fixture_dir(report.resolve().parent.parent.parent)
    if fx is None:
        raise IngestError(str(report), "$", "no PMB fixture found near the report", "pass --fixtures DIR")
    return Replay.from_file(report, load_fixture(fx))


def cmd_wrapper(args: argparse.Namespace) -> int:
    """Serve a reference wrapper until interrupted."""
    try:
        provider = make_provider(args)
        server = WrapperServer(provider, args.port, delay_ms=args.delay_ms, verbose=args.verbose)
    except (IngestError, OSError, ValueError) as exc:
        return cli_error(str(exc), 2)
    where = f"; database {provider.path}" if hasattr(provider, "path") else ""
    print(f"{args.name} wrapper on {server.url} (Ctrl-C stops it{where})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def _add_run(sub: Any) -> None:
    p = sub.add_parser("run", help="run a benchmark against a provider wrapper (docs/RUNNER.md)")
    bench = p.add_subparsers(dest="benchmark", required=True)
    r = bench.add_parser("pmb", help="PrecisionMemBench: write retrieval-report-NAME.json files")
    r.add_argument("--url", help="the wrapper's base URL (default: defaultUrl of the provider in --config)")
    r.add_argument("--provider", required=True, metavar="NAME", help="provider name (report names and contents)")
    r.add_argument("--out", required=True, metavar="DIR", help="folder for the reports")
    r.add_argument("--suite", choices=tuple(SUITES), default="both", help="which suite(s) (default both)")
    r.add_argument("--config", metavar="FILE", help="an upstream-style providers.config.json")
    r.add_argument("--reseed", action=argparse.BooleanOptionalAction, default=True, help="reset and seed first")
    r.add_argument("--seed-delay-ms", type=int, metavar="N", help="pause after each seeded belief")
    r.add_argument("--resume", action="store_true", help="continue an interrupted run without re-seeding")
    r.add_argument("--timeout", type=float, default=30.0, metavar="S", help="seconds per call (default 30)")
    r.add_argument("--retries", type=int, default=2, metavar="N", help="retries on connection errors and 5xx")
    r.add_argument(
        "--drop-unknown-ids", action="store_true", help="drop ids the seed does not know silently (as upstream)"
    )
    r.add_argument("--fixtures", metavar="DIR", help="PMB fixture folder (default: found under the results)")
    r.add_argument("--results", metavar="DIR", help="results directory to look for the fixture in")
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    r.set_defaults(func=cmd_run_pmb)


def register(sub: Any) -> None:
    """Add ``run`` and ``wrapper`` to the main CLI's subparsers."""
    _add_run(sub)
    w = sub.add_parser("wrapper", help="serve a reference provider wrapper on 127.0.0.1")
    w.add_argument("name", choices=WRAPPERS)
    w.add_argument("report", nargs="?", metavar="REPORT", help="replay: the report whose ids to return")
    w.add_argument("--port", type=int, default=8080, help="port on 127.0.0.1 (default 8080; 0 picks one)")
    w.add_argument("--db", metavar="PATH", help="sqlite-fts: the database file (default in the temp folder)")
    w.add_argument("--fixtures", metavar="DIR", help="replay: PMB fixture folder (default: beside the report)")
    w.add_argument("--delay-ms", type=float, default=0, metavar="N", help="wait before answering each search")
    w.add_argument("--verbose", action="store_true", help="log every request")
    w.set_defaults(func=cmd_wrapper)


__all__ = ["WRAPPERS", "ProviderConfig", "register"]
