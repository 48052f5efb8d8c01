"""The judged run: the original run's questions and answers with every judge's verdicts, in memeval's run format.

Written to ``<out>/<run id>.<judge>.json`` (default ``<results>/judged/``), atomically (a temporary file
renamed into place); the original file is never touched. The document is a complete run
(``docs/QA_RUN_FORMAT.md``): the loader reads it like any other, as a second run of the same system whose
questions carry the original verdicts *and* the new judge's. ``run.rejudge`` links it to the original
(its run id, source files and SHA-256) and records the provenance: judge name, model, base URL without
credentials, prompt name, version, hash and source, repeats, temperature, seed, date, memeval version, and
the run's calls, cache hits, tokens and estimated cost. :mod:`memeval_core.judge.lineup` uses the link to
fold the new verdicts back into the original run.

Which answers are judged: every scored question with a non-blank answer and no harness error. Failed
questions keep scoring 0 and unscored ones stay outside the denominator, as everywhere in memeval. A
response that states no verdict is *unparsed*: the question gets no verdict from that judge, and
``unparsed_verdicts`` keeps ``{judge, raw}`` (never guessed, never counted correct).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from memeval_core.judge.prompts import Item, Prompt
from memeval_core.qa.ingest import LoadedRun
from memeval_core.qa.models import QaRun

JUDGED_DIR = "judged"
"""Default output folder, under the results directory."""
REJUDGE = "rejudge"
"""Key of the provenance and link in a judged run's metadata."""
UNPARSED = "unparsed_verdicts"
"""Key of a question's unparsed responses (``[{judge, raw}]``)."""
_DROP = {"source_file", "source_sha256", "metadata_sources", "stated", "format", REJUDGE}


class OutputError(ValueError):
    """The run cannot be judged or written; the message is one sentence."""


@dataclass(frozen=True)
class Provenance:
    """Who judged, how, and what it cost: ``run.rejudge`` of a judged file."""

    judge: str
    model: str
    base_url: str
    prompt: str
    prompt_version: int
    prompt_hash: str
    prompt_source: str
    scale: str
    repeats: int
    temperature: float
    seed: int | None
    date: str
    memeval_version: str
    calls: int
    cache_hits: int
    tokens_in: int
    tokens_out: int
    cost_usd: float | None


def now() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def verdict_names(judge: str, repeats: int) -> list[str]:
    """The verdict source name of each repeat: the judge, or ``judge#1..#N`` when it repeats."""
    return [judge] if repeats == 1 else [f"{judge}#{r}" for r in range(1, repeats + 1)]


def slug(text: str) -> str:
    """``text`` as a file-name part."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "judge"


def judged_items(run: LoadedRun) -> tuple[list[int], list[Item]]:
    """Positions and prompt items of the questions to judge; :class:`OutputError` when there are none."""
    positions: list[int] = []
    items: list[Item] = []
    for i, q in enumerate(run.run.questions):
        if q.scored and not q.error and q.answer is not None and q.answer.strip():
            positions.append(i)
            items.append(
                Item(q.question_id, q.question, q.gold_answer or "", q.answer, q.category, bool(q.is_abstention))
            )
    if not items:
        raise OutputError(f"run {run.run_id} has no answer to judge (no scored question with a non-blank answer)")
    return positions, items


def check_names(run: LoadedRun, names: Sequence[str]) -> None:
    """:class:`OutputError` when the run already has a verdict source of one of ``names``."""
    taken = sorted(set(names) & set(run.score.judges))
    if taken:
        raise OutputError(f"run {run.run_id} already has verdicts named {taken[0]!r}; pass --name to call it otherwise")


def _link(run: LoadedRun) -> dict[str, Any]:
    """The original run this one re-judges (an already judged input keeps pointing at its own original)."""
    earlier = (run.meta.model_extra or {}).get(REJUDGE)
    if isinstance(earlier, dict) and "original_run_id" in earlier:
        return {k: earlier[k] for k in ("original_run_id", "original_source", "original_sha256") if k in earlier}
    meta = run.meta
    return {"original_run_id": run.run_id, "original_source": meta.source_file, "original_sha256": meta.source_sha256}


def _meta(run: LoadedRun, prov: Provenance, names: Sequence[str]) -> dict[str, Any]:
    meta = {k: v for k, v in run.meta.model_dump(mode="json").items() if k not in _DROP}
    variant = meta.get("variant")
    meta["variant"] = f"{variant}, judged by {prov.judge}" if variant else f"judged by {prov.judge}"
    meta["judge_models"] = list(dict.fromkeys([*meta.get("judge_models", []), prov.model]))
    meta[REJUDGE] = {**_link(run), "added_judges": list(names), **asdict(prov)}
    return meta


def judged_document(
    run: LoadedRun, positions: Sequence[int], raw: Mapping[tuple[int, int], str], prompt: Prompt, prov: Provenance
) -> dict[str, Any]:
    """The judged run as a JSON-ready document; ``raw[(position, repeat)]`` is each response's text."""
    names = verdict_names(prov.judge, prov.repeats)
    judged = set(positions)
    questions = []
    for i, q in enumerate(run.run.questions):
        doc = q.model_dump(mode="json", exclude_none=True)
        doc.pop(UNPARSED, None)
        if i in judged:
            unparsed = []
            for r, name in enumerate(names, start=1):
                text = raw[(i, r)]
                score = prompt.parse(text)
                if score is None:
                    unparsed.append({"judge": name, "raw": text})
                else:
                    verdict = {"judge": name, "score": score, "scale": prompt.scale, "model": prov.model}
                    doc["verdicts"].append({**verdict, "label": text.strip()[:500]})
            if unparsed:
                doc[UNPARSED] = unparsed
        questions.append(doc)
    return {"schema_version": 1, "run": _meta(run, prov, names), "questions": questions}


def output_path(out_dir: Path, run_id: str, judge: str) -> Path:
    """``<out>/<run id>.<judge>.json``."""
    return out_dir / f"{slug(run_id)}.{slug(judge)}.json"


def write_judged(doc: dict[str, Any], path: Path) -> Path:
    """Validate ``doc`` as a QA run and write it atomically to ``path``; :class:`OutputError` on failure."""
    try:
        QaRun.model_validate(doc)
    except ValidationError as exc:
        raise OutputError(f"the judged run does not validate as a memeval run: {exc.errors()[0]['msg']}") from None
    body = json.dumps(doc, ensure_ascii=False, indent=1) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Not *.json until complete: a half-written file must never be loaded as a run.
        tmp = path.with_name(f".{path.name}.{os.getpid()}.part")
        try:
            with tmp.open("w", encoding="utf-8") as f:
                f.write(body)
            tmp.replace(path)
        finally:
            tmp.unlink(missing_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror}") from None
    return path
