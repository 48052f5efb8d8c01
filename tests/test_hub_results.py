"""Results in a Hugging Face dataset, against the local Hub stand-in: the same leaderboard as the folder, a
second start that fetches nothing but the manifest's metadata, pushes that add only new runs (and race
safely), and one sentence for every failure."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi

from memeval_core import SCORING_VERSION, cli, leaderboard
from memeval_core.explore import front
from memeval_core.explore.front import FRONT_FILE
from memeval_core.explore.home import all_boards
from memeval_core.hub_location import HubLocation, HubResultsError, parse_location
from memeval_core.hub_results import (
    MANIFEST,
    Manifest,
    OpenedDataset,
    Part,
    manifest_bytes,
    open_dataset,
    open_front,
    parse_manifest,
    push_runs,
    read_dataset,
)
from memeval_core.pmb.ingest import PmbLoad
from memeval_core.qa import leaderboard as qa_leaderboard
from memeval_core.qa.ingest import QaLoad
from memeval_core.settings import hub_endpoint
from tests import _pmb_oracle as oracle
from tests.hub_standin import HUB_TOKEN, HubStandIn

pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")

DATASET = "standin-user/memeval-results"


@pytest.fixture(scope="module")
def local(shared_loads: tuple[PmbLoad, QaLoad]) -> tuple[PmbLoad, QaLoad]:
    return shared_loads


def _halves(local: tuple[PmbLoad, QaLoad]) -> tuple[tuple[PmbLoad, QaLoad], tuple[PmbLoad, QaLoad]]:
    pmb, qa = local
    first = (dataclasses.replace(pmb, runs=pmb.runs[::2]), dataclasses.replace(qa, runs=qa.runs[::2]))
    second = (dataclasses.replace(pmb, runs=pmb.runs[1::2]), dataclasses.replace(qa, runs=qa.runs[1::2]))
    return first, second


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("results/", None),
        ("hf://datasets/owner/name", HubLocation("owner/name")),
        ("hf://datasets/owner/name@v1.0", HubLocation("owner/name", "v1.0")),
        ("hf://datasets/owner/name@" + "a" * 40, HubLocation("owner/name", "a" * 40)),
    ],
)
def test_locations_parse(text: str, want: HubLocation | None) -> None:
    assert parse_location(text) == want
    if want is not None:
        assert str(want) == text


@pytest.mark.parametrize(
    "text",
    [
        "hf://user:hf_secret@datasets/owner/name",
        "hf://datasets/owner/name?token=hf_secret",
        "hf://owner/name",
        "hf://spaces/owner/name",
        "hf://datasets/owner/name@../../etc",
        "hf://datasets/owner",
    ],
)
def test_other_hf_urls_are_refused_in_one_sentence(text: str) -> None:
    with pytest.raises(HubResultsError, match="is not a results dataset: write hf://datasets/OWNER/NAME") as info:
        parse_location(text)
    assert "secret" not in str(info.value) and "owner" not in str(info.value)


def test_a_malformed_manifest_names_the_field() -> None:
    with pytest.raises(HubResultsError, match=r"m\.json: field parts\.0\.path"):
        parse_manifest(b'{"layout": 1, "scoring_version": "x", "parts": [{"path": "../x", "files": {}}]}', "m.json")
    with pytest.raises(HubResultsError, match=r"m\.json: field parts\.0\.pmb_runs: .*greater than or equal to 0"):
        parse_manifest(
            b'{"layout": 2, "scoring_version": "x", "parts": [{"path": "parts/' + b"0" * 16 + b'", "pmb_runs": -1, '
            b'"files": {}}]}',
            "m.json",
        )
    with pytest.raises(HubResultsError, match="layout 7 is not one"):
        parse_manifest(b'{"layout": 7}', "m.json")
    with pytest.raises(HubResultsError, match="not valid JSON"):
        parse_manifest(b"{", "m.json")
    with pytest.raises(HubResultsError, match=r"m\.json: nested too deeply"):
        parse_manifest(b"[" * 100_000 + b"]" * 100_000, "m.json")


PART = {"path": "parts/" + "0" * 16, "files": {"pmb-fixture.json": "a", "qa-runs.jsonl": "b"}}


@pytest.mark.parametrize(
    ("doc", "words"),
    [
        ({"layout": True}, "layout True is not one this memeval reads"),
        ({"layout": 2.0}, "layout 2.0 is not one this memeval reads"),
        (
            {"layout": 2, "parts": [PART | {"pmb_runs": "3", "qa_runs": 1}]},
            "parts.0.pmb_runs: Input should be a valid integer",
        ),
        (
            {"layout": 2, "parts": [PART | {"pmb_runs": True, "qa_runs": 1}]},
            "parts.0.pmb_runs: Input should be a valid integer",
        ),
        (
            {"layout": 1, "parts": [PART | {"pmb_runs": [1, None, {}], "qa_runs": ["q"]}]},
            "parts.0.pmb_runs: Input should be a valid integer",
        ),
        ({"layout": 1, "front_sha256": "0" * 64}, "layout 1 has no front_sha256"),
        ({"layout": 2, "parts": [PART | {"pmb_runs": 1, "qa_runs": 1}] * 2}, f"parts: {PART['path']} is listed twice"),
        (
            {"layout": 2, "parts": [PART | {"pmb_runs": 0, "qa_runs": 1}]},
            "pmb_runs is 0 but the part lists pmb-fixture.json",
        ),
    ],
)
def test_a_hostile_manifest_is_refused_in_one_sentence(doc: dict[str, Any], words: str) -> None:
    data = json.dumps({"scoring_version": SCORING_VERSION} | doc).encode()
    with pytest.raises(HubResultsError) as info:
        parse_manifest(data, "m.json")
    assert str(info.value).startswith("m.json: ") and words in str(info.value) and "\n" not in str(info.value)


def test_a_layout_1_manifest_becomes_layout_2() -> None:
    old = {
        "layout": 1,
        "scoring_version": SCORING_VERSION,
        "parts": [PART | {"pmb_runs": ["a", "b"], "qa_runs": ["q"]}],
    }
    manifest = parse_manifest(json.dumps(old).encode(), "m.json")
    assert manifest.layout == 2 and manifest.front_sha256 is None
    assert [(p.pmb_runs, p.qa_runs) for p in manifest.parts] == [(2, 1)]


def test_the_dataset_gives_the_folders_leaderboard_and_runs(
    hub: HubStandIn, local: tuple[PmbLoad, QaLoad], tmp_path: Path
) -> None:
    pmb, qa = local
    outcome = push_runs(pmb, qa, DATASET, token=None)
    assert outcome.status == "committed" and (outcome.pmb_runs, outcome.qa_runs) == (len(pmb.runs), len(qa.runs))
    opened = open_dataset(HubLocation(DATASET), cache_dir=tmp_path / "cache")
    assert leaderboard.table_rows(opened.pmb.table) == oracle.rows(pmb.runs)
    assert qa_leaderboard.rows(list(opened.qa.runs)) == qa_leaderboard.rows(list(qa.runs))
    run = pmb.runs[5]
    (back,) = opened.pmb.read_runs([run.identity.run_id])
    assert back.cases == run.cases and back.stated == run.stated
    (qa_back,) = opened.qa.read_runs([qa.runs[3].run_id])
    assert qa_back == qa.runs[3]


def test_opening_the_runs_reads_headers_and_a_second_start_only_the_manifests_metadata(
    hub: HubStandIn, local: tuple[PmbLoad, QaLoad], tmp_path: Path
) -> None:
    pmb, qa = local
    push_runs(pmb, qa, DATASET, token=None)
    repo = hub.repo("dataset", DATASET)
    cases = sum(len(f.data) for p, f in repo.files.items() if p.endswith(("-cases.parquet", "-questions.parquet")))
    everything = sum(len(f.data) for f in repo.files.values())
    start = len(hub.requests)
    opened = open_dataset(HubLocation(DATASET), cache_dir=tmp_path / "cache")
    first_page = hub.bytes_sent(start)
    assert 0 < first_page <= everything - cases  # no case, no question
    assert not any(r.path.endswith(("-cases.parquet", "-questions.parquet")) for r in hub.requests[start:])
    opened.pmb.read_runs([pmb.runs[0].identity.run_id])  # a page that shows cases fetches them now
    assert any(r.path.endswith("pmb-cases.parquet") for r in hub.requests[start:])

    again = len(hub.requests)
    reopened = open_dataset(HubLocation(DATASET), cache_dir=tmp_path / "cache")
    assert [(r.method, r.path.rsplit("/", 1)[-1]) for r in hub.requests[again:]] == [("HEAD", MANIFEST)]
    assert hub.bytes_sent(again) == 0
    assert reopened.commit == opened.commit
    assert leaderboard.table_rows(reopened.pmb.table) == leaderboard.table_rows(opened.pmb.table)


FIRST_PAGE_BYTES_PER_ROW = 1024
"""The stated bound of the first page: the manifest, and at most this many bytes per board row it shows."""


def test_the_first_page_reads_the_manifest_and_the_stored_home_page_only(
    hub: HubStandIn, local: tuple[PmbLoad, QaLoad], tmp_path: Path
) -> None:
    pmb, qa = local
    push_runs(pmb, qa, DATASET, token=None)
    repo = hub.repo("dataset", DATASET)
    start = len(hub.requests)
    opened = open_front(HubLocation(DATASET), cache_dir=tmp_path / "cache")
    assert opened is not None
    assert {r.path.rsplit("/", 1)[-1] for r in hub.requests[start:]} == {MANIFEST, FRONT_FILE}
    sent = hub.bytes_sent(start)
    assert sent == len(repo.files[MANIFEST].data) + len(repo.files[FRONT_FILE].data)
    shown = sum(len(b.rows) for b in (*opened.front.boards, *opened.front.publishable_qa_boards))
    assert sent <= len(repo.files[MANIFEST].data) + FIRST_PAGE_BYTES_PER_ROW * shown

    # The boards are those of the dataset's runs, exactly, in both views.
    dataset = open_dataset(HubLocation(DATASET), cache_dir=tmp_path / "cache")
    for only in (False, True):
        want = [
            b.top(front.TOP_ROWS) for b in all_boards(dataset.pmb.table, dataset.pmb.fixture, dataset.qa.runs, only)
        ]
        got = front.boards_of(opened.front, only)
        assert [(b.title, b.n_runs, b.n_below_nothing) for b in got] == [
            (b.title, b.n_runs, b.n_below_nothing) for b in want
        ]
        for a, b in zip(got, want, strict=True):
            pd.testing.assert_frame_equal(a.frame, b.frame, check_exact=True)

    again = len(hub.requests)
    assert open_front(HubLocation(DATASET), cache_dir=tmp_path / "cache") == opened
    assert [(r.method, r.path.rsplit("/", 1)[-1]) for r in hub.requests[again:]] == [("HEAD", MANIFEST)]


def _front_covers(dataset: OpenedDataset, cache: Path) -> None:
    """The stored home page is the one of every run the dataset holds."""
    opened = open_front(dataset.location, cache_dir=cache)
    assert opened is not None and opened.commit == dataset.commit
    assert sum(opened.front.run_counts.values()) == dataset.pmb.table.num_rows + len(dataset.qa.runs)
    want = [b.top(front.TOP_ROWS) for b in all_boards(dataset.pmb.table, dataset.pmb.fixture, dataset.qa.runs)]
    for a, b in zip(front.boards_of(opened.front), want, strict=True):
        pd.testing.assert_frame_equal(a.frame, b.frame, check_exact=True)


def _commit(files: dict[str, bytes]) -> None:
    api = HfApi(endpoint=hub_endpoint(), token=None)
    ops = [CommitOperationAdd(path, data) for path, data in files.items()]
    api.create_commit(DATASET, ops, commit_message="by hand", repo_type="dataset")


def test_a_dataset_of_layout_1_is_read_and_a_push_stores_its_home_page(
    hub: HubStandIn, local: tuple[PmbLoad, QaLoad], tmp_path: Path
) -> None:
    first, _ = _halves(local)
    push_runs(*first, DATASET, token=None)
    layout_2 = open_dataset(HubLocation(DATASET), cache_dir=tmp_path / "a")
    assert len(layout_2.manifest.parts) == 1
    ids = {"pmb_runs": [r.identity.run_id for r in first[0].runs], "qa_runs": [r.run_id for r in first[1].runs]}
    doc = layout_2.manifest.model_dump(mode="json", exclude={"front_sha256"}) | {"layout": 1}
    doc["parts"] = [doc["parts"][0] | ids]  # what a memeval of layout 1 wrote: every run id
    old = json.dumps(doc).encode()
    assert parse_manifest(old, "m.json") == layout_2.manifest.model_copy(update={"front_sha256": None})
    _commit({MANIFEST: old})

    assert open_front(HubLocation(DATASET), cache_dir=tmp_path / "b") is None  # the app reads the headers instead
    read = open_dataset(HubLocation(DATASET), cache_dir=tmp_path / "b")
    assert leaderboard.table_rows(read.pmb.table) == leaderboard.table_rows(layout_2.pmb.table)
    commits = len(hub.commits)
    stored = push_runs(*first, DATASET, token=None)  # no new run (the ids come from the parts' headers) ...
    assert stored.status == "home page stored" and len(hub.commits) == commits + 1  # ... but the page is stored
    assert stored.describe() == (
        f"Dataset {DATASET} already holds every run; committed its home page (commit {stored.commit})."
    )
    after = json.loads(hub.repo("dataset", DATASET).files[MANIFEST].data)
    assert after["layout"] == 2 and [p["pmb_runs"] for p in after["parts"]] == [len(first[0].runs)]
    upgraded = open_front(HubLocation(DATASET), cache_dir=tmp_path / "c")
    assert upgraded is not None
    assert sum(upgraded.front.run_counts.values()) == len(first[0].runs) + len(first[1].runs)
    assert push_runs(*first, DATASET, token=None).status == "unchanged"

    push_runs(*local, DATASET, token=None)
    opened = open_front(HubLocation(DATASET), cache_dir=tmp_path / "d")
    assert opened is not None
    assert sum(opened.front.run_counts.values()) == len(local[0].runs) + len(local[1].runs)


def test_a_stored_home_page_that_is_not_the_manifests_is_not_used(
    hub: HubStandIn, local: tuple[PmbLoad, QaLoad], tmp_path: Path
) -> None:
    first, _ = _halves(local)
    push_runs(*first, DATASET, token=None)
    push_runs(*local, DATASET, token=None)
    files = dict(hub.repo("dataset", DATASET).files)
    manifest = parse_manifest(files[MANIFEST].data, "m")
    good = files[FRONT_FILE].data
    assert open_front(HubLocation(DATASET), cache_dir=tmp_path / "a") is not None

    def named(front: bytes, parts: object = manifest.parts) -> dict[str, bytes]:
        changed = manifest.model_copy(update={"front_sha256": hashlib.sha256(front).hexdigest(), "parts": parts})
        return {FRONT_FILE: front, MANIFEST: manifest_bytes(changed)}

    for n, files_now in enumerate(
        [
            {FRONT_FILE: good.replace(b'"rank":1,', b'"rank":2,', 1)},  # changed after the manifest named it
            named(b"{}"),  # not a stored home page
            named(good.replace(SCORING_VERSION.encode(), b"0.0.0", 1)),  # other scoring code
            named(good, manifest.parts[1:]),  # a part dropped from the manifest by hand
        ]
    ):
        _commit(files_now)
        assert open_front(HubLocation(DATASET), cache_dir=tmp_path / f"c{n}") is None, n  # the headers are read instead


def test_a_pinned_commit_needs_no_request_once_cached(
    hub: HubStandIn, local: tuple[PmbLoad, QaLoad], tmp_path: Path
) -> None:
    pmb, qa = local
    commit = push_runs(pmb, qa, DATASET, token=None).commit
    assert commit is not None
    open_dataset(HubLocation(DATASET, commit), cache_dir=tmp_path / "cache")
    start = len(hub.requests)
    open_dataset(HubLocation(DATASET, commit), cache_dir=tmp_path / "cache")
    assert hub.requests[start:] == []


def test_a_new_revision_fetches_only_the_new_parts_files(
    hub: HubStandIn, local: tuple[PmbLoad, QaLoad], tmp_path: Path
) -> None:
    first, _ = _halves(local)
    old_part = push_runs(*first, DATASET, token=None).part
    before = open_dataset(HubLocation(DATASET), cache_dir=tmp_path / "cache")
    new_part = push_runs(*local, DATASET, token=None).part
    assert old_part and new_part
    start = len(hub.requests)
    after = open_dataset(HubLocation(DATASET), cache_dir=tmp_path / "cache")
    asked = [r.path for r in hub.requests[start:]]
    assert after.commit != before.commit
    assert asked and all(p.endswith(MANIFEST) or f"/{new_part}/" in p for p in asked), asked
    assert leaderboard.table_rows(after.pmb.table) == oracle.rows(local[0].runs)
    # A run of the old part is read where its headers were: whole, and the same as the folder's.
    old_run = first[0].runs[0]
    (read,) = after.pmb.read_runs([old_run.identity.run_id])
    assert oracle.rows([read]) == oracle.rows([old_run])
    assert not any(f"/{new_part}/" in r.path and r.path.endswith("cases.parquet") for r in hub.requests[start:])


def test_a_part_cached_at_a_commit_the_hub_lost_is_fetched_again(
    hub: HubStandIn, local: tuple[PmbLoad, QaLoad], tmp_path: Path
) -> None:
    first, _ = _halves(local)
    old_part = push_runs(*first, DATASET, token=None).part
    before = open_dataset(HubLocation(DATASET), cache_dir=tmp_path / "cache")
    push_runs(*local, DATASET, token=None)
    hub.forget("dataset", DATASET, before.commit)  # a squash or force-push removed it; the cache still holds it
    start = len(hub.requests)
    after = open_dataset(HubLocation(DATASET), cache_dir=tmp_path / "cache")
    assert any(f"/{after.commit}/{old_part}/" in r.path for r in hub.requests[start:])
    old_run = first[0].runs[0]
    (read,) = after.pmb.read_runs([old_run.identity.run_id])  # its cases come from the commit that exists
    assert oracle.rows([read]) == oracle.rows([old_run])


def test_a_changed_cached_file_is_fetched_again(hub: HubStandIn, local: tuple[PmbLoad, QaLoad], tmp_path: Path) -> None:
    first, _ = _halves(local)
    push_runs(*first, DATASET, token=None)
    before = open_dataset(HubLocation(DATASET), cache_dir=tmp_path / "cache")
    runs_table = next((tmp_path / "cache").rglob(f"snapshots/{before.commit}/parts/*/pmb-runs.parquet"))
    data = runs_table.read_bytes()
    runs_table.unlink()  # the cache holds a symlink to a blob: replace the file, not the blob
    runs_table.write_bytes(data + b"tampered")
    push_runs(*local, DATASET, token=None)
    start = len(hub.requests)
    after = open_dataset(HubLocation(DATASET), cache_dir=tmp_path / "cache")
    assert any(r.path.endswith("pmb-runs.parquet") for r in hub.requests[start:])  # the Hub is asked again
    assert leaderboard.table_rows(after.pmb.table) == oracle.rows(local[0].runs)


def test_pushing_the_same_runs_twice_commits_nothing_and_new_runs_add_a_part(
    hub: HubStandIn, local: tuple[PmbLoad, QaLoad], tmp_path: Path
) -> None:
    first, second = _halves(local)
    push_runs(*first, DATASET, token=None)
    commits = len(hub.commits)
    again = push_runs(*first, DATASET, token=None)
    assert again.status == "unchanged" and len(hub.commits) == commits
    assert again.describe() == f"Dataset {DATASET} already holds every run; nothing committed."
    before = dict(hub.repo("dataset", DATASET).files)
    added = push_runs(*local, DATASET, token=None)  # only the second half is new
    assert (added.pmb_runs, added.qa_runs) == (len(second[0].runs), len(second[1].runs))
    after = hub.repo("dataset", DATASET).files
    rewritten = {p for p, f in before.items() if after[p].data != f.data}
    assert rewritten == {MANIFEST, FRONT_FILE}  # no part is rewritten; the manifest and the home page are
    opened = open_dataset(HubLocation(DATASET), cache_dir=tmp_path / "cache")
    assert len(opened.manifest.parts) == 2
    assert leaderboard.table_rows(opened.pmb.table) == oracle.rows(local[0].runs)


def test_a_push_that_loses_a_race_retries_on_the_new_head(
    hub: HubStandIn, local: tuple[PmbLoad, QaLoad], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import memeval_core.hub_results as hub_results

    first, second = _halves(local)
    read_manifest = hub_results._manifest_at
    raced: list[bool] = []

    def manifest_then_a_rival_push(*args: Any) -> Any:
        manifest = read_manifest(*args)
        if not raced:  # between reading the head and committing on it, another contributor's push lands
            raced.append(True)
            monkeypatch.setattr(hub_results, "_manifest_at", read_manifest)
            push_runs(*second, DATASET, token=None)
            monkeypatch.setattr(hub_results, "_manifest_at", manifest_then_a_rival_push)
        return manifest

    monkeypatch.setattr(hub_results, "_manifest_at", manifest_then_a_rival_push)
    outcome = push_runs(*first, DATASET, token=None)
    assert outcome.status == "committed" and outcome.attempts == 2
    assert "after 1 concurrent push(es)" in outcome.describe()
    opened = open_dataset(HubLocation(DATASET), cache_dir=tmp_path / "cache")
    _front_covers(opened, tmp_path / "front")
    assert sorted(leaderboard.table_rows(opened.pmb.table), key=str) == sorted(oracle.rows(local[0].runs), key=str)
    assert {q.run_id for q in opened.qa.runs} == {q.run_id for q in local[1].runs}


def test_two_concurrent_pushes_both_land(hub: HubStandIn, local: tuple[PmbLoad, QaLoad], tmp_path: Path) -> None:
    halves = _halves(local)
    outcomes: list[Any] = [None, None]

    def push(i: int) -> None:
        outcomes[i] = push_runs(*halves[i], DATASET, token=None)

    threads = [threading.Thread(target=push, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [o.status for o in outcomes] == ["committed", "committed"]
    opened = open_dataset(HubLocation(DATASET), cache_dir=tmp_path / "cache")
    _front_covers(opened, tmp_path / "front")
    assert {r["run_id"] for r in leaderboard.table_rows(opened.pmb.table)} == {r.identity.run_id for r in local[0].runs}
    assert len(opened.qa.runs) == len(local[1].runs)


def _failure(hub: HubStandIn, tmp_path: Path, location: HubLocation) -> str:
    with pytest.raises(HubResultsError) as info:
        open_dataset(location, cache_dir=tmp_path / "fresh")
    text = str(info.value)
    assert "\n" not in text and HUB_TOKEN not in text and "Traceback" not in text
    return text


def test_each_failure_is_one_sentence(hub: HubStandIn, local: tuple[PmbLoad, QaLoad], tmp_path: Path) -> None:
    first, second = _halves(local)
    old = push_runs(*first, DATASET, token=None).commit
    push_runs(*second, DATASET, token=None)
    assert old is not None
    hub.forget("dataset", DATASET, old)  # a force-push: the pinned commit no longer exists
    assert "revision asked for was not found" in _failure(hub, tmp_path, HubLocation(DATASET, old))
    assert "was not found (404" in _failure(hub, tmp_path, HubLocation("standin-user/missing"))
    hub.add_repo("dataset", "standin-user/empty")
    assert "holds no memeval-manifest.json" in _failure(hub, tmp_path, HubLocation("standin-user/empty"))
    for status, words in ((401, "rejected the token (401"), (403, "may not read dataset")):
        hub.fail_status, hub.fail_match = status, "memeval-results"
        assert words in _failure(hub, tmp_path, HubLocation(DATASET))
    hub.fail_status = None
    hub.drop_connections = True
    assert "Network error" in _failure(hub, tmp_path, HubLocation(DATASET))
    hub.drop_connections = False
    hub.drop_midway = True  # the headers arrive, the body is cut off
    assert "Network error" in _failure(hub, tmp_path, HubLocation(DATASET))


def test_the_command_line_pushes_and_reads_a_dataset(
    hub: HubStandIn, shared_data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if not (shared_data / "precisionmembench").is_dir():
        pytest.skip(f"{shared_data} lacks the public PMB data")
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", "off")
    assert cli.main(["push", "--dataset", DATASET, "--results", str(shared_data)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Committed ") and f"to dataset {DATASET} as parts/" in out
    assert cli.main(["push", "--dataset", DATASET, "--results", str(shared_data)]) == 0
    assert capsys.readouterr().out == f"Dataset {DATASET} already holds every run; nothing committed.\n"
    assert cli.main(["leaderboard", "--results", str(shared_data), "--format", "json"]) == 0
    folder = capsys.readouterr().out
    assert cli.main(["leaderboard", "--results", f"hf://datasets/{DATASET}", "--format", "json"]) == 0
    assert capsys.readouterr().out == folder
    monkeypatch.setenv("MEMEVAL_RESULTS", f"hf://datasets/{DATASET}")
    assert cli.main(["verify"]) == 1  # the public reports have mismatches, as from the folder
    assert "run(s) checked" in capsys.readouterr().out


def test_the_command_line_refuses_credentials_in_the_url(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["leaderboard", "--results", "hf://me:hf_secret@datasets/o/n"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "never from the URL" in err
    assert "hf_secret" not in err


def _pushed_part(hub: HubStandIn, local: tuple[PmbLoad, QaLoad]) -> tuple[Manifest, Part]:
    """Push the shared data as one part; the manifest the stand-in holds, and that part."""
    push_runs(*local, DATASET, token=None)
    manifest = parse_manifest(hub.repo("dataset", DATASET).files[MANIFEST].data, "m")
    (part,) = manifest.parts
    return manifest, part


def test_a_part_that_does_not_hold_what_the_manifest_counts_is_one_sentence(
    hub: HubStandIn, local: tuple[PmbLoad, QaLoad], tmp_path: Path
) -> None:
    manifest, part = _pushed_part(hub, local)
    wrong = part.model_copy(update={"qa_runs": part.qa_runs + 1})
    _commit({MANIFEST: manifest_bytes(manifest.model_copy(update={"parts": (wrong,)}))})
    words = f"field qa_runs of {part.path} says {part.qa_runs + 1}, the part holds {part.qa_runs}"
    with pytest.raises(HubResultsError, match=words):
        open_dataset(HubLocation(DATASET), cache_dir=tmp_path / "a")
    with pytest.raises(HubResultsError, match=words):
        read_dataset(HubLocation(DATASET), cache_dir=tmp_path / "b")


def test_a_part_nested_too_deeply_is_one_sentence(
    hub: HubStandIn, local: tuple[PmbLoad, QaLoad], tmp_path: Path
) -> None:
    manifest, part = _pushed_part(hub, local)
    deep = b"[" * 100_000 + b"]" * 100_000
    files = part.files | {"qa-load.json": hashlib.sha256(deep).hexdigest()}
    changed = manifest.model_copy(update={"parts": (part.model_copy(update={"files": files}),)})
    _commit({f"{part.path}/qa-load.json": deep, MANIFEST: manifest_bytes(changed)})
    with pytest.raises(HubResultsError, match=f"{part.path} is not a snapshot this memeval reads") as info:
        open_dataset(HubLocation(DATASET), cache_dir=tmp_path / "a")
    assert "\n" not in str(info.value)


def test_a_stored_home_page_gone_from_the_dataset_is_not_used(
    hub: HubStandIn, local: tuple[PmbLoad, QaLoad], tmp_path: Path
) -> None:
    push_runs(*local, DATASET, token=None)
    api = HfApi(endpoint=hub_endpoint(), token=None)
    api.create_commit(DATASET, [CommitOperationDelete(FRONT_FILE)], commit_message="rm", repo_type="dataset")
    assert open_front(HubLocation(DATASET), cache_dir=tmp_path / "a") is None


def test_a_home_page_that_cannot_be_stored_commits_nothing(
    hub: HubStandIn, local: tuple[PmbLoad, QaLoad], monkeypatch: pytest.MonkeyPatch
) -> None:
    import memeval_core.hub_results as hub_results

    def out_of_bounds(*args: Any) -> Any:
        return front.BoardRow.model_validate({"score": 2.0})  # raises, as a value outside the bounds would

    monkeypatch.setattr(hub_results, "front_page", out_of_bounds)
    with pytest.raises(HubResultsError, match="the home page of these runs cannot be stored \\(field rank: Field"):
        push_runs(*local, DATASET, token=None)
    assert not hub.commits  # nothing landed
