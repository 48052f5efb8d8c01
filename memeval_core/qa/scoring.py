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

The code here works on whole columns (:func:`score_columns`); ``tests/_qa_oracle.py`` holds the same rules
question by question, the readable oracle the tests hold it to.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from memeval_core.errors import IngestError
from memeval_core.qa import locomo
from memeval_core.qa.columns import Columns
from memeval_core.qa.models import Verdict

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
    """A run's aggregates, all re-derived from its questions (the per-question scores: :func:`score_columns`)."""

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


# ------------------------------------------------------------------ the rules over columns
#
# The load scores a run held as columns (:mod:`memeval_core.qa.columns`) and summarises its table without
# building a model or a QuestionScore per question. tests/qa_oracle.py states the same rules question by
# question; tests check that both give the same results on the shared data and on random runs.


def _failures(columns: Columns) -> list[str | None]:
    """Why each question counts as a failure (error, no answer, not judged), or None when it does not."""
    out: list[str | None] = []
    for scored, error, answer, verdicts in zip(
        columns["scored"], columns["error"], columns["answer"], columns["verdicts"], strict=True
    ):
        if not scored:
            out.append(None)
        elif error:
            out.append("error")
        elif answer is None or not answer.strip():
            out.append("no answer")
        else:
            out.append(None if verdicts else "not judged")
    return out


def _verdict_values(verdicts: Sequence[Verdict]) -> tuple[float, dict[str, float], bool | None]:
    """(mean rescaled score, rescaled score per judge, strict majority or None) of one question's verdicts."""
    n = len(verdicts)
    if n == 1:  # the common case: one judge
        x = rescale(verdicts[0])
        return x + 0.0, {verdicts[0].judge: x}, None  # fsum([x]) / 1 is x, and turns -0.0 into 0.0
    values = [rescale(v) for v in verdicts]
    per_judge = dict(zip([v.judge for v in verdicts], values, strict=True))
    if n == 0:  # an unscored question may have no verdict
        return 0.0, per_judge, None
    majority = sum(x >= PASS_THRESHOLD - 1e-12 for x in values) * 2 > n
    return math.fsum(values) / n, per_judge, majority


def _abstains(kind: str | None, category: str | None) -> bool:
    """The question is of the GroupMemBench abstention kind (its ``kind``, else its category when no kind is)."""
    return kind == "abstention" or (kind not in GROUPMEMBENCH_KINDS and category == "abstention")


def score_columns(columns: Columns, w: float = 1.0) -> Columns:
    """Every question held as columns, scored (see the module docstring): the score columns of the question table.

    Returns ``failure``, ``score``, ``correct``, ``majority``, ``per_judge`` and ``fama``, one value per question.
    """
    failures = _failures(columns)
    out: Columns = {"failure": failures, "score": [], "correct": [], "majority": [], "per_judge": [], "fama": []}
    rows = zip(failures, columns["verdicts"], columns["kind"], columns["category"], columns["abstained"],
               columns["answer"], columns["mpa"], columns["faa"], strict=True)  # fmt: skip
    for failure, verdicts, kind, category, abstained, answer, mpa, faa in rows:
        if failure is not None:
            out["score"].append(0.0)
            out["correct"].append(False)
            out["majority"].append(False if len(verdicts) >= 2 else None)
            out["per_judge"].append({v.judge: 0.0 for v in verdicts})
            out["fama"].append(0.0)
            continue
        score, per_judge, majority = _verdict_values(verdicts)
        correct = score >= PASS_THRESHOLD - 1e-12
        if _abstains(kind, category):
            correct = abstained if abstained is not None else looks_like_abstention(answer)
            score = 1.0 if correct else 0.0
            majority = correct if majority is not None else None
        out["score"].append(score)
        out["correct"].append(correct)
        out["majority"].append(majority)
        out["per_judge"].append(per_judge)
        out["fama"].append(fama(score if mpa is None else mpa, 1.0 if faa is None else faa, w))
    return out


def _true_count(values: pa.ChunkedArray) -> int:
    return int(pc.sum(values.cast(pa.int64())).as_py() or 0)


def _fmean(values: pa.ChunkedArray) -> float | None:
    """Mean with a correctly rounded sum (``math.fsum``); None when empty."""
    return math.fsum(values.to_pylist()) / len(values) if len(values) else None


def _groups_of(scored: pa.Table, key: pa.ChunkedArray, names: str | None) -> dict[str, GroupScore]:
    """:class:`GroupScore` per non-null ``key`` value of the scored rows, in first-seen order.

    ``names``: the column naming each group after its last row, or None to name a group by its key.
    """
    rows = pa.table({"key": key, "score": scored["score"], "correct": scored["correct"],
                     "name": scored[names] if names else key})  # fmt: skip
    last = pc.ScalarAggregateOptions(skip_nulls=False)
    grouped = rows.filter(pc.is_valid(rows["key"])).group_by("key", use_threads=False)
    stats = grouped.aggregate([("score", "list"), ("correct", "sum"), ("name", "last", last)]).to_pydict()
    return {
        k: GroupScore(name, len(scores), math.fsum(scores) / len(scores), int(n_correct))
        for k, scores, n_correct, name in zip(
            stats["key"], stats["score_list"], stats["correct_sum"], stats["name_last"], strict=True
        )
    }


