"""Per-question correctness from judge verdicts, and the aggregates built from it.

Per verdict, the raw score is rescaled to [0, 1]: ``binary`` as is, ``rubric-0-5`` as ``score / 5``,
``unit`` as is. A verdict *passes* when its rescaled score is >= :data:`PASS_THRESHOLD` (0.6, i.e.
>= 3 on the 0-5 rubric; a binary verdict passes when it is 1).

Per question (several judges, or repeated runs of one judge):

- ``score`` = mean of the rescaled scores of its verdicts (the accuracy contribution);
- ``majority`` = more than half of its verdicts pass (ties fail); None with fewer than 2 verdicts;
- ``correct`` = ``score >= 0.6``: the pass/fail used by paired significance tests.

A question that is *failed* - no answer (missing or blank), an error flagged by the harness, or no
verdict at all although it is in the scored set - scores 0 under every judge and stays in the
denominator. Questions with ``scored=False`` (outside the harness's declared protocol, e.g.
ungraded LoCoMo category 5) are kept but excluded from every denominator.

GroupMemBench kinds (multi_hop, knowledge_update, temporal, user_implicit, term_ambiguity,
abstention) are aggregated separately; a question of kind ``abstention`` is correct only when the
system abstained (``abstained``, or, when the harness does not record it, an answer that says it does
not know - :func:`looks_like_abstention`), whatever the judges said.

Run accuracy = mean question score over scored questions. Repeats of one configuration are
combined by :func:`combine_repeats` (mean with std, min and max across repeats).
"""

from __future__ import annotations

import json
import math
import pickle
import re
import statistics
from collections import Counter, defaultdict, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, chain, compress, count, repeat
from operator import add, attrgetter, eq, is_not, itemgetter, not_, truediv
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from memeval_core.errors import IngestError
from memeval_core.qa import lazy, locomo
from memeval_core.qa.getters import DICT_OF
from memeval_core.qa.models import QaQuestion, QaRun, Verdict

T = TypeVar("T")

PASS_THRESHOLD = 0.6
"""Rescaled score at or above which a verdict or question counts as correct (3 of 5 on the rubric)."""

GROUPMEMBENCH_KINDS: tuple[str, ...] = (
    "multi_hop",
    "knowledge_update",
    "temporal",
    "user_implicit",
    "term_ambiguity",
    "abstention",
)
"""GroupMemBench question kinds, always reported separately."""

_ABSTAIN = re.compile(
    r"\b(i\s+(do\s*n[o']?t|cannot|can't)\s+know|not\s+(mentioned|specified|stated|available|provided)|"
    r"no\s+(information|record|mention)|unknown|cannot\s+be\s+determined|unanswerable|"
    r"(do\s*n[o']?t|does\s*n[o']?t)\s+have\s+(enough\s+)?information)\b",
    re.IGNORECASE,
)


def rescale(v: Verdict) -> float:
    """A verdict's score in [0, 1]: binary and unit as is, rubric 0-5 divided by 5."""
    return v.score / 5.0 if v.scale == "rubric-0-5" else v.score


def passes(v: Verdict) -> bool:
    """The verdict counts as correct: rescaled score >= 0.6."""
    return rescale(v) >= PASS_THRESHOLD - 1e-12


def looks_like_abstention(answer: str | None) -> bool:
    """An answer that declines to answer ("I don't know", "not mentioned", "no information", ...)."""
    return answer is not None and bool(_ABSTAIN.search(answer))


def fama(mpa: float, faa: float = 1.0, w: float = 1.0) -> float:
    """Memora's forgetting-aware memory accuracy of one answer: ``max(0, MPA - w * (1 - FAA))``.

    MPA (memory-point accuracy, [0, 1]): how much of the currently valid memory the answer gets
    right. FAA (forgetting-aware adherence, [0, 1]): the share of the question's forgetting criteria
    the answer respects, i.e. how far it avoids obsolete or invalidated memories; 1 when the
    question declares no forgetting criteria. ``w`` (default 1) weighs the penalty for relying on
    invalidated memory.
    """
    return max(0.0, mpa - w * (1.0 - faa))


def failure_reason(q: QaQuestion) -> str | None:
    """Why a scored question counts as a failure (``no answer``, ``error``, ``not judged``), or None."""
    if not q.scored:
        return None
    if q.error:
        return "error"
    if q.answer is None or not q.answer.strip():
        return "no answer"
    if not q.verdicts:
        return "not judged"
    return None


