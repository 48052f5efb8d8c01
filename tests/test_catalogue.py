"""The catalogue: its model, its agreement with ../shared/data and the PROVENANCE.md files, the build script,
matching runs to their upstream files, and the run page naming them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from memeval_core import catalogue as cat_mod
from memeval_core.catalogue import (
    Catalogue,
    CatalogueEntry,
    CatalogueError,
    build,
    by_source,
    default_catalogue,
    load_catalogue,
    parse_provenance,
    upstream_of,
    upstream_record,
    write_catalogue,
)
from memeval_core.explore.run_view import find, pmb_view, qa_view
from memeval_core.pmb.ingest import load_pmb
from memeval_core.pmb.runs_table import runs_table
from memeval_core.qa.ingest import LoadedRun, load_qa
from pages import ui
from tests.apptest import run_page

PINS = {
    "tenurehq/precisionMemBench": ("18c7955357b33098a64d601bc8e4624c41743972", "MIT"),
    "snap-research/LoCoMo": ("3eb6f2c585f5e1699204e3c3bdf7adc5c28cb376", "CC-BY-NC-4.0"),
    "memodb-io/memobase": ("358c16bbc6d687937d79bc2f984a11c3be8da901", "Apache-2.0"),
    "FlowElement-ai/mflow-benchmarks": ("b67fecee5ad9f067742da2e9c4f4c642cd8cd247", "MIT"),
    "planetaryescape/cognitive-memory-benchmarks": ("4ffeae9349bf630070ab3ff9d253abc4c1974207", "MIT"),
    "dial481/locomo-audit": ("9493fb4b4af4256ed17a18e8fd0b3cfdeec29539", "CC-BY-NC-4.0"),
}
"""Repository -> (commit, licence), as each folder's PROVENANCE.md states them."""


def entry_at(target: str) -> CatalogueEntry:
    return next(e for e in default_catalogue().entries if e.target == target)


# --- the shipped catalogue ------------------------------------------------------------------------


def test_the_shipped_catalogue() -> None:
    cat = default_catalogue()
    assert len(cat.entries) == 84 and sum(e.size for e in cat.entries) == 46_641_439
    assert {e.repository: (e.commit, e.licence) for e in cat.entries} == PINS
    kinds = {k: sum(e.kind == k for e in cat.entries) for k in ("pmb", "qa", "dataset")}
    assert kinds == {"pmb": 27, "qa": 55, "dataset": 2}
    assert [e.target for e in cat.entries] == sorted(e.target for e in cat.entries)
    locomo = entry_at("locomo/data/locomo10.json")
    assert (locomo.path, locomo.importer, locomo.size) == ("data/locomo10.json", "locomo-dataset", 2_805_274)
    memobase = entry_at("memobase/docs/experiments/locomo-benchmark/fixture/memobase/memobase_eval_0503_3000.json")
    assert memobase.path == "docs/experiments/locomo-benchmark/fixture/memobase/memobase_eval_0503_3000.json"
    assert (memobase.system, memobase.variant, memobase.importer) == (
        "memobase",
        "memobase_eval_0503_3000",
        "mem0-eval",
    )
    assert entry_at("locomo-audit/errors.json").importer == "disputed-answers"
    zep = [e for e in cat.entries if e.importer == "zep"]
    assert [e.path.rsplit("/", 1)[1] for e in zep] == ["zep_locomo_grades.json", "zep_locomo_responses.json"]


def test_every_entry_is_the_shared_file(shared_data: Path) -> None:
    for e in default_catalogue().entries:
        data = (shared_data / e.target).read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest()) == (e.size, e.sha256), e.target
        folder = e.target.split("/")[0]
        assert e.target == f"{folder}/{e.path}", "the copy keeps each repository's relative paths"


