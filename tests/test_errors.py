from __future__ import annotations

import pickle

import pytest

from memeval_core.errors import IngestError, json_path, refuse_unwritable


def test_json_path() -> None:
    assert json_path(("cases", 3, "caseId")) == "$.cases[3].caseId"
    assert json_path(()) == "$"


def test_message_and_pickling() -> None:
    err = IngestError("r.json", "$.cases[1]", "bad value", "fix it")
    assert str(err) == "r.json: $.cases[1]: bad value (fix it)"
    assert str(IngestError("r.json", "$", "empty")) == "r.json: $: empty"
    assert pickle.loads(pickle.dumps(err)) == err


@pytest.mark.parametrize(
    ("data", "line", "path", "start"),
    [
        ({"a": [1, {"b": "ok\ud800"}]}, None, "$.a[1].b", "holds a lone UTF-16 surrogate"),
        ({"a": {"k\udfff": 1}}, None, "$.a", "a key holds a lone UTF-16 surrogate"),
        ([0.5, float("-inf")], 3, "line 3 $[1]", "-Infinity is not a number JSON allows"),
        ({"a": float("nan")}, None, "$.a", "NaN is not a number JSON allows"),
    ],
)
def test_values_no_json_writer_could_write_back_are_named(
    data: object, line: int | None, path: str, start: str
) -> None:
    with pytest.raises(IngestError) as caught:
        refuse_unwritable(data, "r.json", line)
    assert caught.value.path == path and caught.value.message.startswith(start)
    str(caught.value).encode("utf-8")  # the message itself is printable text


def test_writable_values_pass() -> None:
    refuse_unwritable({"emoji": "\U0001f600", "n": [1, 2.5, None, True], "k\u00e9": "x"}, "r.json")