def kind_of(q: QaQuestion) -> str | None:
    """The question's GroupMemBench kind: ``kind``, else the category when it names a kind."""
    if q.kind in GROUPMEMBENCH_KINDS:
        return q.kind
    return q.category if q.category in GROUPMEMBENCH_KINDS else None


@dataclass(frozen=True)
class QuestionScore:
    """One question, scored."""

    question_id: str
    """Question id."""
    category: str | None
    """Raw category code."""
    scored: bool
    """In the accuracy denominator."""
    failure: str | None
    """Why it counts as a failure (scores 0), or None."""
    score: float
    """Mean rescaled verdict score in [0, 1] (0 for failures)."""
    correct: bool
    """``score >= 0.6`` (abstention kind: the system abstained)."""
    majority: bool | None
    """Strict majority of verdicts pass; None with fewer than 2 verdicts (failures: False)."""
    per_judge: dict[str, float]
    """Rescaled score per judge name (failures: 0 for every judge of the question)."""
    fama: float
    """FAMA with MPA = ``mpa`` or the question score, FAA = ``faa`` or 1, w = 1."""


_new = object.__new__
_set = object.__setattr__


def _question_score(
    question_id: str,
    category: str | None,
    scored: bool,
    failure: str | None,
    score: float,
    correct: bool,
    majority: bool | None,
    per_judge: dict[str, float],
    fama: float,
) -> QuestionScore:
    """``QuestionScore(...)`` without the frozen dataclass's one ``object.__setattr__`` call per field."""
    s = _new(QuestionScore)
    _set(
        s,
        "__dict__",
        {
            "question_id": question_id,
            "category": category,
            "scored": scored,
            "failure": failure,
            "score": score,
            "correct": correct,
            "majority": majority,
            "per_judge": per_judge,
            "fama": fama,
        },
    )
    return s


def score_question(q: QaQuestion, w: float = 1.0) -> QuestionScore:
    """Score one question (see the module docstring for the rules)."""
    verdicts = q.verdicts
    n = len(verdicts)
    # failure_reason(q), inline: this runs once per question of every run.
    failure: str | None = None
    if q.scored:
        answer = q.answer
        if q.error:
            failure = "error"
        elif answer is None or not answer.strip():
            failure = "no answer"
        elif not n:
            failure = "not judged"
    if failure is not None:
        per_judge = {v.judge: 0.0 for v in verdicts}
        majority_failed = False if n >= 2 else None
        return _question_score(
            q.question_id, q.category, q.scored, failure, 0.0, False, majority_failed, per_judge, 0.0
        )
    majority: bool | None
    if n == 1:
        # The common case: one judge. fsum([x]) / 1 is x (a negative zero becomes 0.0, as fsum does).
        v = verdicts[0]
        x = v.score / 5.0 if v.scale == "rubric-0-5" else v.score
        per_judge = {v.judge: x}
        score = x + 0.0
        majority = None
    else:
        values = [v.score / 5.0 if v.scale == "rubric-0-5" else v.score for v in verdicts]
        per_judge = dict(zip([v.judge for v in verdicts], values, strict=True))
        score = math.fsum(values) / n if n else 0.0
        majority = sum(x >= PASS_THRESHOLD - 1e-12 for x in values) * 2 > n if n >= 2 else None
    correct = score >= PASS_THRESHOLD - 1e-12
    if (q.kind == "abstention" or q.category == "abstention") and kind_of(q) == "abstention":
        abstained = q.abstained if q.abstained is not None else looks_like_abstention(q.answer)
        correct = abstained
        score = 1.0 if abstained else 0.0
        majority = abstained if majority is not None else None
    mpa = q.mpa if q.mpa is not None else score
    faa = q.faa
    # fama(mpa, faa or 1, w), inline.
    fama_value = max(0.0, mpa - w * (1.0 - (faa if faa is not None else 1.0)))
    return _question_score(q.question_id, q.category, q.scored, None, score, correct, majority, per_judge, fama_value)


@dataclass(frozen=True)
class GroupScore:
    """Accuracy of a group of questions (a category or a GroupMemBench kind)."""

    name: str | None
    """Display name (memeval's convention for LoCoMo codes)."""
    n: int
    """Scored questions in the group."""
    accuracy: float | None
    """Mean question score; None for an empty group."""
    correct: int
    """Questions with ``correct``."""


