"""LoCoMo (``locomo10.json``): the dataset, memeval's category naming convention, and joining runs to it.

Category naming. ``locomo10.json`` carries only integer codes 1-5, and sources name them
differently (see :data:`SOURCE_NAMINGS`). memeval declares ONE convention, the one of the dataset
authors' own evaluation code (snap-research/LoCoMo ``task_eval/evaluation.py``, confirmed in LoCoMo
issue #27 and used by mem0's and EverMemOS's evaluations and by locomo-audit's answer key):

====  ==============  =====
code  memeval name    count
====  ==============  =====
1     multi_hop       282
2     temporal        321
3     open_domain      96
4     single_hop      841
5     adversarial     446
====  ==============  =====

The raw code is always stored (:attr:`~memeval_core.qa.models.QaQuestion.category`); the name is derived from the code,
never from a source's own label, so a source that calls code 1 "single-hop" still lands in
``multi_hop``.

Question ids. memeval names a LoCoMo question ``<sample_id>-q<i>`` (``conv-26-q0``), ``i`` being the
raw index into that conversation's ``qa`` list (category 5 included), the id supermemory's
MemoryBench uses. Sources that only know a question's position among the conversation's
non-category-5 questions get a provisional ``<sample_id>-f<p>`` id that :func:`join_columns` resolves.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

from memeval_core import tree
from memeval_core.errors import IngestError
from memeval_core.pmb.ingest import parse_json_bytes
from memeval_core.qa.columns import ColumnRun, Columns

BENCHMARK = "locomo"
"""Benchmark id of LoCoMo runs."""

SAMPLE_IDS: tuple[str, ...] = (
    "conv-26",
    "conv-30",
    "conv-41",
    "conv-42",
    "conv-43",
    "conv-44",
    "conv-47",
    "conv-48",
    "conv-49",
    "conv-50",
)
"""``sample_id`` of the 10 conversations, in array order (index 0..9)."""

TOTAL_QUESTIONS = 1986
"""Questions in locomo10.json, category 5 included."""
TOTAL_WITHOUT_ADVERSARIAL = 1540
"""Questions in categories 1-4 (the set most published evaluations score)."""
ADVERSARIAL = "5"
"""Raw code of the adversarial category."""

CATEGORY_NAMES: dict[str, str] = {
    "1": "multi_hop",
    "2": "temporal",
    "3": "open_domain",
    "4": "single_hop",
    "5": "adversarial",
}
"""memeval's declared LoCoMo naming: raw code -> name (LoCoMo authors' evaluation code, issue #27)."""

CATEGORY_COUNTS: dict[str, int] = {"1": 282, "2": 321, "3": 96, "4": 841, "5": 446}
"""Questions per raw code in locomo10.json."""

SOURCE_NAMINGS: dict[str, dict[str, str]] = {
    "snap-research LoCoMo evaluation.py, mem0, EverMemOS, locomo-audit (memeval's convention)": CATEGORY_NAMES,
    "mflow-benchmarks category_mapping.json": {
        "1": "Multi-hop",
        "2": "Temporal",
        "3": "Open-domain",
        "4": "Single-hop",
        "5": "Adversarial",
    },
    "supermemory MemoryBench questionType": {
        "1": "single-hop",
        "2": "multi-hop",
        "3": "temporal",
        "4": "world-knowledge",
        "5": "adversarial",
    },
    "cognitive-memory-benchmarks category_name": {
        "1": "single-hop",
        "2": "multi-hop",
        "3": "temporal",
        "4": "open-domain",
        "5": "adversarial",
    },
    "memobase generate_scores output": {"1": "single_hop", "2": "temporal", "3": "multi_hop", "4": "open_domain"},
    "zep-papers README table": {"1": "Multi-Hop", "2": "Open Domain", "3": "Temporal", "4": "Single-Hop"},
}
"""How other sources label the same raw codes (from ``locomo/PROVENANCE.md``); shown beside memeval's names."""

MEMORYBENCH_LABEL_TO_CODE: dict[str, str] = {
    v: k for k, v in SOURCE_NAMINGS["supermemory MemoryBench questionType"].items()
}
"""supermemory MemoryBench ``questionType`` label -> LoCoMo raw code."""


def category_name(code: str | None) -> str | None:
    """memeval's name for a LoCoMo raw category code; None for None or an unknown code."""
    return None if code is None else CATEGORY_NAMES.get(code)


def category_mapping_table() -> list[dict[str, str]]:
    """One row per raw code: memeval's name, the count, and each source's label (for display)."""
    out = []
    for code, name in CATEGORY_NAMES.items():
        row = {"code": code, "memeval": name, "count": str(CATEGORY_COUNTS[code])}
        for source, naming in SOURCE_NAMINGS.items():
            row[source] = naming.get(code, "(excluded)")
        out.append(row)
    return out


