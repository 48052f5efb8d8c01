"""Storing new runs: validation first, sanitised names, no duplicates, no overwrites, atomic writes."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from memeval_core.cli import file_validator, main
from memeval_core.errors import IngestError
from memeval_core.pmb.ingest import load_pmb
from memeval_core.store import add_files, sanitize_name, write_new
from tests._data import PMB_DIR, require


def accept(name: str, data: bytes) -> None:
    json.loads(data)


@pytest.mark.parametrize(
    ("given", "safe"),
    [
        ("../../etc/passwd", "passwd.json"),
        ("..\\..\\win.json", "win.json"),
        (".hidden.json", "hidden.json"),
        ("run <script>.json", "run-script.json"),
        ("a/b/c.JSONL", "c.jsonl"),
        ("...", "run.json"),
        ("x" * 300 + ".csv", "x" * 90 + ".csv"),
        ("report.exe", "report.exe.json"),
    ],
)
def test_sanitize_name(given: str, safe: str) -> None:
    assert sanitize_name(given) == safe


def test_stores_validated_file_and_skips_duplicates(tmp_path: Path) -> None:
    first = add_files(tmp_path, [("run.json", b'{"a": 1}')], accept)
    assert [r.status for r in first] == ["stored"]
    assert first[0].path == tmp_path / "uploads" / "run.json"
    again = add_files(tmp_path, [("other-name.json", b'{"a": 1}')], accept)
    assert [r.status for r in again] == ["duplicate"] and again[0].path == first[0].path
    assert sorted(p.name for p in (tmp_path / "uploads").iterdir()) == ["run.json"]


def test_same_name_different_content_is_kept_apart(tmp_path: Path) -> None:
    add_files(tmp_path, [("run.json", b'{"a": 1}')], accept)
    r = add_files(tmp_path, [("run.json", b'{"a": 2}')], accept)
    assert r[0].path == tmp_path / "uploads" / "run-2.json"
    assert (tmp_path / "uploads" / "run.json").read_bytes() == b'{"a": 1}'


def test_rejected_file_is_not_written(tmp_path: Path) -> None:
    def reject(name: str, data: bytes) -> None:
        raise IngestError(name, "$.cases[0]", "bad", "fix it")

    r = add_files(tmp_path, [("x.json", b"{}")], reject)
    assert r[0].status == "rejected" and str(r[0].error) == "x.json: $.cases[0]: bad (fix it)"
    assert not list((tmp_path / "uploads").iterdir()), "nothing written"


def test_size_limit(tmp_path: Path) -> None:
    r = add_files(tmp_path, [("big.json", b"0" * 2048)], accept, max_bytes=1024)
    assert r[0].status == "rejected"
    assert "file is 2,048 bytes, above the 1,024-byte limit" in r[0].error.message  # type: ignore[union-attr]


def test_no_temporary_files_left(tmp_path: Path) -> None:
    write_new(tmp_path, "a.json", b"{}")
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_concurrent_writers_never_overwrite(tmp_path: Path) -> None:
    payloads = [json.dumps({"i": i}).encode() for i in range(40)]
    threads = [threading.Thread(target=write_new, args=(tmp_path, "same.json", p)) for p in payloads]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stored = sorted(p.read_bytes() for p in tmp_path.iterdir())
    assert stored == sorted(payloads)


def test_pmb_validator_and_cli_add(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pmb = require(PMB_DIR)
    results = tmp_path / "results"
    (results / "fixtures").mkdir(parents=True)
    for f in (pmb / "fixtures").iterdir():
        (results / "fixtures" / f.name).write_bytes(f.read_bytes())
    good = pmb / "test-results/baseline/retrieval-report-mem0.json"
    bad = tmp_path / "retrieval-report-bad.json"
    data = json.loads(good.read_text())
    data["cases"][3]["caseId"] = "nope"
    bad.write_text(json.dumps(data))
    code = main(["add", "--results", str(results), str(good), str(bad)])
    out, err = capsys.readouterr()
    assert code == 1
    assert f"stored retrieval-report-mem0.json as {results}/uploads/retrieval-report-mem0.json" in out
    assert "rejected retrieval-report-bad.json: $.cases[3].caseId: 'nope' is not a case" in err
    assert [r.identity.provider for r in load_pmb(results).runs] == ["mem0"]
    assert main(["add", "--results", str(results), str(good)]) == 0
    assert "skipped retrieval-report-mem0.json: identical to" in capsys.readouterr().out


def test_validator_without_fixture(tmp_path: Path) -> None:
    validate = file_validator(tmp_path, None)
    report = (require(PMB_DIR) / "test-results/baseline/retrieval-report-mem0.json").read_bytes()
    with pytest.raises(IngestError, match="no PMB fixture"):
        validate("x.json", report)
    with pytest.raises(IngestError, match="not a result file memeval can read"):
        validate("x.json", b"{}")


def test_same_bytes_added_concurrently_are_stored_once(tmp_path: Path) -> None:
    data = b'{"run": "same"}'
    outcomes: list[str] = []

    def add() -> None:
        outcomes.extend(r.status for r in add_files(tmp_path, [("r.json", data)], accept))

    threads = [threading.Thread(target=add) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["duplicate"] * 7 + ["stored"]
    assert [p.name for p in (tmp_path / "uploads").iterdir()] == ["r.json"]


def test_upload_quota(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMEVAL_UPLOAD_QUOTA_MB", "0.001")  # 1,048 bytes
    a, b = (json.dumps({"x": c * 600}).encode() for c in "ab")
    out = add_files(tmp_path, [("a.json", a), ("b.json", b)], accept)
    assert [r.status for r in out] == ["stored", "rejected"]
    assert "MEMEVAL_UPLOAD_QUOTA_MB" in str(out[1].error)
    assert [p.name for p in (tmp_path / "uploads").iterdir()] == ["a.json"]
