"""Safe to host (issue 20's high findings): no push with the server's token for anyone but a local viewer,
no file read outside the results root, and one hostile upload cannot break the QA pages for everyone."""

from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from memeval_core import settings, tree
from memeval_core.qa.ingest import load_qa
from memeval_core.results import load_qa_results
from memeval_core.store import add_files
from memeval_core.upload import validate_any

ROOT = Path(__file__).resolve().parents[1]
SPACE = "standin-user/memeval-board"
ADMIN = "admin-token-0123456789"


@pytest.fixture
def results(pmb_results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "results"
    shutil.copytree(pmb_results / "fixtures", root / "fixtures")
    shutil.copy(pmb_results / "test-results/baseline/retrieval-report-tenure.json", root / "tenure.json")
    monkeypatch.setenv("MEMEVAL_RESULTS", str(root))
    monkeypatch.setenv("MEMEVAL_EXPORT_DIR", str(tmp_path / "hf_export"))
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MEMEVAL_READ_ONLY", raising=False)
    monkeypatch.delenv("MEMEVAL_ADMIN_TOKEN", raising=False)
    return root


def page(name: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / name), default_timeout=120)
    at.session_state["memeval-navigated"] = True
    return at


def shown(at: AppTest) -> str:
    kinds = ("markdown", "error", "success", "info", "caption", "code", "text", "warning")
    return "\n".join(str(getattr(e, "value", "")) for kind in kinds for e in at.get(kind))


def nav_titles(at: AppTest) -> list[str]:
    """Titles of the pages app.py registered with ``st.navigation`` on its last run."""
    return [str(info["page_name"]) for info in at._registered_pages.values()]


# --- finding 1: an anonymous visitor cannot push with the server's token ----------------------------