@dataclass(frozen=True)
class RunScore:
    """A run's aggregates, all re-derived from its questions."""

    questions: tuple[QuestionScore, ...]
    """Every question (scored or not), in run order."""
    n_questions: int
    """Scored questions (the denominator)."""
    n_unscored: int
    """Questions kept but outside the denominator (``scored=False``)."""
    accuracy: float | None
    """Mean question score over scored questions (mean over judges); None without scored questions."""
    correct: int
    """Scored questions with ``correct``."""
    majority_accuracy: float | None
    """Share of scored questions whose verdicts pass by strict majority; None unless a question has 2+ verdicts."""
    failures: int
    """Scored questions that failed (no answer, error, not judged); each scored 0."""
    failure_reasons: dict[str, int]
    """Failures per reason."""
    judges: tuple[str, ...]
    """Judge names in first-seen order."""
    per_judge_accuracy: dict[str, float]
    """Per judge: mean rescaled score over scored questions it graded plus all failures."""
    categories: dict[str, GroupScore]
    """Raw category code -> group accuracy (scored questions only)."""
    kinds: dict[str, GroupScore]
    """GroupMemBench kind -> group accuracy, for kinds present in the run."""
    fama: float | None
    """Mean FAMA over scored questions."""
    latency_ms: tuple[float, ...] = field(default=())
    """Per-question end-to-end latencies that the run records."""

    @property
    def n_judges(self) -> int:
        """Number of distinct judges."""
        return len(self.judges)

    # ``questions`` is built on first read. A fresh score (:func:`score_run`) holds the per-question
    # values as columns (:class:`_ScoreColumns`); an unpickled one (the warm-start cache, worker processes)
    # holds one packed blob (see :mod:`memeval_core.qa.lazy`). Either sits in the ``_packed`` slot until
    # ``questions`` is first read, which builds the tuple once (under the pack's lock, whatever the number
    # of threads); the aggregates are plain fields. Dataclass equality, repr, ``replace`` and ``asdict``
    # read fields as attributes, so they build the questions first.
    __slots__ = ("__dict__", "_packed")

    def __reduce__(self) -> tuple[Any, ...]:
        # The pack first: an unpack in another thread swaps in the full __dict__ before it drops the pack.
        pack = lazy.packed_of(self, _PACKED_SLOT)
        d = self.__dict__.copy()
        if isinstance(pack, _ScoreColumns):
            blob = pickle.dumps((_COLUMNS, pack.columns), protocol=pickle.HIGHEST_PROTOCOL)
        elif pack is None:
            if next(iter(d), None) != lazy.QUESTIONS:
                # Not the layout the dataclass builds: pickle the state as it is.
                return (_restore_plain_score, (type(self), d))
            blob = _pack_scores(d[lazy.QUESTIONS]).blob
        else:
            blob = pack.blob
        head = {k: v for k, v in d.items() if k != lazy.QUESTIONS}
        return (_restore_score, (type(self), head, blob))

    if not TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            if name == lazy.QUESTIONS:
                pack = lazy.packed_of(self, _PACKED_SLOT)
                load = pack.load if isinstance(pack, _ScoreColumns) else _load_scores
                return lazy.unpack(self, _PACKED_SLOT, load, first=True)
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


_PACKED_SLOT: Any = RunScore.__dict__["_packed"]
_DICTS = "dicts"
_PLAIN = "plain"
_COLUMNS = "columns"

_Columns = tuple[
    Sequence[str],  # question_id
    Sequence[str | None],  # category
    Sequence[bool],  # scored
    Sequence[str | None] | None,  # failure (None: no question failed)
    Sequence[float],  # score
    Sequence[bool],  # correct
    Sequence[bool | None],  # majority
    Sequence[float],  # fama
    Sequence[int],  # verdict pattern of each question: see _patterns
    Sequence[int],  # the patterns, in first-seen order
    Sequence[Sequence[str]],  # per pattern: the judge of each verdict
    Sequence[Sequence[float]],  # per pattern: the rescaled score of each verdict
]
"""A run's per-question scores as columns: what :func:`score_run` computes, and :class:`QuestionScore` is built from."""


