"""``run pmb``: seed a wrapper, run one or both suites, write the reports in the harness's format.

Order, as the harness's two test files run one after the other: each suite reseeds (``RESEED=true``) or only
loads the fixture into the seed index (``--no-reseed``); the single-turn suite runs first, because the session
suite adds beliefs to the wrapper's store.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal, TextIO

from memeval_core import __version__
from memeval_core.pmb.fixtures import BELIEFS_FILE, PmbFixture
from memeval_core.pmb.models import RetrievalCase, SessionTurn
from memeval_core.runner import checkpoint, report
from memeval_core.runner.client import WrapperClient
from memeval_core.runner.config import ProviderConfig
from memeval_core.runner.context import Belief
from memeval_core.runner.harness import Harness
from memeval_core.runner.progress import Progress
from memeval_core.runner.suites import after_turn, run_case, run_turn

Suite = Literal["single", "session"]
SUITES: dict[str, tuple[Suite, ...]] = {"single": ("single",), "session": ("session",), "both": ("single", "session")}


@dataclass(frozen=True)
class RunOptions:
    """Everything ``run pmb`` was told."""

    url: str
    provider: str
    out: Path
    fixture: PmbFixture
    fixture_dir: Path
    cfg: ProviderConfig = field(default_factory=ProviderConfig)
    suites: tuple[Suite, ...] = ("single", "session")
    reseed: bool = True
    resume: bool = False
    timeout_s: float = 30.0
    retries: int = 2
    drop_unknown_ids: bool = False
    progress: TextIO | None = None
    run_date: str = field(default_factory=lambda: dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
    stop_after: int | None = None
    """Tests: stop (as if killed) after this many cases or turns, leaving the checkpoint behind."""


def report_name(suite: Suite, provider: str) -> str:
    """``retrieval-report-NAME.json`` / ``session-retrieval-report-NAME.json``, as the tests name them."""
    return f"{'session-' if suite == 'session' else ''}retrieval-report-{provider}.json"


def _beliefs(opts: RunOptions) -> list[Belief]:
    data: list[Belief] = json.loads((opts.fixture_dir / BELIEFS_FILE).read_text(encoding="utf-8"))
    return data


def _header(opts: RunOptions, suite: Suite, url: str) -> dict[str, Any]:
    return {
        "provider": opts.provider,
        "suite": suite,
        "wrapperUrl": url,
        "reseed": opts.reseed,
        "fixtureSha256": dict(sorted(opts.fixture.sha256.items())),
        "config": opts.cfg.model_dump(by_alias=True),
    }


def provenance(opts: RunOptions, url: str, suite: Suite) -> dict[str, Any]:
    """Who made the report: memeval, its version, the date, the wrapper (no credentials), the fixture."""
    return {
        "package": "memeval",
        "version": __version__,
        "runDate": opts.run_date,
        "runner": "memeval run pmb",
        "wrapperUrl": url,
        "suite": suite,
        "reseed": opts.reseed,
        "fixtureSha256": dict(sorted(opts.fixture.sha256.items())),
        "providerConfig": opts.cfg.model_dump(by_alias=True, exclude={"env_var", "default_url"}),
    }


def write_atomic(path: Path, doc: dict[str, Any]) -> None:
    """``path`` with ``doc`` as indented JSON, written to a temp file and renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class StoppedError(Exception):
    """The run stopped on purpose before its end (``stop_after``): the checkpoint is left for ``--resume``."""


def run_pmb(opts: RunOptions) -> list[Path]:
    """Run the suites; the reports written. Raises :class:`WrapperError` on a wrapper fault."""
    client = WrapperClient(opts.url, timeout_s=opts.timeout_s, retries=opts.retries)
    written = []
    try:
        for suite in opts.suites:
            written.append(_run_suite(opts, client, suite))
    finally:
        client.close()
    return written