def question_id(conv_index: int, qa_index: int) -> str:
    """Canonical id of a LoCoMo question: ``conv-26-q0`` for conversation 0, raw ``qa`` index 0."""
    return f"{SAMPLE_IDS[conv_index]}-q{qa_index}"


def position_id(conv_index: int, position: int) -> str:
    """Provisional id from the position among a conversation's non-category-5 questions: ``conv-26-f0``."""
    return f"{SAMPLE_IDS[conv_index]}-f{position}"


_CANONICAL = re.compile(r"^(conv-\d+)-q(\d+)$")
_POSITIONAL = re.compile(r"^(conv-\d+)-f(\d+)$")


def normalize_text(text: str) -> str:
    """Question text for matching: case-folded, whitespace collapsed."""
    return " ".join(text.split()).casefold()


@dataclass(frozen=True)
class LocomoQuestion:
    """One question of locomo10.json."""

    conv_index: int
    """Index of the conversation in the file (0..9)."""
    sample_id: str
    """The conversation's ``sample_id``."""
    qa_index: int
    """Raw index into the conversation's ``qa`` list."""
    position: int | None
    """Index among the conversation's non-category-5 questions; None for category 5."""
    question: str
    """Question text."""
    answer: str | None
    """Gold answer (stringified); None where the dataset has none."""
    evidence: tuple[str, ...]
    """Gold evidence ``dia_id`` values, as the dataset lists them."""
    category: str
    """Raw category code as a string."""

    @cached_property  # a join reads it for every question it matches
    def question_id(self) -> str:
        """Canonical id (``conv-26-q0``)."""
        return f"{self.sample_id}-q{self.qa_index}"


@dataclass(frozen=True)
class LocomoDataset:
    """locomo10.json, indexed for joining."""

    questions: tuple[LocomoQuestion, ...]
    """Every question, conversation by conversation, in raw order."""
    source: str
    """Path the dataset was read from."""
    sha256: str
    """SHA-256 of the file's bytes."""

    @cached_property
    def sample_ids(self) -> frozenset[str]:
        """The dataset's conversation ids, and LoCoMo's own (:data:`SAMPLE_IDS`)."""
        return frozenset(SAMPLE_IDS) | {q.sample_id for q in self.questions}

    @cached_property
    def by_id(self) -> dict[str, LocomoQuestion]:
        """Canonical id -> question."""
        return {q.question_id: q for q in self.questions}

    @cached_property
    def by_position(self) -> dict[tuple[str, int], LocomoQuestion]:
        """(sample_id, non-category-5 position) -> question."""
        return {(q.sample_id, q.position): q for q in self.questions if q.position is not None}

    # Matching by text is the last resort of a join, which most runs never reach: built on first use.
    @cached_property
    def by_text(self) -> dict[tuple[str, str], list[LocomoQuestion]]:
        """(sample_id, normalized text) -> questions with that text, in raw order (12 texts repeat)."""
        out: dict[tuple[str, str], list[LocomoQuestion]] = {}
        for q in self.questions:
            out.setdefault((q.sample_id, normalize_text(q.question)), []).append(q)
        return out

    @cached_property
    def by_text_any(self) -> dict[str, list[LocomoQuestion]]:
        """Normalized text -> questions in any conversation with that text."""
        out: dict[str, list[LocomoQuestion]] = {}
        for q in self.questions:
            out.setdefault(normalize_text(q.question), []).append(q)
        return out


def is_locomo_dataset(data: Any) -> bool:
    """True for the locomo10.json layout: a list of objects with ``sample_id``, ``conversation`` and ``qa``."""
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(c, dict) and "qa" in c and "conversation" in c and "sample_id" in c for c in data)
    )


def parse_locomo(data: Any, source: str, sha256: str) -> LocomoDataset:
    """Index a parsed locomo10.json; raise :class:`IngestError` naming the bad field."""
    if not is_locomo_dataset(data):
        raise IngestError(
            source,
            "$",
            "not a LoCoMo dataset: expected a list of conversations with sample_id, conversation and qa",
            "point --datasets at the folder holding locomo10.json from snap-research/LoCoMo",
        )
    rows: list[dict[str, Any]] = []
    for ci, conv in enumerate(data):
        sample_id = conv["sample_id"]
        if not isinstance(sample_id, str) or not isinstance(conv["qa"], list):
            raise IngestError(source, f"$[{ci}]", "sample_id must be a string and qa a list")
        position = 0
        for qi, qa in enumerate(conv["qa"]):
            if not isinstance(qa, dict) or not isinstance(question := qa.get("question"), str):
                raise IngestError(source, f"$[{ci}].qa[{qi}]", "a qa item must be an object with a string question")
            cat = qa.get("category")
            if isinstance(cat, bool) or not isinstance(cat, int | str):
                where = f"$[{ci}].qa[{qi}].category"
                raise IngestError(source, where, f"category must be an integer code, got {cat!r}")
            code = str(cat)
            evidence = qa.get("evidence", [])
            if not isinstance(evidence, list):
                raise IngestError(source, f"$[{ci}].qa[{qi}].evidence", "evidence must be a list of dia_id strings")
            answer = qa.get("answer")
            adversarial = code == ADVERSARIAL
            rows.append(
                {
                    "conv_index": ci,
                    "sample_id": sample_id,
                    "qa_index": qi,
                    "position": None if adversarial else position,
                    "question": question,
                    "answer": None if answer is None else str(answer),
                    "evidence": tuple(map(str, evidence)),
                    "category": code,
                }
            )
            if not adversarial:
                position += 1
    return LocomoDataset(tuple(LocomoQuestion(**row) for row in rows), source, sha256)