def test_the_build_script_reproduces_the_catalogue(shared_data: Path, tmp_path: Path) -> None:
    built, left_out = build(shared_data)
    assert built == default_catalogue()
    assert "mflow-benchmarks/benchmarks/locomo-mem0/results/FINAL_SUMMARY.json" in left_out
    assert left_out["locomo-audit/ap-baseline/v1/ap_eval_results.json"].startswith("answers without judge verdicts")
    assert "precisionmembench/providers.config.json" in left_out
    out = tmp_path / "catalogue.json"
    write_catalogue(built, out)
    assert out.read_text(encoding="utf-8") == cat_mod.CATALOGUE_FILE.read_text(encoding="utf-8")
    assert cat_mod.main(["build", "--from", str(shared_data), "--out", str(out), "--check"]) == 0


def test_provenance_files(shared_data: Path) -> None:
    for folder in ("precisionmembench", "locomo", "memobase", "mflow-benchmarks", "cognitive-memory-benchmarks"):
        prov = parse_provenance(shared_data / folder / "PROVENANCE.md")
        assert PINS[prov.repository] == (prov.commit, prov.licence)
    locomo = parse_provenance(shared_data / "locomo" / "PROVENANCE.md")
    assert not locomo.keeps_paths and locomo.repo_path("data/locomo10.json") == "data/locomo10.json"
    assert locomo.originals["locomo10.json"][1:] == (2_805_274, "d95b872480b413d935821fdc3c84f8a8f5f29e73")
    assert parse_provenance(shared_data / "locomo-audit" / "PROVENANCE.md").keeps_paths


PROVENANCE = """# x
- Repository: https://github.com/acme/evals (snapshot)
- Commit: `{commit}` (2026-01-01)
- License: `LICENSE` = **MIT**
- Original paths:
  - `deep/in/repo/run.json` ({size} B) — the run
"""


def test_provenance_maps_paths_and_checks_what_it_states(tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    (copy / "acme").mkdir(parents=True)
    (copy / "acme" / "run.json").write_text('{"x": 1}')
    prov = copy / "acme" / "PROVENANCE.md"
    prov.write_text(PROVENANCE.format(commit="a" * 40, size=8))
    parsed = parse_provenance(prov)
    assert parsed.repo_path("run.json") == "deep/in/repo/run.json"
    with pytest.raises(CatalogueError, match=r"names no original path for other\.json"):
        parsed.repo_path("other.json")
    entry = cat_mod._entry(copy, "acme/run.json", cat_mod.Role("qa", "locomo", "s", None, "mem0-eval"), parsed)
    assert (entry.repository, entry.path, entry.size, entry.licence) == (
        "acme/evals",
        "deep/in/repo/run.json",
        8,
        "MIT",
    )
    prov.write_text(PROVENANCE.format(commit="a" * 40, size=9))
    with pytest.raises(CatalogueError, match=r"PROVENANCE\.md: states 9 bytes for deep/in/repo/run\.json"):
        cat_mod._entry(copy, "acme/run.json", cat_mod.Role("qa", "locomo", "s", None, "x"), parse_provenance(prov))
    prov.write_text(PROVENANCE.format(commit="main", size=8))
    with pytest.raises(CatalogueError, match=r"PROVENANCE\.md: has no '- Commit: `<40 hex>`' line"):
        parse_provenance(prov)
    prov.write_text(PROVENANCE.format(commit="a" * 40, size=8).replace("**MIT**", "all rights reserved"))
    with pytest.raises(CatalogueError, match="naming a licence memeval knows"):
        parse_provenance(prov)


# --- the model ------------------------------------------------------------------------------------


def good() -> dict[str, Any]:
    return default_catalogue().entries[0].model_dump(mode="json", exclude_none=True)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"sha256": "abc"}, r"\$\.entries\[0\]\.sha256: String should match pattern"),
        ({"commit": "main"}, r"\$\.entries\[0\]\.commit: String should match pattern"),
        ({"target": "a/../../etc/passwd"}, r"\$\.entries\[0\]\.target: Value error, target .* must be a relative"),
        (
            {"target": "a/.hidden/x.json"},
            r"\$\.entries\[0\]\.target: Value error, target 'a/\.hidden/x\.json' has a hidden",
        ),
        ({"path": "/abs.json"}, r"\$\.entries\[0\]\.path: Value error, path '/abs.json' must be a relative"),
        ({"host": "huggingface"}, r"\$\.entries\[0\]: Value error, a huggingface entry needs repo_type"),
        ({"repo_type": "dataset"}, r"\$\.entries\[0\]: Value error, repo_type is only for huggingface entries"),
        ({"kind": "model"}, r"\$\.entries\[0\]\.kind: Input should be 'pmb', 'qa' or 'dataset'"),
        ({"extra": 1}, r"\$\.entries\[0\]\.extra: Extra inputs are not permitted"),
    ],
)
def test_a_bad_entry_is_named(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps({"version": 1, "entries": [{**good(), **change}]}))
    with pytest.raises(CatalogueError, match=rf"^{path}: {message}"):
        load_catalogue(path)