class _ScoreColumns(lazy.Packed):
    """The per-question scores of a fresh :class:`RunScore`, as columns, until ``questions`` is first read."""

    __slots__ = ("columns",)

    def __init__(self, columns: _Columns) -> None:
        super().__init__(b"")
        self.columns = columns
        """Never changed: a reader holding this pack sees the same values as the built questions."""

    def load(self, _blob: bytes) -> tuple[QuestionScore, ...]:
        """The questions (called by :func:`lazy.unpack`, once, under the pack's lock)."""
        return _build_scores(self.columns)


def scores_packed(score: RunScore) -> bool:
    """The run's per-question scores are still packed (unpickled and not read since).

    A fresh score from :func:`score_run` keeps them as columns until first read: not packed.
    """
    pack = lazy.packed_of(score, _PACKED_SLOT)
    return pack is not None and not isinstance(pack, _ScoreColumns)


def _columns_of(score: RunScore) -> _Columns | None:
    """The columns of a fresh score whose questions were not built yet, else None."""
    pack = lazy.packed_of(score, _PACKED_SLOT)
    return pack.columns if isinstance(pack, _ScoreColumns) else None


def _pack_scores(questions: tuple[QuestionScore, ...]) -> lazy.Packed:
    if type(questions) is tuple and all(type(s) is QuestionScore for s in questions):
        data: tuple[str, Any] = (_DICTS, [s.__dict__ for s in questions])
    else:
        data = (_PLAIN, questions)
    return lazy.Packed(pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))


def _load_scores(blob: bytes) -> tuple[QuestionScore, ...]:
    kind, data = pickle.loads(blob)
    if kind == _PLAIN:
        plain: tuple[QuestionScore, ...] = data
        return plain
    if kind == _COLUMNS:
        return _build_scores(data)
    return tuple(lazy.build_objects(QuestionScore, data))


def _build_scores(columns: _Columns) -> tuple[QuestionScore, ...]:
    """One :class:`QuestionScore` per question, equal to what :func:`score_question` gives, from the columns."""
    ids, categories, scored, failure, score, correct, majority, fama_values, pattern, patterns, judges, values = columns
    n = len(ids)
    per_judge: list[dict[str, float]] = _spread(list(map(dict, map(zip, judges, values))), patterns, pattern, n)
    if len(patterns) < n:  # spread shares one dict between the questions of a pattern: each gets its own
        per_judge = list(map(dict, per_judge))
    if failure is None:
        failure = [None] * n
    else:
        # A failed question scores 0 under each of its judges.
        judges_of = dict(zip(patterns, judges, strict=True))
        for i in compress(range(n), map(is_not, failure, repeat(None))):
            per_judge[i] = dict.fromkeys(judges_of[pattern[i]], 0.0)
    # A dict display per question: the fastest way to build the attribute dicts (no Python code per object after).
    dicts = [
        {
            "question_id": i,
            "category": c,
            "scored": s,
            "failure": f,
            "score": x,
            "correct": ok,
            "majority": m,
            "per_judge": pj,
            "fama": y,
        }
        for i, c, s, f, x, ok, m, pj, y in zip(
            ids, categories, scored, failure, score, correct, majority, per_judge, fama_values, strict=True
        )
    ]
    return tuple(lazy.build_objects(QuestionScore, dicts))


def _restore_plain_score(cls: type[RunScore], state: dict[str, Any]) -> RunScore:
    score = object.__new__(cls)
    object.__setattr__(score, "__dict__", state)
    return score


def _restore_score(cls: type[RunScore], head: dict[str, Any], blob: bytes) -> RunScore:
    """Unpickle a :class:`RunScore` whose per-question scores stay packed until first read."""
    score = object.__new__(cls)
    object.__setattr__(score, "__dict__", head)
    _PACKED_SLOT.__set__(score, lazy.Packed(blob))
    return score


_PASS = PASS_THRESHOLD - 1e-12
_ZERO = 0.0
_KIND_SET = frozenset(GROUPMEMBENCH_KINDS)
_QUESTION_FIELDS = (
    "question_id",
    "category",
    "scored",
    "error",
    "answer",
    "verdicts",
    "kind",
    "mpa",
    "faa",
    "latency_ms",
)
_VERDICT_FIELDS = ("judge", "score", "scale")


def _columns(objs: Sequence[Any], names: tuple[str, ...]) -> list[Sequence[Any]]:
    """``[[o.<name> for o in objs] for name in names]``: one C-level pass over the objects' ``__dict__``."""
    try:
        rows = list(map(itemgetter(*names), map(DICT_OF, objs)))
    except (KeyError, TypeError):  # not the plain model layout: read the attributes
        rows = list(map(attrgetter(*names), objs))
    return list(zip(*rows, strict=True)) if rows else [()] * len(names)


