"""What every QA importer shares: the parsed source file, typed field access that raises
:class:`IngestError` with the JSON path, verdict construction, and run assembly."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, NoReturn

from pydantic import ValidationError

from memeval_core.errors import IngestError, json_path
from memeval_core.qa.columns import ColumnRun, columns_from_dicts, columns_of, validate_columns
from memeval_core.qa.models import QaQuestion, QaRun, RunMeta, Scale, Verdict


@dataclass(frozen=True)
class Source:
    """One parsed result file."""

    rel: str
    """Path relative to the results directory (POSIX separators)."""
    sha256: str
    """SHA-256 of the file's bytes."""
    data: Any
    """Parsed content (JSON value; JSONL and CSV: a list of row objects)."""
    root_name: str = ""
    """Name of the results directory the path is relative to (a hint for :func:`system_from_path`)."""

    @property
    def stem(self) -> str:
        """File name without its extension."""
        return PurePosixPath(self.rel).stem

    @property
    def dirs(self) -> tuple[str, ...]:
        """Directory names from the results root down to the file's folder."""
        return PurePosixPath(self.rel).parent.parts


class UnjudgedError(Exception):
    """The file holds answers but not a single judge verdict: nothing to score yet (skipped, not an error)."""


def fail(src: Source, loc: Sequence[int | str], message: str, hint: str = "") -> NoReturn:
    """Raise the :class:`IngestError` for a bad value at ``loc`` in ``src``."""
    raise IngestError(src.rel, json_path(loc), message, hint)


def objects(
    src: Source, items: Iterable[Any], loc: Sequence[int | str]
) -> Iterator[tuple[int, list[int | str], dict[str, Any]]]:
    """Each question item of the list at ``loc`` in ``src``: its position, its JSON location and the item, which
    must be an object (else :func:`fail` at its location, "expected an object per question")."""
    for i, item in enumerate(items):
        where: list[int | str] = [*loc, i]
        if not isinstance(item, dict):
            fail(src, where, "expected an object per question")
        yield i, where, item


_MISSING: Any = object()


def need(
    src: Source, obj: Mapping[str, Any], key: str, loc: Sequence[int | str], types: type | tuple[type, ...]
) -> Any:
    """``obj[key]``, which must exist and be of ``types`` (bools never count as numbers)."""
    # Importers call this for every field of every item: the exact type, the usual case, is decided first.
    value = obj.get(key, _MISSING)
    cls = value.__class__
    if cls is types or (types.__class__ is tuple and cls in types):
        return value
    if key not in obj:
        fail(src, [*loc, key], f"missing field {key!r}", "every item of this format has it; was the file truncated?")
    value = obj[key]
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in _as_tuple(types)):
        fail(src, [*loc, key], f"expected {_type_names(types)}, got {_shown(value)}")
    return value


def opt(src: Source, obj: Mapping[str, Any], key: str, loc: Sequence[int | str], types: type | tuple[type, ...]) -> Any:
    """``obj[key]`` when present and not null (then of ``types``), else None."""
    value = obj.get(key)
    if value is None:
        return None
    cls = value.__class__
    if cls is types or (types.__class__ is tuple and cls in types):
        return value
    return need(src, obj, key, loc, types)


def text(value: Any) -> str | None:
    """A gold or generated answer as text: strings kept, numbers stringified, null stays None."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return str(value)


def number(src: Source, obj: Mapping[str, Any], key: str, loc: Sequence[int | str]) -> float | None:
    """A finite non-negative number field, or None when absent/null."""
    value = obj.get(key)
    if value is None:
        return None
    if (value.__class__ is float or value.__class__ is int) and 0 <= value < _INF:  # NaN fails the comparison
        try:
            return float(value)
        except OverflowError:  # an int beyond any float (msgspec parses such JSON numbers as Python ints)
            fail(src, [*loc, key], "expected a finite non-negative number, got an integer too large for a float")
    value = opt(src, obj, key, loc, (int, float))
    if value is None:
        return None
    if value != value or value in (float("inf"), float("-inf")) or value < 0:
        fail(src, [*loc, key], f"expected a finite non-negative number, got {value!r}")
    return float(value)


def binary_verdict(
    src: Source,
    value: Any,
    loc: Sequence[int | str],
    judge: str,
    model: str | None = None,
    label: str | None = None,
) -> Verdict | None:
    """A binary verdict from ``true``/``false``, ``0``/``1`` (also as ``"0"``/``"1"``); None for null."""
    if value is None:
        return None
    if isinstance(value, bool):
        score = 1.0 if value else 0.0
    elif isinstance(value, int | float) and value in (0, 1):
        score = float(value)
    elif isinstance(value, str) and value.strip() in ("0", "1"):
        score = float(value.strip())
    else:
        fail(src, loc, f"a binary verdict must be true/false or 0/1, got {_shown(value)}")
    return _verdict(judge, score, "binary", model, label, True)


def graded_verdict(
    src: Source, value: Any, loc: Sequence[int | str], judge: str, scale: Scale, model: str | None = None
) -> Verdict | None:
    """A graded verdict (``unit`` 0..1 or ``rubric-0-5``); None for null."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        fail(src, loc, f"a {scale} score must be a number, got {_shown(value)}")
    try:
        return _verdict(judge, float(value), scale, model, None, False)
    except OverflowError:  # an int beyond any float
        fail(src, loc, f"a {scale} score must lie within its scale, got an integer too large for a float")
    except ValidationError as exc:
        fail(src, loc, exc.errors()[0]["msg"], "scores must lie within the judge's scale")


