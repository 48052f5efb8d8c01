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

The raw code is always stored (:attr:`QaQuestion.category`); the name is derived from the code,
never from a source's own label, so a source that calls code 1 "single-hop" still lands in
``multi_hop``.

Question ids. memeval names a LoCoMo question ``<sample_id>-q<i>`` (``conv-26-q0``), ``i`` being the
raw index into that conversation's ``qa`` list (category 5 included), the id supermemory's
MemoryBench uses. Sources that only know a question's position among the conversation's
non-category-5 questions get a provisional ``<sample_id>-f<p>`` id that :func:`join` resolves.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from itertools import compress, repeat
from operator import and_, attrgetter, eq, is_, is_not, itemgetter, ne, not_, or_
from pathlib import Path
from typing import Any, cast

import msgspec
import orjson

from memeval_core.errors import IngestError
from memeval_core.qa.getters import CATEGORY_OF, DICT_OF, FIELDS_SET_OF
from memeval_core.qa.lazy import build_objects
from memeval_core.qa.models import QaQuestion, QaRun
from memeval_core.qa.slim import valid_utf8

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

    # The indexes are built on first use (a join), not when the dataset is read back from a cache or a worker.
    def __reduce__(self) -> tuple[type[LocomoDataset], tuple[tuple[LocomoQuestion, ...], str, str]]:
        return (LocomoDataset, (self.questions, self.source, self.sha256))

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

    @cached_property
    def by_canonical_id(self) -> dict[str, LocomoQuestion]:
        """The ``by_id`` entries whose id has the canonical shape ``conv-<n>-q<i>`` (what :func:`join` tries first)."""
        # An id is canonical exactly when its conversation's first one is: only the digits after -q differ.
        canonical = {sid for sid in self.sample_ids if _CANONICAL.match(f"{sid}-q0")}
        return {qid: q for qid, q in self.by_id.items() if q.sample_id in canonical}

    @cached_property
    def by_positional_id(self) -> dict[str, LocomoQuestion]:
        """Provisional id ``conv-<n>-f<position>`` (:func:`position_id`) -> question (for ``conv-<n>`` samples)."""
        out = {}
        for (sample_id, position), q in self.by_position.items():
            pid = f"{sample_id}-f{position}"
            m = _POSITIONAL.match(pid)
            if m and m[1] == sample_id:
                out[pid] = q
        return out

    @cached_property
    def joined_fields(self) -> dict[str, dict[str, Any]]:
        """Canonical id -> the values :func:`join` gives every question it matches there, whatever the run.

        Every question joined to one dataset question shares its evidence list, as they share the
        dataset's strings: questions are frozen, and nothing edits a list it did not build.
        """
        return {
            qid: {
                "question_id": qid,
                "conversation": q.sample_id,
                "question_index": q.qa_index,
                "category": q.category,
                "category_name": CATEGORY_NAMES.get(q.category),
                "gold_evidence_ids": list(q.evidence),
            }
            for qid, q in self.by_id.items()
        }

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
            if type(qa) is not dict or type(question := qa.get("question")) is not str:
                if not isinstance(qa, dict) or not isinstance(qa.get("question"), str):
                    raise IngestError(source, f"$[{ci}].qa[{qi}]", "a qa item must be an object with a string question")
                question = qa["question"]
            cat = qa.get("category")
            if type(cat) is int:  # the dataset's own spelling: checked and converted at once
                code = str(cat)
            elif isinstance(cat, bool) or not isinstance(cat, int | str):
                where = f"$[{ci}].qa[{qi}].category"
                raise IngestError(source, where, f"category must be an integer code, got {cat!r}")
            else:
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
                    # The cached property, computed here: every join reads it for every question.
                    "question_id": f"{sample_id}-q{qi}",
                }
            )
            if not adversarial:
                position += 1
    # What LocomoQuestion(**row) gives, without its frozen __init__ per question (about 2,000 of them).
    return LocomoDataset(tuple(build_objects(LocomoQuestion, rows)), source, sha256)


class _Conversation(msgspec.Struct):
    """What :func:`parse_locomo` reads of a conversation; the dialogue, most of the file, is only checked as JSON."""

    sample_id: Any = msgspec.UNSET
    conversation: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    qa: Any = msgspec.UNSET


_CONVERSATIONS = msgspec.json.Decoder(list[_Conversation])