def test_duplicate_targets_and_unreadable_files(tmp_path: Path) -> None:
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps({"version": 1, "entries": [good(), good()]}))
    with pytest.raises(CatalogueError, match=r"entries\[1\]: target .* is listed twice"):
        load_catalogue(path)
    path.write_text("{")
    with pytest.raises(CatalogueError, match=rf"^{path}: not valid JSON"):
        load_catalogue(path)
    with pytest.raises(CatalogueError, match="cannot be read"):
        load_catalogue(tmp_path / "absent.json")


def test_links_of_an_entry() -> None:
    e = entry_at("locomo/data/locomo10.json")
    assert e.repository_url == "https://github.com/snap-research/LoCoMo"
    assert e.commit_url == f"https://github.com/snap-research/LoCoMo/commit/{e.commit}"
    assert e.file_url == f"https://github.com/snap-research/LoCoMo/blob/{e.commit}/data/locomo10.json"
    assert e.raw_url("http://h/") == f"http://h/snap-research/LoCoMo/{e.commit}/data/locomo10.json"
    hub = e.model_copy(update={"host": "huggingface", "repo_type": "dataset", "repository": "o/n"})
    assert hub.file_url == f"https://huggingface.co/datasets/o/n/blob/{e.commit}/data/locomo10.json"
    assert hub.source_label == f"hf:dataset/o/n@{e.commit[:7]}"
    assert len(by_source(default_catalogue().entries)) == len(PINS)


# --- runs -> upstream files ------------------------------------------------------------------------


def test_upstream_of_a_file_and_of_merged_shards() -> None:
    memobase = entry_at("memobase/docs/experiments/locomo-benchmark/fixture/memobase/memobase_eval_0503_3000.json")
    (found,) = upstream_of(memobase.target, memobase.sha256)
    assert found.entry == memobase
    assert upstream_of("elsewhere/copy.json", memobase.sha256)[0].entry == memobase, "the bytes decide"
    assert upstream_of(memobase.target, "0" * 64) == ()
    shards = [e for e in default_catalogue().entries if "/parallel/conv" in e.target]
    source = " + ".join(e.target for e in shards)
    combined = hashlib.sha256("".join(e.sha256 for e in shards).encode()).hexdigest()
    assert [u.entry for u in upstream_of(source, combined)] == shards
    assert upstream_of(source, "0" * 64) == ()
    record = upstream_record(upstream_of(source, combined))
    assert record["upstream_repository"] == "https://github.com/planetaryescape/cognitive-memory-benchmarks"
    assert record["upstream_path"] == " + ".join(e.path for e in shards) and record["licence"] == "MIT"
    assert set(upstream_record(())) == set(record) and upstream_record(())["licence"] is None


def test_every_public_run_is_catalogued(shared_data: Path) -> None:
    pmb = load_pmb(shared_data).runs
    qa = load_qa(shared_data).runs
    assert len(pmb) == 24 and len(qa) == 28
    assert all(upstream_of(r.identity.source, r.identity.sha256) for r in pmb)
    assert all(upstream_of(r.meta.source_file, r.meta.source_sha256) for r in qa)


