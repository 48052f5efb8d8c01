"""Any table of per-question rows (JSON list, JSONL, CSV) plus a small JSON mapping file.

The mapping file is recognised by its ``memeval_mapping`` key::

    {
      "memeval_mapping": 1,
      "file": "my_results.csv",             # data file, relative to the mapping file
      "rows": "results",                     # optional: dotted key path to the row list inside a JSON file
      "benchmark": "locomo",
      "system": "my-memory",
      "fields": {"question_id": "id", "question": "q", "answer": "prediction", "gold_answer": "gold",
                 "category": "cat", "latency_ms": "ms"},
      "judges": [{"name": "gpt-4o-mini", "field": "judge_score", "scale": "binary", "model": "gpt-4o-mini"}],
      "run": {"answer_model": "gpt-4o-mini", "top_k": 10, "includes_adversarial": false}
    }

``fields`` maps :class:`QaQuestion` fields to column names; ``question_id`` and at least one judge
are required. Judges read ``true/false``/``0/1`` (``binary``), 0..5 (``rubric-0-5``) or 0..1
(``unit``); an empty cell means that judge gave no verdict. ``run`` sets :class:`RunMeta` fields.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

from memeval_core import tree
from memeval_core.qa.columns import ColumnRun
from memeval_core.qa.importers._common import Source, binary_verdict, build_run, fail, graded_verdict
from memeval_core.qa.models import RunMeta

FORMAT = "generic"
_SCALES = ("binary", "rubric-0-5", "unit")
_DATA_SUFFIXES = (".csv", ".json", ".jsonl")
_STR_FIELDS = ("question_id", "question", "conversation", "category", "category_name", "kind", "gold_answer", "answer")
_FLOAT_FIELDS = ("latency_ms", "retrieval_latency_ms", "mpa", "faa")
_INT_FIELDS = ("question_index", "tokens")
_BOOL_FIELDS = ("error", "scored", "is_abstention", "abstained")
_LIST_FIELDS = ("retrieved_ids", "gold_evidence_ids")
_KNOWN = set(_STR_FIELDS + _FLOAT_FIELDS + _INT_FIELDS + _BOOL_FIELDS + _LIST_FIELDS + ("error_message",))


def sniff(data: Any, path: str) -> bool:
    """True for a mapping file (an object with a ``memeval_mapping`` key)."""
    return isinstance(data, dict) and "memeval_mapping" in data


def data_path(mapping: Source, root: Path) -> str:
    """The data file the mapping names, relative to the results directory ``root`` (POSIX).

    The file must be a regular file inside ``root``, named by a path relative to the mapping; any other
    name is refused with the same sentence whether or not it exists (see :func:`memeval_core.tree.confine`).
    """
    file = mapping.data.get("file")
    if not isinstance(file, str) or not file:
        fail(mapping, ["file"], "the mapping must name its data file", 'add "file": "<rows.csv|.json|.jsonl>"')
    if not file.endswith(_DATA_SUFFIXES):
        fail(mapping, ["file"], "the data file must be a .csv, .json or .jsonl file", "point it at the rows file")
    try:
        return tree.confine(root, file, PurePosixPath(mapping.rel).parent.as_posix())[1]
    except tree.RefusedPathError as exc:
        fail(mapping, ["file"], str(exc), "put the data file in the results directory, beside the mapping")


def _rows(mapping: Source, data: Source) -> list[Any]:
    rows: Any = data.data
    path = mapping.data.get("rows")
    if isinstance(path, str) and path:
        for part in path.split("."):
            if not isinstance(rows, dict) or part not in rows:
                fail(data, path.split("."), f"no {part!r} here (the mapping's rows path is {path!r})")
            rows = rows[part]
    if not isinstance(rows, list):
        fail(data, [], "expected a list of rows", 'set "rows" in the mapping to the key path of the row list')
    return rows


def _parse_bool(src: Source, value: Any, loc: list[int | str]) -> bool | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0", "yes", "no"):
        return value.strip().lower() in ("true", "1", "yes")
    fail(src, loc, f"expected true/false, got {value!r}")


def _parse_number(src: Source, value: Any, loc: list[int | str]) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        fail(src, loc, f"expected a number, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        fail(src, loc, f"expected a number, got {value!r}")
    except OverflowError:  # an int beyond any float
        fail(src, loc, "expected a number, got an integer too large for a float")


def _parse_list(src: Source, value: Any, loc: list[int | str]) -> list[str] | None:
    if value is None or value == "":
        return None
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, str):
        # CSV cells hold lists as "a|b|c" (or comma-separated when no pipe is present)
        sep = "|" if "|" in value else ","
        return [v.strip() for v in value.split(sep) if v.strip()]
    fail(src, loc, f"expected a list of ids, got {type(value).__name__}")


def _judge_specs(mapping: Source) -> list[dict[str, Any]]:
    judges = mapping.data.get("judges")
    if not isinstance(judges, list) or not judges:
        fail(mapping, ["judges"], "the mapping names no judge", 'add "judges": [{"name": ..., "field": ...}]')
    for i, j in enumerate(judges):
        if not isinstance(j, dict) or not isinstance(j.get("field"), str):
            fail(mapping, ["judges", i], 'each judge needs a "field" naming its column')
        if j.get("scale", "binary") not in _SCALES:
            fail(mapping, ["judges", i, "scale"], f"scale must be one of {', '.join(_SCALES)}")
    return judges


UNEDITED = "TODO"
"""How ``python -m memeval_core mapping`` marks a value the user must fill in (see :mod:`memeval_core.qa.shapes`)."""


def _unedited(value: Any, loc: list[int | str]) -> list[int | str] | None:
    """The JSON path of the first string still marked :data:`UNEDITED`, else None."""
    if isinstance(value, str):
        return loc if value == UNEDITED or value.startswith(f"{UNEDITED}: ") else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = _unedited(item, [*loc, key])
        if found is not None:
            return found
    return None


def load(mapping: Source, data: Source) -> list[ColumnRun]:
    """One run from the rows of ``data`` as described by ``mapping``."""
    spec = mapping.data
    left = _unedited(spec, [])
    if left is not None:
        fail(mapping, left, "still holds a value to fill in from the mapping skeleton", "edit it, then reload")
    fields = spec.get("fields")
    if not isinstance(fields, dict) or not isinstance(fields.get("question_id"), str):
        fail(mapping, ["fields"], "fields must map question_id (at least) to a column name")
    unknown = set(fields) - _KNOWN
    if unknown:
        fail(mapping, ["fields"], f"unknown field(s) {sorted(unknown)}", f"known fields: {sorted(_KNOWN)}")
    benchmark = spec.get("benchmark")
    system = spec.get("system")
    if not isinstance(benchmark, str) or not isinstance(system, str):
        fail(mapping, [], 'the mapping needs "benchmark" and "system" strings')
    judges = _judge_specs(mapping)
    questions: list[dict[str, Any]] = []
    for i, row in enumerate(_rows(mapping, data)):
        if not isinstance(row, dict):
            fail(data, [i], "expected an object per row")
        q: dict[str, Any] = {"benchmark": benchmark}
        for name, column in fields.items():
            value = row.get(column)
            loc: list[int | str] = [i, column]
            if name == "question_id" and (value is None or value == ""):
                fail(data, loc, "every row needs a question id")
            if name in _STR_FIELDS or name == "error_message":
                q[name] = None if value is None or (value == "" and name != "question") else str(value)
            elif name in _FLOAT_FIELDS:
                q[name] = _parse_number(data, value, loc)
            elif name in _INT_FIELDS:
                n = _parse_number(data, value, loc)
                q[name] = None if n is None else int(n)
            elif name in _BOOL_FIELDS:
                b = _parse_bool(data, value, loc)
                if b is not None:
                    q[name] = b
            else:
                q[name] = _parse_list(data, value, loc)
        if q.get("question") is None:
            q["question"] = ""
        verdicts = []
        for j in judges:
            value = row.get(j["field"])
            loc = [i, j["field"]]
            name = str(j.get("name", j["field"]))
            model = j.get("model") if isinstance(j.get("model"), str) else None
            scale = j.get("scale", "binary")
            if value is None or value == "":
                continue
            if scale == "binary":
                flag = _parse_bool(data, value, loc)
                v = binary_verdict(data, None if flag is None else int(flag), loc, name, model)
            else:
                v = graded_verdict(data, _parse_number(data, value, loc), loc, name, scale, model)
            if v is not None:
                verdicts.append(v)
        q["verdicts"] = verdicts
        questions.append(q)
    run_extra = spec.get("run") if isinstance(spec.get("run"), dict) else {}
    bad = set(run_extra) - set(RunMeta.model_fields)
    if bad:
        fail(mapping, ["run"], f"unknown run field(s) {sorted(bad)}", f"known: {sorted(RunMeta.model_fields)}")
    judge_models = sorted({j["model"] for j in judges if isinstance(j.get("model"), str)})
    meta: dict[str, Any] = {
        "judge_models": judge_models,
        **run_extra,
        "benchmark": benchmark,
        "system": system,
        "format": FORMAT,
        "source_file": f"{data.rel} + {mapping.rel}",
    }
    meta.setdefault("variant", PurePosixPath(data.rel).stem)
    return [build_run(data, meta, questions)]