def dataset_json(raw: bytes) -> list[dict[str, Any]] | None:
    """A locomo10.json file as :func:`parse_locomo` reads it, decoded without the dialogues; else None.

    Each conversation keeps ``sample_id`` and ``qa``; ``conversation`` is None. None for anything that is not
    a list of conversations with all three keys, is not valid JSON or holds an integer beyond 64 bits (which
    parsers read differently): parse such a file as usual.
    """
    body = raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw
    if not valid_utf8(body):  # the dialogues are stepped over unread
        return None
    try:
        convs = _CONVERSATIONS.decode(body)
    except (msgspec.DecodeError, RecursionError):
        return None
    unset = msgspec.UNSET
    if not convs or any(c.sample_id is unset or c.conversation is unset or c.qa is unset for c in convs):
        return None
    data = [{"sample_id": c.sample_id, "conversation": None, "qa": c.qa} for c in convs]
    try:
        orjson.dumps(data)  # orjson writes no integer beyond 64 bits (and reads such as floats, json as integers)
    except orjson.JSONEncodeError:
        return None
    return data


def load_locomo(path: Path, rel: str | None = None) -> LocomoDataset:
    """Read and index locomo10.json; raise :class:`IngestError` for a missing, unreadable or malformed file."""
    name = rel or str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise IngestError(name, "$", f"cannot be read: {exc.strerror}") from exc
    data: Any = dataset_json(raw)
    if data is None:
        try:
            data = json.loads(raw.decode("utf-8-sig"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise IngestError(name, "$", f"not valid JSON: {exc}", "re-download locomo10.json") from exc
    return parse_locomo(data, name, hashlib.sha256(raw).hexdigest())


def find_locomo(root: Path) -> Path | None:
    """The shallowest ``locomo10.json`` (or ``locomo.json``) under root whose content is the dataset."""
    candidates: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        candidates.extend(Path(dirpath) / n for n in filenames if n in ("locomo10.json", "locomo.json"))
    for path in sorted(candidates, key=lambda p: (len(p.parts), str(p))):
        try:
            raw = path.read_bytes()
            data = dataset_json(raw)
            if data is None:
                data = json.loads(raw.decode("utf-8-sig"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
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


def _conv_of(q: QaQuestion, sample_ids: frozenset[str]) -> str | None:
    if q.conversation is None:
        return None
    if q.conversation in sample_ids:
        return q.conversation
    if q.conversation.isdigit() and int(q.conversation) < len(SAMPLE_IDS):
        return SAMPLE_IDS[int(q.conversation)]
    return None


def _same_text(a: str, b: str) -> bool:
    # Most runs copy the dataset's text verbatim: equal strings need no normalising.
    return a == b or normalize_text(a) == normalize_text(b)


def _updated(q: QaQuestion, update: dict[str, Any]) -> QaQuestion:
    """``q.model_copy(update=update)`` for field updates, without pydantic's generic copy machinery.

    The same result (shallow copy, updated fields marked as set, no validation) at a fraction of the cost
    per question.
    """
    m = QaQuestion.__new__(QaQuestion)
    d = q.__dict__.copy()
    d.update(update)
    extra = q.__pydantic_extra__
    fields_set = set(q.__pydantic_fields_set__)
    fields_set.update(update)
    object.__setattr__(m, "__dict__", d)
    object.__setattr__(m, "__pydantic_extra__", None if extra is None else extra.copy())
    object.__setattr__(m, "__pydantic_fields_set__", fields_set)
    object.__setattr__(m, "__pydantic_private__", None)
    return m


_JOINED_FIELDS = frozenset(
    (
        "question_id",
        "conversation",
        "question_index",
        "question",
        "category",
        "category_name",
        "gold_evidence_ids",
        "gold_answer",
    )
)
"""The fields :func:`join` sets on a joined question."""


def _copies(
    dicts: list[dict[str, Any]], extras: list[dict[str, Any] | None], fields_sets: list[set[str]]
) -> list[QaQuestion]:
    """Questions with these states, as :func:`_updated` builds them one at a time (no Python code per object)."""
    return build_objects(
        QaQuestion,
        dicts,
        ("__pydantic_extra__", extras),
        ("__pydantic_fields_set__", fields_sets),
        ("__pydantic_private__", [None] * len(dicts)),
    )


def _match(q: QaQuestion, ds: LocomoDataset, conv: str | None, taken: set[str]) -> tuple[LocomoQuestion, str] | str:
    """The dataset question for q and the key used, or a reason string when nothing matches."""
    hit = ds.by_id.get(q.question_id)
    if hit is not None and _CANONICAL.match(q.question_id):
        return (hit, "question_id") if not q.question or _same_text(hit.question, q.question) else "text-mismatch"
    if conv is not None and q.question_index is not None:
        hit = ds.by_id.get(f"{conv}-q{q.question_index}")
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
        hits = ds.by_text.get((conv, key), []) if conv is not None else ds.by_text_any.get(key, [])
        free = [h for h in hits if h.question_id not in taken]
        if free:
            return free[0], "question_text"
    return "no-match"


_KEYS = ("question_id", "conversation+index", "conversation+position", "question_text")
"""The keys :func:`join` matches by, in the order it tries them."""


def _join_whole(questions: list[QaQuestion], ds: LocomoDataset) -> tuple[str, int] | None:
    """:func:`join`'s loop over owned questions that all match by one id shape, without Python code per question.

    The common case: all canonical ids, or all provisional positional ids without a ``qa`` index; every text
    empty or exactly the dataset's, no dataset question matched twice. Then writes what the loop writes and
    returns the key and the number of category conflicts. Otherwise returns None, having written nothing:
    the loop decides (other keys, texts equal only once normalised, duplicates, a repeated conversation).
    """
    dicts = list(map(DICT_OF, questions))
    ids = list(map(itemgetter("question_id"), dicts))
    hits = list(map(ds.by_canonical_id.get, ids))
    key = "question_id"
    if not all(map(is_not, hits, repeat(None))):
        if any(map(is_not, hits, repeat(None))) or any(
            map(is_not, map(itemgetter("question_index"), dicts), repeat(None))
        ):
            return None
        hits = list(map(ds.by_positional_id.get, ids))
        if not all(map(is_not, hits, repeat(None))):
            return None
        key = "conversation+position"
    matched = cast(list[LocomoQuestion], hits)
    texts = list(map(itemgetter("question"), dicts))
    if texts != list(map(_QUESTION_OF, hits)) and not all(
        map(or_, map(not_, texts), map(eq, texts, map(_QUESTION_OF, hits)))
    ):
        return None
    hids = list(map(_QUESTION_ID_OF, hits))
    if len(set(hids)) != len(hids) or not all(map(is_, map(ds.by_id.__getitem__, hids), hits)):
        return None
    categories = list(map(itemgetter("category"), dicts))
    conflicts = 0
    if categories != list(map(CATEGORY_OF, hits)):
        conflicts = sum(map(and_, map(is_not, categories, repeat(None)), map(ne, categories, map(CATEGORY_OF, hits))))
    deque(map(dict.update, dicts, map(ds.joined_fields.__getitem__, hids)), 0)
    for k in compress(range(len(dicts)), map(not_, texts)):
        dicts[k]["question"] = matched[k].question
    if None in map(itemgetter("gold_answer"), dicts):
        for k in compress(range(len(dicts)), map(is_, map(itemgetter("gold_answer"), dicts), repeat(None))):
            dicts[k]["gold_answer"] = matched[k].answer
    deque(map(set.update, map(FIELDS_SET_OF, questions), repeat(_JOINED_FIELDS)), 0)
    return key, conflicts


_QUESTION_OF = attrgetter("question")
_QUESTION_ID_OF = attrgetter("question_id")
_EVIDENCE_OF = attrgetter("evidence")


def join(run: QaRun, ds: LocomoDataset, *, owned: bool = False) -> tuple[QaRun, JoinReport]:
    """Match every question of a LoCoMo run to locomo10.json and fill in what the dataset knows.

    Keys, tried in order: the canonical ``conv-N-qI`` id; conversation + raw ``qa`` index;
    conversation + position among non-category-5 questions (``conv-N-fP`` ids); question text
    within the conversation (anywhere when the question has no conversation id; repeated texts
    match in order - locomo10.json repeats texts only within a conversation). Id and position
    matches must agree with the question text when the run has one.
    Joined questions get the canonical id, conversation, raw index, the dataset's category code
    and memeval's name for it, gold evidence ids and (when missing) the gold answer.

    ``owned``: the run's questions are the caller's alone (just imported, referenced nowhere else), so the
    joined values are written into them instead of into copies; ``run`` must not be used afterwards.
    """
    n = len(run.questions)
    if owned and (whole := _join_whole(run.questions, ds)) is not None:
        key, conflicts = whole
        report = JoinReport(
            total=n,
            joined=n,
            by_key={k: n if k == key else 0 for k in _KEYS},
            unmatched=(),
            text_mismatches=0,
            category_conflicts=conflicts,
            duplicates=0,
        )
        return run.model_copy(update={"questions": list(run.questions)}), report
    sample_ids = ds.sample_ids
    taken: set[str] = set()
    by_key: Counter[str] = Counter()
    unmatched: list[str] = []
    lost: set[int] = set()  # positions in out of the unmatched questions
    text_mismatches = conflicts = duplicates = 0
    out: list[QaQuestion] = []
    # Joined questions are copies with the dataset's fields (what ``q.model_copy(update=...)`` gives: shallow
    # copy, updated fields marked as set, no validation), built together at the end (see _copies).
    at: list[int] = []
    dicts: list[dict[str, Any]] = []
    extras: list[dict[str, Any] | None] = []
    fields_sets: list[set[str]] = []
    canonical, positional = ds.by_canonical_id, ds.by_positional_id
    for q in run.questions:
        # What _match finds for the two common id shapes, inline (one lookup each); everything else goes there.
        qd = q.__dict__
        qid, text = qd["question_id"], qd["question"]
        found: tuple[LocomoQuestion, str] | str
        if (hit := canonical.get(qid)) is not None:
            found = (
                (hit, "question_id")
                if not text or text == hit.question or _same_text(hit.question, text)
                else "text-mismatch"
            )
        elif (
            qd["question_index"] is None
            and (hit := positional.get(qid)) is not None
            and (not text or _same_text(hit.question, text))
        ):
            found = (hit, "conversation+position")
        else:
            found = _match(q, ds, _conv_of(q, sample_ids), taken)
        if isinstance(found, str):
            text_mismatches += found == "text-mismatch"
            unmatched.append(q.question_id)
            lost.add(len(out))
            out.append(q)
            continue
        hit, key = found
        hid = hit.question_id
        if hid in taken:
            duplicates += 1
            unmatched.append(q.question_id)
            lost.add(len(out))
            out.append(q)
            continue
        taken.add(hid)
        by_key[key] += 1
        if q.category is not None and q.category != hit.category:
            conflicts += 1
        d = qd if owned else qd.copy()
        fields = ds.joined_fields[hid]
        if ds.by_id[hid] is not hit:  # a dataset that repeats a conversation id: this question's own values
            fields = {
                "question_id": hid,
                "conversation": hit.sample_id,
                "question_index": hit.qa_index,
                "category": hit.category,
                "category_name": CATEGORY_NAMES.get(hit.category),
                "gold_evidence_ids": list(hit.evidence),
            }
        d.update(fields)
        if not d["question"]:
            d["question"] = hit.question
        if d["gold_answer"] is None:
            d["gold_answer"] = hit.answer
        out.append(q)
        if owned:
            q.__pydantic_fields_set__.update(_JOINED_FIELDS)
            continue
        extra = q.__pydantic_extra__
        at.append(len(out) - 1)  # q is replaced by its copy below
        dicts.append(d)
        extras.append(None if extra is None else extra.copy())
        fields_sets.append(q.__pydantic_fields_set__ | _JOINED_FIELDS)
    copies = _copies(dicts, extras, fields_sets)
    if len(copies) == len(out):
        out = copies
    else:
        for i, c in zip(at, copies, strict=True):
            out[i] = c
    ids = Counter(q.question_id for q in out)
    if len(ids) != len(out):
        # An unmatched question kept a provisional id that a joined one now uses: keep the run's ids unique.
        # Only the unmatched question is renamed: the joined one keeps its canonical id.
        clash = {i for i, c in ids.items() if c > 1} & set(unmatched)
        out = [
            _updated(q, {"question_id": f"unjoined:{q.question_id}"}) if k in lost and q.question_id in clash else q
            for k, q in enumerate(out)
        ]
    report = JoinReport(
        total=n,
        joined=sum(by_key.values()),
        by_key={k: by_key[k] for k in _KEYS},
        unmatched=tuple(unmatched),
        text_mismatches=text_mismatches,
        category_conflicts=conflicts,
        duplicates=duplicates,
    )
    return run.model_copy(update={"questions": out}), report


def iter_questions(ds: LocomoDataset, include_adversarial: bool) -> Iterator[LocomoQuestion]:
    """The dataset's questions a complete run must answer."""
    return (q for q in ds.questions if include_adversarial or q.category != ADVERSARIAL)