def load_locomo(path: Path, rel: str | None = None) -> LocomoDataset:
    """Read and index locomo10.json; raise :class:`IngestError` for a missing, unreadable or malformed file."""
    name = rel or str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise IngestError(name, "$", f"cannot be read: {exc.strerror}") from exc
    return parse_locomo(parse_json_bytes(raw, name), name, hashlib.sha256(raw).hexdigest())


def find_locomo(root: Path) -> Path | None:
    """The shallowest ``locomo10.json`` (or ``locomo.json``) under root whose content is the dataset."""
    names = ("locomo10.json", "locomo.json")
    candidates = [root / e.rel for e in tree.walk(root, names).files if e.rel.rsplit("/", 1)[-1] in names]
    for path in sorted(candidates, key=lambda p: (len(p.parts), str(p))):
        try:
            data = parse_json_bytes(path.read_bytes(), str(path))
        except (OSError, IngestError):
            continue
        if is_locomo_dataset(data):
            return path
    return None


@dataclass(frozen=True)
class JoinReport:
    """How a run's questions were matched to locomo10.json."""

    total: int
    """Questions in the run."""
    joined: int
    """Questions matched to a dataset question."""
    by_key: dict[str, int]
    """Matches per key: ``question_id``, ``conversation+position``, ``question_text``."""
    unmatched: tuple[str, ...]
    """Run question ids that matched nothing (or whose text contradicted the dataset)."""
    text_mismatches: int
    """Id- or position-based matches rejected because the question text differs from the dataset's."""
    category_conflicts: int
    """Joined questions whose stated category code differs from the dataset's (the dataset's code is kept)."""
    duplicates: int
    """Dataset questions matched by more than one run question (the later ones count as unmatched)."""

    def summary(self) -> str:
        """One line for people: ``1540/1540 joined (question_id 1540)``."""
        keys = ", ".join(f"{k} {v}" for k, v in self.by_key.items() if v)
        return f"{self.joined}/{self.total} joined" + (f" ({keys})" if keys else "")


def _conv_of(conversation: str | None, sample_ids: frozenset[str]) -> str | None:
    if conversation is None:
        return None
    if conversation in sample_ids:
        return conversation
    if conversation.isdigit() and int(conversation) < len(SAMPLE_IDS):
        return SAMPLE_IDS[int(conversation)]
    return None


def _same_text(a: str, b: str) -> bool:
    # Most runs copy the dataset's text verbatim: equal strings need no normalising.
    return a == b or normalize_text(a) == normalize_text(b)


class _Asked(NamedTuple):
    """What a join matches a run question by."""

    question_id: str
    question: str
    question_index: int | None
    conv: str | None
    """The question's LoCoMo conversation (:func:`_conv_of`), or None."""


def _match(q: _Asked, ds: LocomoDataset, taken: set[str]) -> tuple[LocomoQuestion, str] | str:
    """The dataset question for q and the key used, or a reason string when nothing matches."""
    hit = ds.by_id.get(q.question_id)
    if hit is not None and _CANONICAL.match(q.question_id):
        return (hit, "question_id") if not q.question or _same_text(hit.question, q.question) else "text-mismatch"
    if q.conv is not None and q.question_index is not None:
        hit = ds.by_id.get(f"{q.conv}-q{q.question_index}")
        if hit is not None:
            return (
                (hit, "conversation+index")
                if not q.question or _same_text(hit.question, q.question)
                else ("text-mismatch")
            )
    m = _POSITIONAL.match(q.question_id)
    if m:
        hit = ds.by_position.get((m[1], int(m[2])))
        if hit is not None and (not q.question or _same_text(hit.question, q.question)):
            return hit, "conversation+position"
    if q.question:
        key = normalize_text(q.question)
        hits = ds.by_text.get((q.conv, key), []) if q.conv is not None else ds.by_text_any.get(key, [])
        free = [h for h in hits if h.question_id not in taken]
        if free:
            return free[0], "question_text"
    return "no-match"


