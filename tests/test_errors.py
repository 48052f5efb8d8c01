from __future__ import annotations

import pickle

from memeval_core.errors import IngestError, json_path


def test_json_path() -> None:
    assert json_path(("cases", 3, "caseId")) == "$.cases[3].caseId"
    assert json_path(()) == "$"


def test_message_and_pickling() -> None:
    err = IngestError("r.json", "$.cases[1]", "bad value", "fix it")
    assert str(err) == "r.json: $.cases[1]: bad value (fix it)"
    assert str(IngestError("r.json", "$", "empty")) == "r.json: $: empty"
    assert pickle.loads(pickle.dumps(err)) == err