def _split(flat: Sequence[T], nv: Sequence[int], lo: int, hi: int) -> list[tuple[T, ...]]:
    """``flat`` cut into consecutive tuples of ``nv[i]`` items (``lo``, ``hi``: the least and greatest count)."""
    if lo == hi:
        return list(zip(*[iter(flat)] * lo, strict=True)) if lo else [()] * len(nv)
    offsets = list(accumulate(nv, initial=0))
    return list(map(tuple, map(flat.__getitem__, map(slice, offsets, offsets[1:]))))


def _spread(per_pattern: Sequence[T], patterns: Sequence[int], pattern: Sequence[int], n: int) -> list[T]:
    """Per question, the value of its pattern (``per_pattern`` follows ``patterns``; see :func:`_patterns`)."""
    if len(patterns) == n:  # every question a pattern of its own
        return list(per_pattern)
    at: list[Any] = [None] * n
    deque(map(at.__setitem__, patterns, per_pattern), 0)
    return list(map(at.__getitem__, pattern))


def _patterns(lists: Sequence[Sequence[Verdict]], nv: Sequence[int], lo: int, hi: int) -> tuple[list[int], list[int]]:
    """Group the questions by verdict pattern: the very same verdict objects, in the same order.

    Importers share equal verdicts, so a run has few patterns, and whatever the verdicts decide (score,
    majority, per judge) is computed once per pattern. A pattern is named by the position of its first
    question. Returns the pattern of each question, and the patterns in first-seen order.
    """
    ids = map(id, chain.from_iterable(lists))  # the objects stay alive meanwhile: ids are unique
    first: dict[Any, int] = {}
    keys: Iterable[Any] = ids if lo == hi == 1 else _split(list(ids), nv, lo, hi)
    pattern = list(map(first.setdefault, keys, count()))
    return pattern, list(first.values())


def _rescaled(verdicts: Sequence[Verdict]) -> tuple[Sequence[str], Sequence[float]]:
    """Judge and rescaled score (:func:`rescale`) of each verdict."""
    judges, raw, scales = _columns(verdicts, _VERDICT_FIELDS)
    if "rubric-0-5" in scales:
        return judges, [x / 5.0 if c == "rubric-0-5" else x for x, c in zip(raw, scales, strict=True)]
    return judges, raw


def _all_answered(answers: Sequence[str | None]) -> bool:
    """No answer is missing or blank (``not answer.strip()``: empty or all whitespace)."""
    return all(answers) and not any(map(str.isspace, answers))  # type: ignore[arg-type]


def _positions(keys: Sequence[str | None]) -> dict[str | None, list[int]]:
    """Positions of each key, keys in first-seen order."""
    out: defaultdict[str | None, list[int]] = defaultdict(list)
    deque(map(list.append, map(out.__getitem__, keys), range(len(keys))), 0)
    return out


def _judge_means(
    judges: Sequence[str],
    judges_p: Sequence[tuple[str, ...]],
    values_p: Sequence[tuple[float, ...]],
    times_p: Sequence[int],
    zeros: int,
) -> dict[str, float]:
    """Per judge, the mean of its per_judge values: pattern ``i`` counts ``times_p[i]`` times; plus ``zeros`` 0s."""
    if any(len(set(t)) < len(t) for t in set(judges_p)):
        # A judge named twice in one question: per_judge keeps its last value (at the first name's place).
        dicts = list(map(dict, map(zip, judges_p, values_p)))
        judges_p, values_p = list(map(tuple, dicts)), list(map(tuple, map(dict.values, dicts)))
    each = list(chain.from_iterable(map(repeat, times_p, map(len, judges_p))))  # per verdict: times counted
    js, xs = list(chain.from_iterable(judges_p)), list(chain.from_iterable(values_p))
    values: dict[str, list[float]] = {j: [] for j in judges}
    at = values.__getitem__
    deque(map(list.append, map(at, compress(js, each)), compress(xs, each)), 0)  # once...
    if max(each, default=0) > 1:  # ...and the further times, for verdicts of a shared pattern
        more = [t - 1 if t > 1 else 0 for t in each]
        deque(map(list.extend, map(at, compress(js, more)), map(repeat, compress(xs, more), compress(more, more))), 0)
    if zeros:
        for vs in values.values():
            vs.extend(repeat(0.0, zeros))
    return {j: math.fsum(vs) / len(vs) for j, vs in values.items() if vs}