def test_run_views_name_the_upstream_file(shared_data: Path) -> None:
    qa = load_qa(shared_data / "memobase").runs
    run = find([], qa, "memobase (memobase_eval_0503_3000)")
    assert isinstance(run, LoadedRun)
    view = qa_view(run, qa)
    rows = dict(view.provenance)
    assert rows["Upstream repository"] == "https://github.com/memodb-io/memobase"
    assert rows["Upstream commit"] == PINS["memodb-io/memobase"][0]
    assert rows["Upstream path"] == "docs/experiments/locomo-benchmark/fixture/memobase/memobase_eval_0503_3000.json"
    assert rows["Licence"].startswith("Apache-2.0 (LICENSE = Apache License 2.0")
    assert len(view.upstream) == 1
    pmb_load = load_pmb(shared_data / "precisionmembench")
    tenure = next(r for r in pmb_load.runs if r.identity.display_name == "tenure")
    view = pmb_view(tenure, runs_table(pmb_load.runs), None)
    assert dict(view.provenance)["Upstream path"] == "test-results/baseline/retrieval-report-tenure.json"


def test_a_run_not_in_the_catalogue_says_so(tmp_path: Path, shared_data: Path) -> None:
    src = shared_data / "memobase/docs/experiments/locomo-benchmark/fixture/memobase/memobase_eval_0503_3000.json"
    data = json.loads(src.read_bytes())
    data["0"] = data["0"][:-1]
    (tmp_path / "mine.json").write_text(json.dumps(data))
    (run,) = load_qa(tmp_path).runs
    view = qa_view(run, [run])
    assert dict(view.provenance)["Upstream"].startswith("not in memeval's catalogue") and view.upstream == ()


@pytest.mark.parametrize("folder", ["memobase", "precisionmembench"])
def test_the_run_page_shows_repository_commit_path_and_licence(
    shared_data: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, folder: str
) -> None:
    monkeypatch.setenv("MEMEVAL_RESULTS", str(shared_data / folder))
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MEMEVAL_FIXTURES", raising=False)
    wanted = {
        "memobase": "memobase/docs/experiments/locomo-benchmark/fixture/memobase/memobase_eval_0710_3000.json",
        "precisionmembench": "precisionmembench/test-results/baseline/retrieval-report-zep.json",
    }[folder]
    e = entry_at(wanted)
    run_id = f"{Path(e.path).stem}-{e.sha256[:10]}"
    at = run_page("pages/run.py", run=run_id)
    (line,) = [m.value for m in at.markdown if m.value.startswith("**Upstream:**")]
    assert f"[{ui.md_escape(e.repository)}]({e.repository_url})" in line
    assert f"[`{e.commit[:7]}`]({e.commit_url})" in line
    assert f"file [{ui.md_escape(e.path)}]({e.file_url})" in line
    assert line.endswith(f"licence **{ui.md_escape(e.licence)}**")
    (table,) = [d.value for d in at.dataframe if list(d.value.columns) == ["What", "Value"]]
    rows = dict(zip(table["What"], table["Value"], strict=True))
    assert rows["Run id"] == run_id and rows["SHA-256"] == e.sha256
    assert rows["Upstream commit"] == e.commit and rows["Upstream path"] == e.path
    assert rows["Licence"].startswith(e.licence)


def test_a_catalogue_can_be_written_and_read_back(tmp_path: Path) -> None:
    small = Catalogue(entries=(entry_at("locomo/data/locomo10.json"),))
    write_catalogue(small, tmp_path / "c.json")
    assert load_catalogue(tmp_path / "c.json") == small
    assert "null" not in (tmp_path / "c.json").read_text(), "unset optional fields are left out"


def test_an_unreadable_catalogue_is_one_row_without_server_paths(
    shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> Catalogue:
        raise CatalogueError("/srv/secret/memeval_core/catalogue.json: cannot be read: Permission denied")

    monkeypatch.setattr(cat_mod, "default_catalogue", broken)
    qa = load_qa(shared_data / "memobase").runs
    rows = dict(qa_view(qa[0], qa).provenance)
    assert rows["Upstream"].startswith("memeval's catalogue could not be read;") and "/srv" not in rows["Upstream"]