def test_read_only_app_hides_and_refuses_the_write_pages(
    results: Path, hub: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMEVAL_READ_ONLY", "1")  # HF_TOKEN is the server's valid token (the hub fixture)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    titles = nav_titles(at)
    assert "Leaderboard" in titles and "Publish" not in titles and "Upload" not in titles
    for name, what in (("publish.py", "publishing"), ("upload.py", "uploading runs")):
        at = page(name)
        at.run()
        assert not at.exception
        assert f"This app is read-only: {what} is not available here." in shown(at)
        assert not [b for b in at.button if b.label == "Push"] and not at.get("file_uploader")
    assert hub.commits == [] and not any(r.authorized for r in hub.requests)


def test_the_admin_token_unlocks_the_write_pages_for_that_session(
    results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMEVAL_READ_ONLY", "1")
    monkeypatch.setenv("MEMEVAL_ADMIN_TOKEN", ADMIN)
    # A fresh AppTest per token: AppTest reruns only the page script, not app.py's navigation.
    for typed, unlocked in ((None, False), ("wrong-token-000000000", False), (ADMIN[:-1], False), (ADMIN, True)):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        if typed is not None:
            at.session_state["memeval-admin-token"] = typed
        at.run()
        assert at.text_input(key="memeval-admin-token").label == "Admin token"
        assert ({"Publish", "Upload"} <= set(nav_titles(at))) is unlocked, typed


def test_a_remote_viewer_must_bring_their_own_token(results: Path, hub: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import pages.ui

    monkeypatch.setattr(pages.ui, "viewer_is_local", lambda: False)
    at = page("publish.py")
    at.run()
    at.text_input(key="space").set_value(SPACE)
    at.checkbox(key="dry_run").set_value(False)
    at.run()
    next(b for b in at.button if b.label == "Push").click().run()
    assert "Type a Hugging Face token with write access" in at.error[0].value
    assert hub.commits == [] and not any(r.authorized for r in hub.requests)
    assert str(results) not in shown(at), "a remote viewer sees no absolute server path"


def test_an_exported_space_is_read_only_by_its_own_code(results: Path, tmp_path: Path) -> None:
    from memeval_core.export.writer import export

    out = tmp_path / "space"
    export(results, out)
    assert (out / settings.SPACE_MARKER).is_file()
    assert settings.read_only({}, out)


# --- finding 2: no file outside the results root is read ------------------------------------------


def mapping(file: str) -> dict[str, Any]:
    return {
        "memeval_mapping": 1,
        "file": file,
        "benchmark": "locomo",
        "system": "probe",
        "fields": {"question_id": "password", "answer": "password"},
        "judges": [{"name": "j", "field": "ok"}],
    }


@pytest.mark.parametrize("target", ["../secret.csv", "../missing.csv", "{outside}/secret.csv", "{outside}/missing.csv"])
def test_a_mapping_cannot_read_outside_the_root(tmp_path: Path, target: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.csv").write_text("password,ok\nhunter2,1\n")
    root = tmp_path / "root"
    root.mkdir()
    (root / "map.json").write_text(json.dumps(mapping(target.format(outside=outside))))
    load = load_qa(root)
    assert load.runs == ()
    (err,) = load.errors
    assert (err.file, err.path) == ("map.json", "$.file")
    assert "hunter2" not in str(err) and str(outside) not in err.message
    if not target.startswith("{"):
        assert err.message == tree.OUTSIDE, "the same sentence whether or not the file exists"


def test_a_link_in_the_root_to_a_file_outside_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "secret.csv").write_text("password,ok\nhunter2,1\n")
    root = tmp_path / "root"
    root.mkdir()
    (root / "rows.csv").symlink_to(tmp_path / "secret.csv")
    (root / "map.json").write_text(json.dumps(mapping("rows.csv")))
    load = load_qa(root)
    assert load.runs == ()
    assert {e.file for e in load.errors} == {"rows.csv", "map.json"}
    assert all("hunter2" not in str(e) for e in load.errors)


def test_add_refuses_a_mapping_that_points_outside(results: Path, tmp_path: Path) -> None:
    (tmp_path / "x.csv").write_text("password,ok\nhunter2,1\n")
    data = json.dumps(mapping("../../../../../../../../" + str(tmp_path / "x.csv").lstrip("/"))).encode()
    (out,) = add_files(results, [("map.json", data)], validate_any(None))
    assert out.status == "rejected" and out.error is not None
    assert "hunter2" not in str(out.error)
    assert not list((results / "uploads").iterdir()), "nothing written"


def test_uploads_through_a_link_are_refused(results: Path, tmp_path: Path, pmb_results: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (results / "uploads").symlink_to(elsewhere, target_is_directory=True)
    good = (pmb_results / "test-results/baseline/retrieval-report-mem0.json").read_bytes()
    (out,) = add_files(results, [("mem0.json", good)], lambda name, data: None)
    assert out.status == "rejected" and "link" in str(out.error)
    assert list(elsewhere.iterdir()) == []


# --- finding 3: one deep upload cannot break the QA pages -----------------------------------------


def qa_run(system: str, extra: Any = None) -> bytes:
    questions = [
        {"benchmark": "longmemeval-s", "question_id": f"q{i}", "answer": "a", "gold_answer": "a",
         "verdicts": [{"judge": "j", "score": i % 2, "scale": "binary"}]}
        for i in range(3)
    ]  # fmt: skip
    if extra is not None:
        questions[0]["extra_field"] = extra
    run = {"benchmark": "longmemeval-s", "system": system}
    return json.dumps({"schema_version": 1, "run": run, "questions": questions}).encode()


def nested(depth: int) -> bytes:
    """JSON text nested ``depth`` objects deep (written out: ``json.dumps`` itself would recurse that deep, and
    fail under a test runner that already uses part of the stack)."""
    return b'{"x":' * depth + b"1" + b"}" * depth


def test_a_deeply_nested_upload_is_refused_and_the_rest_still_loads(results: Path, tmp_path: Path) -> None:
    deep = qa_run("deep", "NESTED").replace(b'"NESTED"', nested(950))
    (out,) = add_files(results, [("deep.json", deep)], validate_any(None))
    assert out.status == "rejected" and "nested 953 levels deep" in str(out.error)
    (results / "deep.json").write_bytes(deep)  # as if it came in some other way
    (results / "ok.json").write_bytes(qa_run("ok"))
    for _ in range(2):  # cold, then from the cache
        load = load_qa_results(results)
        assert [r.meta.system for r in load.runs] == ["ok"]
        assert [e.file for e in load.errors] == ["deep.json"]
    assert not list((tmp_path / "cache").glob(".tmp-*"))


def test_a_failing_cache_write_keeps_the_result_and_leaves_nothing(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (results / "ok.json").write_bytes(qa_run("ok"))
    old = (results / "ok.json").stat().st_mtime - 10
    os.utime(results / "ok.json", (old, old))

    def explode(*args: object, **kwargs: object) -> None:
        raise RecursionError("maximum recursion depth exceeded while pickling an object")

    monkeypatch.setattr(pickle, "dump", explode)
    load = load_qa_results(results)
    assert [r.meta.system for r in load.runs] == ["ok"]
    cache = tmp_path / "cache"
    assert not list(cache.glob(".tmp-*")) and not list(cache.glob("qa-*"))
    assert settings.cache_dir() == cache


@pytest.mark.parametrize(
    ("ip", "local"),
    [("::ffff:127.0.0.1", True), ("127.0.0.5", True), ("::1", True), ("10.0.0.1", False), ("::ffff:10.1.1.1", False)],
)
def test_a_dual_stack_loopback_address_is_local(ip: str, local: bool) -> None:
    import pages.ui

    assert pages.ui._is_loopback(ip) is local
