"""One list of the files neither loader took, errors once, inputs never."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from memeval_core.results import load_all_results
from memeval_core.unloaded import not_loaded


def test_one_list_for_pmb_and_qa(pmb_results: Path, tmp_path: Path) -> None:
    root = tmp_path / "results"
    shutil.copytree(pmb_results / "fixtures", root / "fixtures")
    shutil.copy(pmb_results / "test-results/baseline/retrieval-report-tenure.json", root / "tenure.json")
    run = {"schema_version": 1, "run": {"benchmark": "longmemeval-s", "system": "s"},
           "questions": [{"benchmark": "longmemeval-s", "question_id": "q", "answer": "a",
                          "verdicts": [{"judge": "j", "score": 1, "scale": "binary"}]}]}  # fmt: skip
    (root / "qa.json").write_text(json.dumps(run))
    (root / "broken.json").write_text("{")
    (root / "summary.json").write_text('{"accuracy": 1}')
    (root / "rows.csv").write_text("a,b\n1,2\n")
    pmb, qa = load_all_results(root, root, cache_dir=None)
    assert [r.identity.provider for r in pmb.runs] == ["tenure"] and len(qa.runs) == 1
    missed = not_loaded(pmb, qa)
    assert [(m.file, m.failed) for m in missed] == [("broken.json", True), ("rows.csv", False), ("summary.json", False)]
    assert missed[0].reason.startswith("not valid JSON")
    assert "CSV without a mapping file" in missed[1].reason
    assert [m.file for m in not_loaded(pmb, None)] == ["broken.json", "qa.json", "summary.json"]