_INF = float("inf")
_VERDICTS: dict[tuple[str, float, bool, str, str | None, str | None, bool], Verdict] = {}
"""Interned verdicts: one shared (frozen) instance per distinct verdict."""
_VERDICTS_MAX = 65536


def _verdict(judge: str, score: float, scale: Scale, model: str | None, label: str | None, labelled: bool) -> Verdict:
    """The validated :class:`Verdict`, shared between equal verdicts.

    A run repeats a handful of distinct verdicts thousands of times; sharing one frozen instance saves
    validating each, and a pickle (the warm-start cache) stores each distinct verdict once.
    """
    # -0.0 == 0.0 but prints apart; graded verdicts leave ``label`` unset (``model_fields_set``).
    key = (judge, score, math.copysign(1.0, score) < 0, scale, model, label, labelled)
    hit = _VERDICTS.get(key)
    if hit is None:
        if labelled:
            hit = Verdict(judge=judge, score=score, scale=scale, model=model, label=label)
        else:
            hit = Verdict(judge=judge, score=score, scale=scale, model=model)
        if len(_VERDICTS) >= _VERDICTS_MAX:
            _VERDICTS.clear()
        _VERDICTS[key] = hit
    return hit


def build_run(src: Source, meta: dict[str, Any], questions: list[dict[str, Any]]) -> ColumnRun:
    """Validate the assembled run; a validation failure becomes an :class:`IngestError`.

    The questions are validated as columns (:func:`~memeval_core.qa.columns.validate_columns`), not one
    model per question. When the columns fail, the run is validated record by record to name the first
    bad record's field exactly as before (``$.answer``); should that pass, its questions are used.
    """
    meta = {"source_file": src.rel, "source_sha256": src.sha256, **meta}
    try:
        run_meta = RunMeta.model_validate(meta)
    except ValidationError as exc:
        _fail_validation(src, exc, "run")
    try:
        columns = validate_columns(columns_from_dicts(questions))
    except ValidationError:
        columns = columns_of(_validate_records(src, run_meta, questions))
    check_unique_ids(src, columns["question_id"])
    return ColumnRun(run_meta, columns)


def _validate_records(src: Source, meta: RunMeta, questions: list[dict[str, Any]]) -> list[QaQuestion]:
    try:
        return QaRun.model_validate({"run": meta, "questions": questions}).questions
    except ValidationError as exc:
        _fail_validation(src, exc, "questions")


def _fail_validation(src: Source, exc: ValidationError, part: str) -> NoReturn:
    err = exc.errors()[0]
    loc = list(err["loc"])
    # Name the field within its record (``$.answer``), as validating each record on its own does.
    loc = loc[2:] if part == "questions" and loc[:1] == ["questions"] else loc
    fail(src, loc, f"{err['msg']}", "the importer could not map this value")


def check_unique_ids(src: Source, ids: Sequence[str], where: Sequence[str] = ("questions",), first: int = 0) -> None:
    """Raise an :class:`IngestError` at the second occurrence of a repeated question id (one pass, a set).

    ``where`` and ``first``: the JSON path of the question list and the index of its first question there.
    """
    if len(set(ids)) == len(ids):
        return
    seen: set[str] = set()
    for i, qid in enumerate(ids, start=first):
        if qid in seen:
            fail(src, [*where, i, "question_id"], f"question id {qid!r} appears more than once",
                 "each question may appear once per run")  # fmt: skip
        seen.add(qid)


_GENERIC_DIRS = re.compile(
    r"^(results?|data|datasets?|per_conversation|parallel|runs?|outputs?|eval|evals|fixtures?|docs|experiments?|"
    r"v\d+|round\d+.*|current_sdk.*|authoritative|raw_data|config|benchmarks?|locomo|longmemeval|"
    r"locomo-benchmark|\d+)$",
    re.IGNORECASE,
)
_BENCH_PREFIX = re.compile(r"^(?:locomo|longmemeval|lme|evolving-events)[-_](?P<sys>.+)$", re.IGNORECASE)


def system_from_path(src: Source) -> str:
    """Best guess of the system from where the file lies, for formats that do not name it.

    The nearest folder that is not generic (``results``, ``v1``, ``per_conversation``, ...), with a
    benchmark prefix removed (``locomo-zep`` -> ``zep``); the results directory's own name counts as
    the outermost folder; the file stem when every folder is generic.
    """
    for d in reversed((src.root_name, *src.dirs) if src.root_name else src.dirs):
        m = _BENCH_PREFIX.match(d)
        if m and not _GENERIC_DIRS.match(m["sys"]):
            return m["sys"]
        if not m and not _GENERIC_DIRS.match(d):
            return d
    return src.stem


def _as_tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)


def _type_names(types: type | tuple[type, ...]) -> str:
    names = {"str": "a string", "int": "an integer", "float": "a number", "list": "a list", "dict": "an object"}
    return " or ".join(names.get(t.__name__, t.__name__) for t in _as_tuple(types))


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return repr(value[:40])
    if isinstance(value, int | float | bool) or value is None:
        return repr(value)
    return type(value).__name__