def _kind_column(table: pa.Table) -> pa.ChunkedArray:
    """The GroupMemBench kind of every row: ``kind`` when it is one, else such a ``category``, else null."""
    kinds = pa.array(GROUPMEMBENCH_KINDS)
    null = pa.scalar(None, pa.string())
    category = pc.if_else(pc.is_in(table["category"], kinds), table["category"], null)
    return pc.if_else(pc.is_in(table["kind"], kinds), table["kind"], category)


def _judge_accuracy_of(scored: pa.Table, judges: Sequence[str], n_failed: int) -> dict[str, float]:
    """Per judge: mean rescaled score over the scored rows it graded that did not fail, plus a 0 per failure."""
    graded = scored.filter(pc.is_null(scored["failure"]))["per_judge"].combine_chunks()
    pairs = pa.table({"judge": graded.keys, "value": graded.items})
    lists = pairs.group_by("judge", use_threads=False).aggregate([("value", "list")]).to_pydict()
    values: dict[str, list[float]] = {j: [] for j in judges}
    for judge, judged in zip(lists["judge"], lists["value_list"], strict=True):
        values[judge] = judged
    # Each failure adds a 0 for every judge: to the count, not to the (correctly rounded) sum.
    return {j: math.fsum(vs) / (len(vs) + n_failed) for j, vs in values.items() if vs or n_failed}


def summarize_table(table: pa.Table) -> RunScore:
    """A run's aggregates from its question table (:data:`memeval_core.qa.table.SCHEMA`), over its columns.

    Accuracy, FAMA and group accuracies are means of question scores (``math.fsum``, correctly rounded);
    majority accuracy is defined only when some scored question has 2+ verdicts; categories are ordered by
    code (numeric codes numerically) and named after their last scored question; kinds follow
    :data:`GROUPMEMBENCH_KINDS`. Counts and groups are computed with ``pyarrow.compute``.
    """
    flat_verdicts = pc.list_flatten(table["verdicts"])
    judges = tuple(pc.unique(pc.struct_field(flat_verdicts, "judge")).to_pylist()) if len(flat_verdicts) else ()
    scored = table.filter(table["scored"])
    n = scored.num_rows
    failures = pc.value_counts(pc.drop_null(scored["failure"])).to_pylist() if n else []
    reasons = {f["values"]: f["counts"] for f in failures}
    n_failed = sum(reasons.values())
    multi = n > 0 and (pc.max(pc.list_value_length(scored["verdicts"])).as_py() or 0) >= 2
    categories = _groups_of(scored, scored["category"], "category_name")
    kinds = _groups_of(scored, _kind_column(scored), None)
    return RunScore(
        n_questions=n,
        n_unscored=table.num_rows - n,
        accuracy=_fmean(scored["score"]),
        correct=_true_count(scored["correct"]),
        majority_accuracy=_true_count(pc.fill_null(scored["majority"], False)) / n if multi else None,
        failures=n_failed,
        failure_reasons=reasons,
        judges=judges,
        per_judge_accuracy=_judge_accuracy_of(scored, judges, n_failed),
        categories={c: categories[c] for c in sorted(categories, key=_code_key)},
        kinds={k: kinds[k] for k in GROUPMEMBENCH_KINDS if k in kinds},
        fama=_fmean(scored["fama"]),
        latency_ms=tuple(pc.drop_null(scored["latency_ms"]).to_pylist()),
    )


def _code_key(code: str) -> tuple[int, int | str]:
    return (0, int(code)) if code.isdigit() else (1, code)


def accuracy_without(ids: Sequence[str], scores: Sequence[float], excluded: Iterable[str]) -> tuple[float | None, int]:
    """Mean of ``scores`` over the questions whose id is not in ``excluded``, and how many were excluded."""
    drop = excluded if isinstance(excluded, set | frozenset) else set(excluded)
    if len(ids) != len(scores):
        raise ValueError(f"{len(ids)} ids but {len(scores)} scores")
    kept = [score for qid, score in zip(ids, scores, strict=True) if qid not in drop]
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


def combine_repeats(scores: Sequence[RunScore]) -> RepeatSummary:
    """Average repeats of one configuration: mean accuracy with std (n - 1), min and max."""
    accs = [s.accuracy for s in scores if s.accuracy is not None]
    return RepeatSummary(
        n=len(scores),
        mean=math.fsum(accs) / len(accs) if accs else None,
        std=statistics.stdev(accs) if len(accs) >= 2 else None,
        min=min(accs) if accs else None,
        max=max(accs) if accs else None,
    )
