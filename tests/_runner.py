"""Helpers for the runner tests: the fixture, a wrapper served from a thread, one runner call."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.ingest import load_fixture
from memeval_core.runner.config import ProviderConfig
from memeval_core.runner.run import RunOptions, Suite, run_pmb
from memeval_core.wrappers.server import Provider, WrapperServer
from tests._data import PMB_DIR, require

FIXTURE_DIR = PMB_DIR / "fixtures"
BASELINE_DIR = PMB_DIR / "test-results" / "baseline"


def fixture() -> PmbFixture:
    """The real PMB fixture (skips when the shared data is absent)."""
    return load_fixture(require(FIXTURE_DIR))


@contextmanager
def serving(provider: Provider, delay_ms: float = 0) -> Iterator[WrapperServer]:
    """``provider`` on a free port of 127.0.0.1 for the duration of the block."""
    srv = WrapperServer(provider, delay_ms=delay_ms)
    threading.Thread(target=srv.serve_forever, name=f"wrapper-{provider.name}", daemon=True).start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


def run(url: str, out: Path, suites: tuple[Suite, ...], **kw: Any) -> list[Path]:
    """One runner call against the real fixture, quiet, with fast retries."""
    cfg = kw.pop("cfg", ProviderConfig())
    opts = RunOptions(
        url=url,
        provider=kw.pop("provider", "test"),
        out=out,
        fixture=fixture(),
        fixture_dir=FIXTURE_DIR,
        cfg=cfg,
        suites=suites,
        **kw,
    )
    return run_pmb(opts)
