"""What an unrecognised result file looks like: the closest known format, and a mapping skeleton to edit.

Every known QA format is described by the keys its per-question records carry (each importer's module
docstring documents them). For a file no importer claims, :func:`closest_format` compares the keys of
its records with each format's, and :func:`mapping_skeleton` writes the generic mapping
(:mod:`memeval_core.qa.importers.generic`) that the file's own column names suggest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

RECORD_KEYS: dict[str, frozenset[str]] = {
    "memeval run format": frozenset({"benchmark", "question_id", "question", "answer", "gold_answer", "verdicts"}),
    "mem0 evaluation": frozenset({"question", "answer", "response", "category", "llm_score"}),
    "EverMemOS": frozenset({"question_id", "question", "golden_answer", "generated_answer", "llm_judgments"}),
    "supermemory MemoryBench": frozenset(
        {"questionId", "questionType", "question", "score", "hypothesis", "groundTruth"}
    ),
    "cognitive-memory": frozenset({"question", "ground_truth", "prediction", "category", "llm_correct"}),
    "mflow LongMemEval": frozenset({"question_id", "question", "gold_answer", "generated_answer", "llm_score"}),
    "mflow Evolving Events": frozenset({"question", "answer", "golden_answer", "metrics"}),
    "zep grades": frozenset({"question", "answer", "golden_answer", "grade"}),
}
"""The keys of one per-question record of each known format."""

# Candidate column names for each mapping field, most specific first (lower case, compared without _ and -).
_FIELD_NAMES: dict[str, tuple[str, ...]] = {
    "question_id": ("questionid", "qid", "id", "sampleid", "uid", "key", "idx", "index"),
    "question": ("question", "query", "q", "prompt", "input"),
    "answer": ("answer", "prediction", "response", "generatedanswer", "hypothesis", "output", "pred"),
    "gold_answer": ("goldanswer", "gold", "groundtruth", "goldenanswer", "reference", "ref", "expected", "target"),
    "category": ("category", "questiontype", "type", "cat"),
    "conversation": ("conversation", "convid", "conversationid", "conv", "sampleid"),
    "latency_ms": ("latencyms", "latency", "durationms", "timems", "retrievaltimems"),
}
_JUDGE_HINTS = ("score", "correct", "judge", "grade", "verdict", "accuracy", "llm")


@dataclass(frozen=True)
class Closest:
    """The known format whose records share most keys with a file's."""

    name: str
    """The format's name."""
    missing: tuple[str, ...]
    """Keys that format's records carry and the file's do not."""
    extra: tuple[str, ...]
    """Keys of the file's records that format does not read."""


def records(data: Any) -> tuple[list[str], list[dict[str, Any]]]:
    """(JSON path of the row list as keys, its rows) of the first list of objects found, breadth first.

    A list itself, else the object's values in order (nested one level, e.g. ``{"conv-1": [...]}``).
    """
    if isinstance(data, list):
        return [], [r for r in data if isinstance(r, dict)]
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, list) and value and isinstance(value[0], dict):
                return [str(key)], [r for r in value if isinstance(r, dict)]
        for key, value in data.items():
            if isinstance(value, dict):
                path, rows = records(value)
                if rows:
                    return [str(key), *path], rows
    return [], []


def _keys(rows: Sequence[Mapping[str, Any]], sample: int = 50) -> set[str]:
    keys: set[str] = set()
    for r in rows[:sample]:
        keys.update(str(k) for k in r)
    return keys


def closest_format(data: Any) -> Closest | None:
    """The known format closest to ``data``'s records (Jaccard similarity of keys), or None without records."""
    _, rows = records(data)
    have = _keys(rows)
    if not have:
        return None

    def similarity(item: tuple[str, frozenset[str]]) -> float:
        return len(have & item[1]) / len(have | item[1])

    name, wanted = max(RECORD_KEYS.items(), key=similarity)
    return Closest(name, tuple(sorted(wanted - have)), tuple(sorted(have - wanted)))


def describe(data: Any) -> str:
    """One sentence on an unrecognised file: the closest format and how its keys differ."""
    found = closest_format(data)
    if found is None:
        return "no list of per-question records found"
    parts = [f"closest known format: {found.name}"]
    if found.missing:
        parts.append(f"it lacks {', '.join(found.missing[:6])}")
    if found.extra:
        parts.append(f"it has {', '.join(found.extra[:6])}{' …' if len(found.extra) > 6 else ''} instead")
    return "; ".join(parts)


def _normal(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "").replace(" ", "")


def _guess_fields(columns: Sequence[str]) -> dict[str, str]:
    by_normal = {_normal(c): c for c in columns}
    fields: dict[str, str] = {}
    used: set[str] = set()
    for field, names in _FIELD_NAMES.items():
        for name in names:
            column = by_normal.get(name)
            if column is not None and column not in used:
                fields[field] = column
                used.add(column)
                break
    return fields


def _judge_columns(columns: Sequence[str], rows: Sequence[Mapping[str, Any]], taken: set[str]) -> list[str]:
    judges = []
    for c in columns:
        if c in taken:
            continue
        values = {str(r.get(c)).strip().lower() for r in rows[:200] if r.get(c) not in (None, "")}
        binary = bool(values) and values <= {"0", "1", "true", "false", "0.0", "1.0", "yes", "no"}
        if binary or any(h in _normal(c) for h in _JUDGE_HINTS):
            judges.append(c)
    return judges


def mapping_skeleton(data: Any, data_file: str) -> dict[str, Any]:
    """A generic mapping for ``data`` (the parsed rows file named ``data_file``), guessed from its columns.

    Every guess is a starting point: the values marked ``TODO`` (:data:`~memeval_core.qa.importers.generic.UNEDITED`,
    which the loader refuses until they are filled in) and the judges' scales are for the user to check.
    """
    path, rows = records(data)
    columns = list(dict.fromkeys(str(k) for r in rows[:50] for k in r))
    fields = _guess_fields(columns)
    judges = _judge_columns(columns, rows, set(fields.values()))
    skeleton: dict[str, Any] = {
        "memeval_mapping": 1,
        "file": data_file,
        "benchmark": "TODO: locomo, longmemeval-s, longmemeval-oracle, or your own id",
        "system": "TODO: the memory system's name",
        "fields": fields or {"question_id": "TODO: the column holding each question's id"},
        "judges": [{"name": c, "field": c, "scale": "binary"} for c in judges]
        or [{"name": "TODO", "field": "TODO: the column holding the judge's verdict", "scale": "binary"}],
        "run": {},
    }
    if path:
        skeleton["rows"] = ".".join(path)
    if "question_id" not in fields:
        skeleton["fields"]["question_id"] = "TODO: the column holding each question's id"
    return skeleton