def _present(values: Sequence[float | None]) -> tuple[float, ...]:
    """The values that are not None, in order."""
    missing = values.count(None)
    if missing == len(values):
        return ()
    if not missing:
        return tuple(values)  # type: ignore[arg-type]
    return tuple(compress(values, map(is_not, values, repeat(None))))  # type: ignore[arg-type]


def _group_at(ix: Sequence[int], name: str | None, scores: Sequence[float], correct: Sequence[bool]) -> GroupScore:
    """``GroupScore`` of the questions at ``ix`` (built like :func:`_question_score`: no ``__setattr__`` per field)."""
    group = _new(GroupScore)
    _set(
        group,
        "__dict__",
        {
            "name": name,
            "n": len(ix),
            "accuracy": math.fsum(map(scores.__getitem__, ix)) / len(ix),
            "correct": sum(map(correct.__getitem__, ix)),
        },
    )
    return group


def score_run(run: QaRun, w: float = 1.0) -> RunScore:
    """Score every question and aggregate (accuracy, majority, failures, per judge, per category, per kind).

    Columnar: every per-question value is computed over the whole run at once (C-level passes; Python
    steps only per verdict pattern and for the rare failed and abstention questions), and the aggregates
    come from those columns. ``questions`` is built from them on first read, equal to
    :func:`score_question` of each question.
    """
    qs = run.questions
    n_all = len(qs)
    ids, categories, scored, errors, answers, verdicts, kinds, mpas, faas, latencies = _columns(qs, _QUESTION_FIELDS)
    nv = list(map(len, verdicts))
    lo = hi = nv[0] if nv else 0
    if nv.count(lo) < n_all:
        lo, hi = min(nv), max(nv)

    # What the verdicts decide, once per pattern (as score_question does per question).
    pattern, patterns = _patterns(verdicts, nv, lo, hi)
    nv_p = list(map(nv.__getitem__, patterns))
    lo_p, hi_p = min(nv_p, default=0), max(nv_p, default=0)
    flat_judges, flat_values = _rescaled(list(chain.from_iterable(map(verdicts.__getitem__, patterns))))
    judges_p, values_p = _split(flat_judges, nv_p, lo_p, hi_p), _split(flat_values, nv_p, lo_p, hi_p)
    if lo_p == hi_p == 1:
        score_p = list(map(add, flat_values, repeat(0.0)))  # the mean of x alone: x + 0.0, as fsum([x]) / 1
    else:
        score_p = list(map(truediv, map(math.fsum, values_p), nv_p if lo_p else [k or 1 for k in nv_p]))
    majority: list[bool | None] = [None] * n_all
    if hi_p >= 2:
        passing = map(sum, _split(list(map(_PASS.__le__, flat_values)), nv_p, lo_p, hi_p))
        majority_p = [c * 2 > k if k >= 2 else None for c, k in zip(passing, nv_p, strict=True)]
        majority = _spread(majority_p, patterns, pattern, n_all)
    score = _spread(score_p, patterns, pattern, n_all)
    correct = _spread(list(map(_PASS.__le__, score_p)), patterns, pattern, n_all)

    failure: list[str | None] | None = None
    if any(errors) or not lo or not _all_answered(answers):
        # Some question may have failed (an error, a missing or blank answer, no verdict): failure_reason(q) of each.
        failure = [
            (
                ("error" if e else "no answer" if a is None or not a.strip() else None if k else "not judged")
                if s
                else None
            )
            for s, e, a, k in zip(scored, errors, answers, nv, strict=True)
        ]
        if failure.count(None) == n_all:
            failure = None
    failed = [] if failure is None else list(compress(range(n_all), map(is_not, failure, repeat(None))))

    kind_of_q: list[str | None] | None = None
    if not ((kinds.count(None) == n_all or _KIND_SET.isdisjoint(kinds)) and _KIND_SET.isdisjoint(categories)):
        kind_of_q = [
            k if k in _KIND_SET else c if c in _KIND_SET else None for k, c in zip(kinds, categories, strict=True)
        ]
        # Abstention kind: correct only when the system abstained, whatever the judges said.
        for i in compress(range(n_all), map(eq, kind_of_q, repeat("abstention"))):
            if failure is None or failure[i] is None:
                abstained = qs[i].abstained
                if abstained is None:
                    abstained = looks_like_abstention(answers[i])
                correct[i] = abstained
                score[i] = 1.0 if abstained else 0.0
                if majority[i] is not None:
                    majority[i] = abstained
    for i in failed:
        score[i], correct[i], majority[i] = 0.0, False, (False if nv[i] >= 2 else None)

    # fama(mpa or score, faa or 1, w).
    if mpas.count(None) == n_all and faas.count(None) == n_all:
        penalty = w * (1.0 - 1.0)
        if penalty == 0.0 and all(map(_ZERO.__le__, score_p)):
            # max(0.0, s - 0.0) is s for every s >= 0 (never -0.0: a mean is x + 0.0 or fsum / n), and the
            # abstention and failure scores (1.0, 0.0) are >= 0 too.
            fama_values = list(score)
        else:
            fama_values = [max(0.0, s - penalty) for s in score]
    else:
        fama_values = [
            max(0.0, (m if m is not None else s) - w * (1.0 - (f if f is not None else 1.0)))
            for s, m, f in zip(score, mpas, faas, strict=True)
        ]
    for i in failed:
        fama_values[i] = 0.0

    # Aggregates over the scored questions. math.fsum is correctly rounded: the order of values does not matter.
    every = all(scored)

    def pick(col: Sequence[T]) -> Sequence[T]:
        return col if every else list(compress(col, scored))

    score_s, correct_s = pick(score), pick(correct)
    n = len(score_s)
    reasons = dict(Counter(filter(None, pick(failure)))) if failure is not None else {}
    n_failed = sum(reasons.values())

    # Per judge: its values in the per_judge of each scored question that did not fail, and a 0 per failure.
    run_judges = tuple(dict.fromkeys(flat_judges))  # first-seen order over every question
    ok: Sequence[bool] | None = None if every else scored
    if failure is not None:
        ok = [bool(s) and f is None for s, f in zip(scored, failure, strict=True)]
    if ok is None and len(patterns) == n_all:
        times_p = [1] * len(patterns)
    elif len(patterns) <= 4:  # a few patterns: count each (the names are the very objects in ``pattern``)
        times_p = list(map((pattern if ok is None else list(compress(pattern, ok))).count, patterns))
    else:
        tally = Counter(pattern if ok is None else compress(pattern, ok))
        times_p = list(map(tally.get, patterns, repeat(0)))
    per_judge = _judge_means(run_judges, judges_p, values_p, times_p, n_failed)

    cats = _positions(pick(categories))
    positions = range(n_all) if every else list(compress(range(n_all), scored))
    groups: dict[str, GroupScore] = {}
    for c in sorted((c for c in cats if c is not None), key=_code_key):
        ix = cats[c]  # named after the category's last scored question, as before
        groups[c] = _group_at(ix, qs[positions[ix[-1]]].category_name, score_s, correct_s)
    kind_groups: dict[str, GroupScore] = {}
    if kind_of_q is not None:
        by_kind = _positions(pick(kind_of_q))
        kind_groups = {k: _group_at(by_kind[k], k, score_s, correct_s) for k in GROUPMEMBENCH_KINDS if k in by_kind}

    multi = hi >= 2 if every else max(pick(nv), default=0) >= 2
    head = {
        "n_questions": n,
        "n_unscored": n_all - n,
        "accuracy": math.fsum(score_s) / n if n else None,
        "correct": sum(correct_s),
        "majority_accuracy": sum(map(bool, pick(majority))) / n if n and multi else None,
        "failures": n_failed,
        "failure_reasons": reasons,
        "judges": run_judges,
        "per_judge_accuracy": per_judge,
        "categories": groups,
        "kinds": kind_groups,
        "fama": math.fsum(pick(fama_values)) / n if n else None,
        "latency_ms": _present(pick(latencies)),
    }
    columns: _Columns = (
        ids,
        categories,
        scored,
        failure,
        score,
        correct,
        majority,
        fama_values,
        pattern,
        patterns,
        judges_p,
        values_p,
    )
    out = object.__new__(RunScore)
    object.__setattr__(out, "__dict__", head)
    _PACKED_SLOT.__set__(out, _ScoreColumns(columns))
    return out


