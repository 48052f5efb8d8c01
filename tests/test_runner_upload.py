"""The Upload page accepts a report made by ``run pmb`` and stores it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memeval_core.wrappers.sqlite_fts import SqliteFts
from tests._runner import run, serving
from tests.test_app_upload import page, texts


def test_upload_page_accepts_a_runner_report(
    pmb_results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "results"
    shutil.copytree(pmb_results / "fixtures", root / "fixtures")
    monkeypatch.setenv("MEMEVAL_RESULTS", str(root))
    monkeypatch.delenv("MEMEVAL_READ_ONLY", raising=False)
    with serving(SqliteFts(tmp_path / "fts.db")) as srv:
        (path,) = run(srv.url, tmp_path / "out", ("single",), provider="sqlite-fts")
    at = page()
    at.run()
    at.file_uploader[0].set_value([(path.name, path.read_bytes(), "application/json")])
    at.run()
    assert f"would be stored as `{path.name}`" in texts(at)
    (table,) = [df.value for df in at.dataframe]
    assert table.iloc[0]["passed"] == 43
    (save,) = [b for b in at.button if b.label.startswith("Save")]
    save.click().run()
    assert (root / "uploads" / path.name).read_bytes() == path.read_bytes()
