"""``export --results hf://datasets/OWNER/NAME[@REVISION]`` against the local Hub stand-in: the same rows, details
and snapshot as an export of the folder that was pushed, a pinned commit, provenance in the cards, no local path
or token in any file, and one sentence (``--out`` untouched) for every dataset that cannot be read."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from huggingface_hub import HfApi

from memeval_core import cli
from memeval_core.export.from_hub import dataset_source
from memeval_core.export.models import Leaderboard, loads
from memeval_core.export.writer import ExportError, ExportResult, export, write_export
from memeval_core.hub_location import HubLocation
from memeval_core.hub_results import MANIFEST, parse_manifest, push_runs
from memeval_core.pmb.ingest import PmbLoad
from memeval_core.qa.ingest import QaLoad
from tests.hub_standin import HUB_TOKEN, HubStandIn, StoredFile
from tests.test_export_writer import EPOCH, fake_project, tree_digest

# huggingface_hub's LFS upload passes raw bytes as `data=`, which httpx2 deprecates; not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")

ROOT = Path(__file__).resolve().parents[1]
DATASET = "standin-user/memeval-results"
URL = f"hf://datasets/{DATASET}"


@pytest.fixture(scope="module")
def from_folder(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> ExportResult:
    """The export of the shared data folder: what each test pushes to the dataset, exported the usual way."""
    if not (shared_data / "precisionmembench").is_dir():
        pytest.skip(f"{shared_data} lacks the public PMB data")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOURCE_DATE_EPOCH", EPOCH)
        return export(shared_data, tmp_path_factory.mktemp("folder") / "hf_export")


@pytest.fixture
def pushed(hub: HubStandIn, shared_loads: tuple[PmbLoad, QaLoad], shared_data: Path) -> str:
    """The shared data pushed to the dataset as one part; the commit."""
    commit = push_runs(*shared_loads, DATASET, token=None, results=shared_data).commit
    assert commit is not None
    return commit


def export_dataset(location: HubLocation, out: Path, monkeypatch: pytest.MonkeyPatch) -> ExportResult:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    return write_export(dataset_source(location), out)


def details(out: Path) -> dict[str, pa.Table]:
    return {p.name: pq.read_table(p) for p in sorted((out / "data" / "details").glob("*.parquet"))}


def hf_cache() -> Path:
    return Path(os.environ["HF_HOME"]) / "hub"


def test_the_dataset_exports_the_rows_details_and_snapshot_of_the_folder_pushed(
    pushed: str, from_folder: ExportResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    got = export_dataset(HubLocation(DATASET), tmp_path / "hf_export", monkeypatch)
    want = from_folder
    assert [t.model_dump() for t in got.board.tables] == [t.model_dump() for t in want.board.tables]
    assert got.board.tables and sum(len(t.rows) for t in got.board.tables) == 24 + 28
    mine, theirs = details(got.out), details(want.out)
    assert list(mine) == list(theirs) and len(mine) >= 6
    for name, table in mine.items():
        assert table.equals(theirs[name]), name
    a, b = tree_digest(got.out), tree_digest(want.out)
    # What legitimately differs is where the runs came from: leaderboard.json's `inputs` are the dataset's part
    # files (the files the runs were pushed from are not in the dataset), so the fingerprint differs; the cards
    # name the dataset and commit, list those inputs' licences and reproduce from the commit; `text_withheld`
    # may name more licences (a merged QA run's files are known only by one combined hash, so `unknown`).
    assert sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k)) == [
        "README.md",
        "data/details/README.md",
        "leaderboard.json",
    ]
    assert got.board.text_withheld.keys() == want.board.text_withheld.keys()
    assert got.fingerprint != want.fingerprint


def test_the_inputs_are_the_part_files_and_the_cards_name_the_commit(
    pushed: str, hub: HubStandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    got = export_dataset(HubLocation(DATASET), tmp_path / "hf_export", monkeypatch)
    manifest = parse_manifest(hub.repo("dataset", DATASET).files[MANIFEST].data, MANIFEST)
    (part,) = manifest.parts
    listed = {f"{part.path}/{name}": sha for name, sha in part.files.items()}
    assert {f.path for f in got.board.inputs} == set(listed) - {f"{part.path}/pmb-runs.parquet"}  # not read
    assert all(listed[f.path] == f.sha256 for f in got.board.inputs)
    roles = {f.path.rsplit("/", 1)[1]: (f.role, f.license) for f in got.board.inputs}
    assert roles["pmb-fixture.json"] == ("pmb-fixture", "MIT") and roles["pmb-cases.parquet"] == ("pmb-report", "MIT")
    assert roles["qa-runs.jsonl"] == ("qa-run", "unknown")  # the public QA runs come under several licences
    assert loads((got.out / "leaderboard.json").read_bytes()) == got.board
    readme = (got.out / "README.md").read_text(encoding="utf-8")
    assert f"- Results: read from the dataset `{URL}` at commit `{pushed}`" in readme
    assert f"export --results {URL}@{pushed} --out hf_export/" in readme
    assert f"at commit `{pushed}`" in (got.out / "data" / "details" / "README.md").read_text(encoding="utf-8")
    for p in (p for p in got.out.rglob("*") if p.is_file()):
        data = p.read_bytes()
        assert HUB_TOKEN.encode() not in data and str(hf_cache()).encode() not in data, p
        assert str(hf_cache().resolve()).encode() not in data, p


def test_the_hugging_face_cache_path_is_a_leak_needle(pushed: str, tmp_path: Path) -> None:
    source = dataset_source(HubLocation(DATASET))
    leaky = fake_project(tmp_path, f"CACHE = {str(hf_cache().resolve())!r}\n")
    with pytest.raises(ExportError, match=r"^app\.py: contains the absolute path of the Hugging Face cache"):
        write_export(source, tmp_path / "out", project_root=leaky)
    with pytest.raises(ExportError, match="must lie outside the Hugging Face cache"):
        write_export(source, hf_cache() / "out")
    assert not (tmp_path / "out").exists()


def test_a_pinned_commit_exports_what_it_held_and_again_without_a_request(
    hub: HubStandIn,
    shared_loads: tuple[PmbLoad, QaLoad],
    shared_data: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pmb, qa = shared_loads
    first = (dataclasses.replace(pmb, runs=pmb.runs[::2]), dataclasses.replace(qa, runs=qa.runs[::2]))
    old = push_runs(*first, DATASET, token=None, results=shared_data).commit
    head = push_runs(pmb, qa, DATASET, token=None, results=shared_data).commit
    assert old is not None and head is not None and old != head
    pinned = export_dataset(HubLocation(DATASET, old), tmp_path / "old", monkeypatch)
    ids = {r.run_id for t in pinned.board.tables for r in t.rows}
    assert ids == {r.identity.run_id for r in first[0].runs} | {r.run_id for r in first[1].runs}
    assert f"commit `{old}`" in (pinned.out / "README.md").read_text(encoding="utf-8")
    start = len(hub.requests)
    again = export_dataset(HubLocation(DATASET, old), tmp_path / "again", monkeypatch)
    assert hub.requests[start:] == []  # a commit id needs no resolving, and every file is in the cache
    assert tree_digest(again.out) == tree_digest(pinned.out)
    latest = export_dataset(HubLocation(DATASET), tmp_path / "head", monkeypatch)
    assert f"commit `{head}`" in (latest.out / "README.md").read_text(encoding="utf-8")
    assert len({f.path.split("/")[1] for f in latest.board.inputs}) == 2  # both parts
    assert {r.run_id for t in latest.board.tables for r in t.rows} > ids


def previous_export(from_folder: ExportResult, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    out = tmp_path / "hf_export"
    shutil.copytree(from_folder.out, out)
    return out, tree_digest(out)


def break_dataset(hub: HubStandIn, how: str, commit: str) -> str:
    """Make the dataset unreadable in one way; the location to export."""
    if how == "revision gone":  # a force-push: the head moves on, the pinned commit no longer exists
        HfApi(endpoint=hub.url, token=HUB_TOKEN).upload_file(
            path_or_fileobj=b"# results\n", path_in_repo="README.md", repo_id=DATASET, repo_type="dataset"
        )
        hub.forget("dataset", DATASET, commit)
        return f"{URL}@{commit}"
    if how == "no manifest":
        hub.add_repo("dataset", "standin-user/empty")
        return "hf://datasets/standin-user/empty"
    if how == "missing":
        return "hf://datasets/standin-user/missing"
    if how == "tampered":
        repo = hub.repo("dataset", DATASET)
        runs = next(p for p in repo.files if p.endswith("/pmb-runs.json"))
        repo.files[runs] = StoredFile(repo.files[runs].data.replace(b"tenure", b"tenur3"), False)
    elif how in ("401", "403"):
        hub.fail_status, hub.fail_match = int(how), "memeval-results"
    else:
        hub.drop_midway = True  # the headers arrive, the body is cut off
    return URL


@pytest.mark.parametrize(
    ("how", "words"),
    [
        ("revision gone", "The revision asked for was not found in dataset standin-user/memeval-results"),
        ("missing", "The dataset standin-user/missing was not found (404"),
        ("no manifest", "hf://datasets/standin-user/empty holds no memeval-manifest.json"),
        ("401", "The Hugging Face Hub rejected the token (401 Unauthorized)"),
        ("403", "The token may not read dataset standin-user/memeval-results (403 Forbidden)"),
        ("cut off", "Network error: could not talk to the Hugging Face Hub at"),
        ("tampered", "differs from the SHA-256 the manifest lists for it"),
    ],
)
def test_an_unreadable_dataset_fails_in_one_sentence_and_leaves_out_unchanged(
    how: str,
    words: str,
    pushed: str,
    hub: HubStandIn,
    from_folder: ExportResult,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out, before = previous_export(from_folder, tmp_path)
    location = break_dataset(hub, how, pushed)
    assert cli.main(["export", "--results", location, "--out", str(out)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"error: export failed, {out} is unchanged: ") and words in captured.err
    assert captured.err.count("\n") == 1 and HUB_TOKEN not in captured.err and "Traceback" not in captured.err
    assert tree_digest(out) == before
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder left


def test_the_command_line_exports_a_dataset(
    pushed: str,
    hub: HubStandIn,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = tmp_path / "hf_export"
    monkeypatch.setenv("MEMEVAL_RESULTS", URL)  # the setting works as --results does
    assert cli.main(["export", "--out", str(out), "-v"]) == 0
    printed = capsys.readouterr()
    board = loads((out / "leaderboard.json").read_bytes())
    assert printed.err == ""
    assert f"fingerprint {board.fingerprint}" in printed.out and "  leaderboard.json\n" in printed.out
    assert cli.main(["export", "--results", URL, "--fixtures", str(tmp_path), "--out", str(tmp_path / "x")]) == 1
    assert "--fixtures applies to a results folder" in capsys.readouterr().err
    assert cli.main(["export", "--results", "hf://me:hf_secret@datasets/o/n", "--out", str(tmp_path / "x")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "never from the URL" in err and "hf_secret" not in err
    assert not (tmp_path / "x").exists()


def test_a_fresh_interpreter_exports_into_hf_home_only(pushed: str, hub: HubStandIn, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        "HF_HUB_DISABLE_XET": "1",
        "SOURCE_DATE_EPOCH": EPOCH,
        "PYTHONPATH": str(ROOT),
    }
    env.pop("XDG_CACHE_HOME", None)
    cmd = [sys.executable, "-m", "memeval_core", "export", "--results", f"{URL}@{pushed}", "--out", "hf_export"]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr == "" and proc.stdout.startswith("exported ")
    board = Leaderboard.model_validate(json.loads((tmp_path / "hf_export" / "leaderboard.json").read_bytes()))
    assert f"fingerprint {board.fingerprint}\n" in proc.stdout
    assert list(home.iterdir()) == []  # downloads go to HF_HOME, nothing else is written
    cached = [p for p in hf_cache().rglob("*") if p.is_file() and pushed in p.as_posix()]
    assert {p.name for p in cached} >= {MANIFEST, "pmb-cases.parquet", "qa-questions.parquet"}
    digests = {hashlib.sha256(p.read_bytes()).hexdigest() for p in cached}
    assert {f.sha256 for f in board.inputs} <= digests
