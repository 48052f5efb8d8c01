"""Issue 22 at its size: a results dataset of 10,000 PMB runs and 1,000 LoCoMo runs (1,540 questions each) on the
local Hub stand-in, against the same runs in a folder.

The corpus is bench_core's, made from the shared data's shapes. One push, then: the CLI's leaderboard and the home
page's boards from the dataset equal the folder's exactly; the first page reads the manifest and the stored home
page, at most :data:`FIRST_PAGE_BYTES`; a second start on the same revision fetches nothing but the manifest's
metadata. (Concurrent pushes, failures and new revisions are tested on the shared data in test_hub_results.py.)
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
import pytest

from bench.bench_core import make_corpus
from memeval_core import cli
from memeval_core.explore import front
from memeval_core.explore.home import all_boards
from memeval_core.hub_location import HubLocation
from memeval_core.hub_results import MANIFEST, open_front, push_runs
from memeval_core.results import load_all_results, load_headers
from tests._data import PMB_DIR, SHARED_DATA, require
from tests.hub_standin import HubStandIn

pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")

DATASET = "standin-user/issue-22-scale"
PMB_RUNS, LOCOMO_RUNS = 10_000, 1_000
FIRST_PAGE_BYTES = 256 * 1024
"""The stated bound of the first page of a dataset pushed in one part, whatever its number of runs (108 KB
measured at 11,000 runs: docs/PERFORMANCE.md, section 8)."""


def _leaderboard(root: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert cli.main(["leaderboard", "--results", root, "--format", "json"]) == 0
    return hashlib.sha256(capsys.readouterr().out.encode()).hexdigest()


def test_ten_thousand_runs_on_the_hub_read_as_from_the_folder(
    hub: HubStandIn,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    require(PMB_DIR)
    require(SHARED_DATA / "locomo")
    folder, cache = tmp_path / "corpus", tmp_path / "memeval-cache"
    make_corpus(folder, PMB_RUNS, LOCOMO_RUNS)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(cache))
    pmb, qa = load_all_results(folder, folder, cache_dir=cache)
    assert (len(pmb.runs), len(qa.runs)) == (PMB_RUNS, LOCOMO_RUNS)
    push_runs(pmb, qa, DATASET, token=None, results=folder)
    del pmb, qa

    assert _leaderboard(f"hf://datasets/{DATASET}", capsys) == _leaderboard(str(folder), capsys)

    start = len(hub.requests)
    opened = open_front(HubLocation(DATASET), cache_dir=tmp_path / "first-page")
    assert opened is not None
    assert {r.path.rsplit("/", 1)[-1] for r in hub.requests[start:]} == {MANIFEST, front.FRONT_FILE}
    assert hub.bytes_sent(start) <= FIRST_PAGE_BYTES
    pmb_headers, qa_headers = load_headers(folder, folder, cache_dir=cache)
    folder_boards = [b.top(front.TOP_ROWS) for b in all_boards(pmb_headers.table, pmb_headers.fixture, qa_headers.runs)]
    stored = front.boards_of(opened.front)
    assert [(b.title, b.n_runs) for b in stored] == [(b.title, b.n_runs) for b in folder_boards]
    assert sum(b.n_runs for b in stored) == PMB_RUNS + LOCOMO_RUNS
    for a, b in zip(stored, folder_boards, strict=True):
        pd.testing.assert_frame_equal(a.frame, b.frame, check_exact=True)

    again = len(hub.requests)
    assert open_front(HubLocation(DATASET), cache_dir=tmp_path / "first-page") == opened
    assert [(r.method, r.path.rsplit("/", 1)[-1]) for r in hub.requests[again:]] == [("HEAD", MANIFEST)]
    assert hub.bytes_sent(again) == 0