def _run_suite(opts: RunOptions, client: WrapperClient, suite: Suite) -> Path:
    path = opts.out / report_name(suite, opts.provider)
    part = checkpoint.partial_path(path)
    header = _header(opts, suite, client.url)
    resumed = checkpoint.read(part, header) if opts.resume else None
    if opts.resume and resumed is None and path.is_file():
        return path  # finished by the interrupted run
    h = Harness(client, opts.cfg, session=suite == "session", drop_unknown_ids=opts.drop_unknown_ids)
    beliefs = _beliefs(opts)
    writer = checkpoint.Writer(part, header, fresh=resumed is None or not resumed.seeded)
    try:
        if resumed is not None and resumed.seeded:
            ingestion, done = resumed.ingestion, resumed.entries
            h.load_fixture(beliefs)
        else:
            done = []
            ingestion = _seed(opts, h, beliefs, suite) if opts.reseed else None
            if not opts.reseed:
                h.load_fixture(beliefs)
            writer.seeded(ingestion)
        entries = _cases(opts, h, suite, done, writer)
    except BaseException:
        writer.close(remove=False)
        raise
    # Upstream: the single-turn test always writes `ingestion` (empty without RESEED), the session test only
    # with RESEED (retrieval.external.eval.test.ts / session-retrieval.external.eval.test.ts, test.after.always).
    ingestion_out = ingestion if ingestion is not None else ([] if suite == "single" else None)
    case_count = len(opts.fixture.cases if suite == "single" else opts.fixture.session_cases)
    doc = report.payload(
        opts.provider,
        entries,
        case_count,
        turn_count=len(entries) if suite == "session" else None,
        ingestion=ingestion_out,
        provenance=provenance(opts, client.url, suite),
    )
    write_atomic(path, doc)
    writer.close(remove=True)
    return path


def _seed(opts: RunOptions, h: Harness, beliefs: list[Belief], suite: Suite) -> list[dict[str, Any]]:
    bar = Progress(opts.progress, f"seed {suite}", len(beliefs), "beliefs")

    def tick(i: int, n: int) -> None:
        bar.update(i, h.add_ms)

    out = h.seed(beliefs, tick)
    bar.finish(len(beliefs), h.add_ms)
    return out


def _cases(
    opts: RunOptions, h: Harness, suite: Suite, done: list[dict[str, Any]], writer: checkpoint.Writer
) -> list[dict[str, Any]]:
    entries = list(done)
    fx = opts.fixture
    steps: list[tuple[Any, Callable[[bool], dict[str, Any] | None]]] = []
    if suite == "single":
        steps += [((c.case_id,), partial(_case_step, h, fx, c)) for c in fx.cases]
    else:
        for sc in fx.session_cases:
            steps += [((sc.case_id, t.turn_index), partial(_turn_step, h, fx, sc.case_id, t)) for t in sc.turns]
    finished = {(e["caseId"],) if suite == "single" else (e["caseId"], e["turnIndex"]) for e in done}
    bar = Progress(opts.progress, suite, len(steps), "cases" if suite == "single" else "turns")
    ran = 0
    for key, step in steps:
        if key in finished:
            step(False)  # replays a session turn's effect on the seed index; a single-turn case has none
            continue
        if opts.stop_after is not None and ran >= opts.stop_after:
            raise StoppedError(f"stopped after {ran} {'cases' if suite == 'single' else 'turns'}")
        entry = step(True)
        assert entry is not None
        writer.entry(entry)
        entries.append(entry)
        ran += 1
        bar.update(len(entries), h.search_ms)
    bar.finish(len(entries), h.search_ms)
    return _in_fixture_order(entries, [k for k, _ in steps], suite)


def _case_step(h: Harness, fx: PmbFixture, case: RetrievalCase, run: bool) -> dict[str, Any] | None:
    return run_case(h, fx, case) if run else None


def _turn_step(h: Harness, fx: PmbFixture, case_id: str, turn: SessionTurn, run: bool) -> dict[str, Any] | None:
    entry = run_turn(h, fx, case_id, turn) if run else None
    after_turn(h, case_id, turn, send=run)
    return entry


def _in_fixture_order(entries: list[dict[str, Any]], keys: list[Any], suite: Suite) -> list[dict[str, Any]]:
    by_key = {((e["caseId"],) if suite == "single" else (e["caseId"], e["turnIndex"])): e for e in entries}
    return [by_key[k] for k in keys if k in by_key]