def _code_key(code: str) -> tuple[int, int | str]:
    return (0, int(code)) if code.isdigit() else (1, code)


def accuracy_excluding(score: RunScore, excluded: Iterable[str]) -> tuple[float | None, int]:
    """Accuracy over scored questions whose id is not in ``excluded``, and how many were excluded."""
    return accuracy_without(*scored_scores(score), excluded)


def scored_scores(score: RunScore) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """Id and score of every scored question, in run order (what :func:`accuracy_without` needs).

    A fresh score answers from its columns: the questions are not built.
    """
    columns = _columns_of(score)
    if columns is not None:
        ids, _, scored, _, values = columns[:5]
        if all(scored):
            return tuple(ids), tuple(values)
        return tuple(compress(ids, scored)), tuple(compress(values, scored))
    kept = [s for s in score.questions if s.scored]
    return tuple([s.question_id for s in kept]), tuple([s.score for s in kept])


def accuracy_without(ids: Sequence[str], scores: Sequence[float], excluded: Iterable[str]) -> tuple[float | None, int]:
    """Mean of ``scores`` over the questions whose id is not in ``excluded``, and how many were excluded."""
    drop = excluded if isinstance(excluded, set | frozenset) else set(excluded)
    if len(ids) != len(scores):
        raise ValueError(f"{len(ids)} ids but {len(scores)} scores")
    # Runs once per LoCoMo run at the end of a load, after the workers are done: no Python per question.
    dropped = list(map(drop.__contains__, ids))
    kept = list(compress(scores, map(not_, dropped))) if True in dropped else list(scores)
    return (math.fsum(kept) / len(kept) if kept else None), len(ids) - len(kept)


