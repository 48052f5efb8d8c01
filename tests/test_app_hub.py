"""The app on a results dataset on the Hub (the local stand-in): the folder's leaderboard, a Refresh that reads
the dataset again, one sentence and the last good view when a read fails, and no page that writes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from huggingface_hub import CommitOperationAdd, HfApi

from memeval_core.explore.front import FRONT_FILE
from memeval_core.hub_results import MANIFEST, manifest_bytes, parse_manifest, push_runs
from memeval_core.pmb.ingest import PmbLoad
from memeval_core.qa.ingest import QaLoad
from memeval_core.settings import hub_endpoint
from pages import ui
from tests.apptest import run_page
from tests.hub_standin import HubStandIn

pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")

DATASET = "standin-user/app-results"


@pytest.fixture(scope="module")
def local(shared_loads: tuple[PmbLoad, QaLoad]) -> tuple[PmbLoad, QaLoad]:
    return shared_loads


def _tables(at: object) -> list[pd.DataFrame]:
    return [d.value.reset_index(drop=True) for d in at.dataframe]  # type: ignore[attr-defined]


def _run_counts(at: object) -> list[str]:
    counts = [c.value for c in at.sidebar.caption if "PrecisionMemBench" in c.value]  # type: ignore[attr-defined]
    assert len(counts) == 1 and "LoCoMo: " in counts[0], counts
    return counts


def test_home_shows_the_folders_boards_and_survives_a_failed_refresh(
    hub: HubStandIn, local: tuple[PmbLoad, QaLoad], shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMEVAL_RESULTS", str(shared_data))
    folder_at = run_page("pages/home.py")
    folder = _tables(folder_at)
    push_runs(*local, DATASET, token=None)
    monkeypatch.setenv("MEMEVAL_RESULTS", f"hf://datasets/{DATASET}")
    start = len(hub.requests)
    at = run_page("pages/home.py")
    read = {r.path.rsplit("/", 1)[-1] for r in hub.requests[start:]}
    assert read == {MANIFEST, FRONT_FILE}  # the stored home page, no run's file
    from_hub = _tables(at)
    assert len(from_hub) == len(folder) >= 3
    for a, b in zip(from_hub, folder, strict=True):
        pd.testing.assert_frame_equal(a, b)
    captions = " ".join(c.value for c in at.sidebar.caption)
    assert f"hf://datasets/{DATASET}" in captions and "read again every 15 minutes or on Refresh" in captions
    assert not at.error

    hub.drop_connections = True  # the next read fails midway through the Hub's answer
    at.button(key=ui.REFRESH_KEY).click().run()
    (error,) = at.error
    assert "Network error" in error.value and "showing the last view that was read" in error.value
    assert len(_tables(at)) == len(folder)  # the last good view stays on screen
    hub.drop_connections = False
    at.button(key=ui.REFRESH_KEY).click().run()
    assert not at.error
    assert _run_counts(at) == _run_counts(folder_at)  # the sidebar's counts from the stored home page
    at.switch_page("pages/leaderboard.py").run()  # the other pages read the runs' headers
    assert not at.exception and any("/parts/" in r.path for r in hub.requests[start:])


def test_no_page_writes_to_a_dataset(
    hub: HubStandIn, local: tuple[PmbLoad, QaLoad], monkeypatch: pytest.MonkeyPatch
) -> None:
    push_runs(*local, DATASET, token=None)
    monkeypatch.setenv("MEMEVAL_RESULTS", f"hf://datasets/{DATASET}")
    for page in ("pages/upload.py", "pages/publish.py"):
        at = run_page(page)
        assert any("no page writes to" in i.value for i in at.info), page
    writes = [r for r in hub.requests if r.method in ("POST", "PUT") and "/commit/" in r.path]
    assert len(writes) == 1  # the push above, nothing from the app


def test_an_unknown_dataset_is_one_sentence(hub: HubStandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMEVAL_RESULTS", "hf://datasets/standin-user/nothing-here")
    at = run_page("pages/home.py")
    (error,) = at.error
    assert "was not found (404" in error.value
    monkeypatch.setenv("MEMEVAL_RESULTS", "hf://me:hf_pasted@datasets/o/n")
    at = run_page("pages/leaderboard.py")
    (error,) = at.error
    assert "never from the URL" in error.value and "hf_pasted" not in error.value


def test_a_dataset_without_a_stored_home_page_is_read_whole_and_survives_a_failed_refresh(
    hub: HubStandIn, local: tuple[PmbLoad, QaLoad], shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMEVAL_RESULTS", str(shared_data))
    folder = _tables(run_page("pages/home.py"))
    push_runs(*local, DATASET, token=None)
    manifest = parse_manifest(hub.repo("dataset", DATASET).files[MANIFEST].data, "m")
    api = HfApi(endpoint=hub_endpoint(), token=None)
    unnamed = manifest_bytes(manifest.model_copy(update={"front_sha256": None}))  # as pushed before layout 2
    api.create_commit(DATASET, [CommitOperationAdd(MANIFEST, unnamed)], commit_message="m", repo_type="dataset")
    monkeypatch.setenv("MEMEVAL_RESULTS", f"hf://datasets/{DATASET}")
    at = run_page("pages/home.py")
    for a, b in zip(_tables(at), folder, strict=True):
        pd.testing.assert_frame_equal(a, b)

    hub.drop_connections = True
    at.button(key=ui.REFRESH_KEY).click().run()
    (error,) = at.error  # one sentence, not one per read
    assert "Network error" in error.value and "showing the last view that was read" in error.value
    assert len(_tables(at)) == len(folder)
    hub.drop_connections = False
