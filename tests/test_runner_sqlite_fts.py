"""``sqlite-fts`` end to end: seed it, run both suites, ``verify`` finds nothing, ``add`` stores the reports and the
leaderboard ranks them with their provenance."""

from __future__ import annotations

import json
from pathlib import Path

from memeval_core import __version__
from memeval_core.cli import main
from memeval_core.explore.run_view import pmb_view
from memeval_core.pmb.ingest import load_pmb
from memeval_core.pmb.runs_table import runs_table
from memeval_core.wrappers.sqlite_fts import SqliteFts
from tests import _pmb_oracle as oracle
from tests._runner import FIXTURE_DIR, run, serving

SCORES = {  # pinned so that a change to the runner or the wrapper that moves a figure is seen
    "single": {"totalPassed": 43, "totalCases": 77, "meanPrecision": 0.5917, "meanRecall": 0.8859},
    "session": {"totalPassed": 5, "totalCases": 12, "meanPrecision": 0.6439, "meanRecall": 0.7121},
}


def test_sqlite_fts_from_wrapper_to_leaderboard(tmp_path: Path, capsys: object) -> None:
    db = tmp_path / "fts.db"
    with serving(SqliteFts(db)) as srv:
        paths = run(srv.url.replace("http://", "http://user:secret@"), tmp_path / "out", ("single", "session"),
                    provider="sqlite-fts")  # fmt: skip
    assert db.is_file() and db.stat().st_size > 0
    assert [p.name for p in paths] == ["retrieval-report-sqlite-fts.json", "session-retrieval-report-sqlite-fts.json"]
    for suite, path in zip(("single", "session"), paths, strict=True):
        doc = json.loads(path.read_text())
        assert {k: doc["retrieval"][k] for k in SCORES[suite]} == SCORES[suite]
        assert doc["ingestion"]["beliefCount"] == 35
        prov = doc["provenance"]
        assert prov["package"] == "memeval" and prov["version"] == __version__ and prov["runDate"]
        assert prov["wrapperUrl"] == srv.url and "secret" not in path.read_text()

    load = load_pmb(tmp_path / "out", FIXTURE_DIR)
    assert len(load.runs) == 2 and all(r.mismatches == () for r in load.runs)
    assert main(["verify", "--results", str(tmp_path / "out"), "--fixtures", str(FIXTURE_DIR)]) == 0

    results = tmp_path / "results"
    assert main(["add", "--results", str(results), "--fixtures", str(FIXTURE_DIR), *map(str, paths)]) == 0
    stored = load_pmb(results, FIXTURE_DIR)
    rows = oracle.rows(stored.runs)
    assert {(r["display_name"], r["benchmark"], r["passed"]) for r in rows} == {
        ("sqlite-fts", "pmb-single-turn", 43),
        ("sqlite-fts", "pmb-session", 5),
    }
    # The run page names who made the report, with which version, when, and against which wrapper.
    single = next(r for r in stored.runs if r.identity.benchmark == "pmb-single-turn")
    shown = dict(pmb_view(single, runs_table(stored.runs), stored.fixture).provenance)
    assert shown["Report provenance: package"] == "memeval"
    assert shown["Report provenance: version"] == __version__
    assert shown["Report provenance: wrapperUrl"] == srv.url
    assert shown["Report provenance: runDate"].startswith("20")