def is_disputed_list(data: object) -> bool:
    """True for locomo-audit's ``errors.json`` layout: records with question_id, error_type, correct_answer."""
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(x, dict) and "question_id" in x and "error_type" in x for x in data)
    )


def parse_disputed(data: object, source: str) -> frozenset[str]:
    """Canonical LoCoMo ids (``conv-26-q1``) of the questions locomo-audit disputes (``locomo_<c>_qa<i>``)."""
    if not is_disputed_list(data):
        raise IngestError(source, "$", "not a locomo-audit errors.json: expected records with question_id, error_type")
    assert isinstance(data, list)
    out: set[str] = set()
    for i, rec in enumerate(data):
        m = re.match(r"^locomo_(\d+)_qa(\d+)$", str(rec["question_id"]))
        if not m or int(m[1]) >= len(locomo.SAMPLE_IDS):
            raise IngestError(source, f"$[{i}].question_id", f"unexpected id {rec['question_id']!r}")
        out.add(locomo.question_id(int(m[1]), int(m[2])))
    return frozenset(out)


def load_disputed(path: Path) -> frozenset[str]:
    """Read locomo-audit ``errors.json`` (156 disputed gold answers) into canonical question ids."""
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise IngestError(str(path), "$", f"cannot be read as JSON: {exc}") from exc
    return parse_disputed(data, str(path))


@dataclass(frozen=True)
class RepeatSummary:
    """Accuracy over repeats of one configuration."""

    n: int
    """Repeats combined."""
    mean: float | None
    """Mean of the repeats' accuracies."""
    std: float | None
    """Sample standard deviation (n - 1); None for fewer than 2 repeats."""
    min: float | None
    """Lowest repeat accuracy."""
    max: float | None
    """Highest repeat accuracy."""
    per_question: dict[str, float]
    """Question id -> mean score over the repeats that contain it."""


def combine_repeats(scores: Sequence[RunScore], per_question: bool = True) -> RepeatSummary:
    """Average repeats of one configuration: mean accuracy with std (n - 1), min, max; per-question means.

    ``per_question=False`` leaves ``per_question`` empty and reads no per-question scores.
    """
    accs = [s.accuracy for s in scores if s.accuracy is not None]
    per_q: dict[str, list[float]] = {}
    for s in scores if per_question else ():
        for qid, x in zip(*scored_scores(s), strict=True):
            per_q.setdefault(qid, []).append(x)
    return RepeatSummary(
        n=len(scores),
        mean=math.fsum(accs) / len(accs) if accs else None,
        std=statistics.stdev(accs) if len(accs) >= 2 else None,
        min=min(accs) if accs else None,
        max=max(accs) if accs else None,
        per_question={k: math.fsum(v) / len(v) for k, v in per_q.items()},
    )