_KEYS = ("question_id", "conversation+index", "conversation+position", "question_text")
"""The keys :func:`join_columns` matches by, in the order it tries them."""


@dataclass(frozen=True)
class _JoinPlan:
    """What a join does to each question of a run, before it is applied to its columns."""

    hits: list[LocomoQuestion | None]
    """The dataset question each run question matched, None for an unmatched one."""
    renamed: dict[int, str]
    """Row -> new id of an unmatched question whose id a joined question now uses (``unjoined:<id>``)."""
    report: JoinReport


def _plan(asked: list[_Asked], categories: list[str | None], ds: LocomoDataset) -> _JoinPlan:
    """Match every question (see :func:`join_columns`) and say which unmatched ones must be renamed."""
    taken: set[str] = set()
    by_key: Counter[str] = Counter()
    unmatched: list[str] = []
    hits: list[LocomoQuestion | None] = []
    text_mismatches = conflicts = duplicates = 0
    for q, category in zip(asked, categories, strict=True):
        found = _match(q, ds, taken)
        if not isinstance(found, str) and found[0].question_id in taken:
            duplicates += 1
            found = "duplicate"
        if isinstance(found, str):
            text_mismatches += found == "text-mismatch"
            unmatched.append(q.question_id)
            hits.append(None)
            continue
        hit, key = found
        taken.add(hit.question_id)
        by_key[key] += 1
        conflicts += category is not None and category != hit.category
        hits.append(hit)
    # An unmatched question may keep a provisional id that a joined one now uses: keep the run's ids unique.
    # Only the unmatched question is renamed: the joined one keeps its canonical id.
    ids = [q.question_id if hit is None else hit.question_id for q, hit in zip(asked, hits, strict=True)]
    count = Counter(ids)
    renamed = {row: f"unjoined:{qid}" for row, qid in enumerate(ids) if hits[row] is None and count[qid] > 1}
    report = JoinReport(
        total=len(asked),
        joined=sum(by_key.values()),
        by_key={k: by_key[k] for k in _KEYS},
        unmatched=tuple(unmatched),
        text_mismatches=text_mismatches,
        category_conflicts=conflicts,
        duplicates=duplicates,
    )
    return _JoinPlan(hits, renamed, report)


def join_columns(run: ColumnRun, ds: LocomoDataset) -> tuple[ColumnRun, JoinReport]:
    """Match every question of a LoCoMo run to locomo10.json and fill in what the dataset knows.

    Keys, tried in order: the canonical ``conv-N-qI`` id; conversation + raw ``qa`` index;
    conversation + position among non-category-5 questions (``conv-N-fP`` ids); question text
    within the conversation (anywhere when the question has no conversation id; repeated texts
    match in order - locomo10.json repeats texts only within a conversation). Id and position
    matches must agree with the question text when the run has one.
    Joined questions get the canonical id, conversation, raw index, the dataset's category code
    and memeval's name for it, gold evidence ids and (when missing) the gold answer.

    The run's columns are never changed: the joined fields are new columns of a new run.
    """
    plan = _plan_of(run.columns, ds)
    return ColumnRun(run.run, {**run.columns, **_joined_columns(run.columns, plan)}), plan.report


def _plan_of(c: Columns, ds: LocomoDataset) -> _JoinPlan:
    convs = [_conv_of(conv, ds.sample_ids) for conv in c["conversation"]]
    return _plan(list(map(_Asked, c["question_id"], c["question"], c["question_index"], convs)), c["category"], ds)


def _joined_columns(c: Columns, plan: _JoinPlan) -> Columns:
    """The columns a join sets: for a matched question the dataset's identity, category, evidence and (when
    missing) gold answer; an unmatched question keeps its values (and is renamed when its id clashes)."""

    def matched(name: str, value: Callable[[Any, LocomoQuestion], Any]) -> list[Any]:
        """Column ``name`` with ``value(own value, dataset question)`` in every matched row."""
        return [own if hit is None else value(own, hit) for own, hit in zip(c[name], plan.hits, strict=True)]

    ids = matched("question_id", lambda _, hit: hit.question_id)
    for row, new_id in plan.renamed.items():
        ids[row] = new_id
    return {
        "question_id": ids,
        "conversation": matched("conversation", lambda _, hit: hit.sample_id),
        "question_index": matched("question_index", lambda _, hit: hit.qa_index),
        "question": matched("question", lambda own, hit: own or hit.question),
        "category": matched("category", lambda _, hit: hit.category),
        "category_name": matched("category_name", lambda _, hit: CATEGORY_NAMES.get(hit.category)),
        "gold_evidence_ids": matched("gold_evidence_ids", lambda _, hit: list(hit.evidence)),
        "gold_answer": matched("gold_answer", lambda own, hit: hit.answer if own is None else own),
    }
