"""Every page registered in app.py runs without an exception, over the public PMB data and over an empty folder.

The page list is read from app.py's ``PAGES`` literal, so pages added later are covered automatically.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
SHARED_MODULES = {"ui.py", "__init__.py"}


def registered_pages() -> list[str]:
    """The page paths of app.py's ``PAGES`` tuple (first item of each entry)."""
    tree = ast.parse(APP.read_text(encoding="utf-8"), filename=str(APP))
    for node in tree.body:
        names: list[ast.expr] = []
        if isinstance(node, ast.AnnAssign):
            names = [node.target]
        elif isinstance(node, ast.Assign):
            names = node.targets
        node_value = getattr(node, "value", None)
        if node_value is not None and any(isinstance(t, ast.Name) and t.id == "PAGES" for t in names):
            return [str(entry[0]) for entry in ast.literal_eval(node_value)]
    raise AssertionError(f"{APP} has no literal PAGES = (...) assignment")


PAGES = registered_pages()


def test_pages_are_registered() -> None:
    assert PAGES[0] == "pages/home.py"
    assert len(set(PAGES)) == len(PAGES)
    for page in PAGES:
        assert (ROOT / page).is_file(), page
    # A page file that is not registered in app.py would never be reachable.
    files = {f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py") if p.name not in SHARED_MODULES}
    assert files == set(PAGES)


def run_page(page: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    assert not at.exception, [e.message for e in at.exception]
    at.switch_page(page).run()
    return at


@pytest.mark.parametrize("page", PAGES)
def test_page_runs_over_pmb_data(page: str, pmb_results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMEVAL_RESULTS", str(pmb_results))
    monkeypatch.delenv("MEMEVAL_FIXTURES", raising=False)
    at = run_page(page)
    assert not at.exception, [e.message for e in at.exception]
    assert f"Results: {pmb_results}" in [c.value for c in at.sidebar.caption]


@pytest.mark.parametrize("page", PAGES)
def test_page_runs_without_results(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMEVAL_RESULTS", str(tmp_path))
    monkeypatch.delenv("MEMEVAL_FIXTURES", raising=False)
    monkeypatch.setenv("MEMEVAL_GITHUB_API", "http://127.0.0.1:9")
    at = run_page(page)
    assert not at.exception, [e.message for e in at.exception]
    assert f"Results: {tmp_path}" in [c.value for c in at.sidebar.caption]
