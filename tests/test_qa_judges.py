"""Judge accuracy, agreement with intervals, rankings per judge and disagreements: hand-computed and real data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _data import SHARED_DATA, require

from memeval_core.agreement.intervals import agreement_terms, bootstrap, bootstrap_many
from memeval_core.agreement.kappa import cohen_kappa_terms, fleiss_kappa_terms
from memeval_core.qa import judges
from memeval_core.qa.ingest import LoadedRun, QaLoad, load_qa
from memeval_core.qa.models import QaQuestion, QaRun, RunMeta, Verdict

BOOT = {"seed": 20260627, "n_resamples": 2000, "alpha": 0.05}


def _v(judge: str, score: float, scale: str = "binary") -> Verdict:
    return Verdict(judge=judge, score=score, scale=scale)  # type: ignore[arg-type]


def _run(name: str, verdicts: list[list[Verdict]], answers: list[str | None] | None = None) -> LoadedRun:
    answers = answers or ["an answer"] * len(verdicts)
    questions = [
        QaQuestion(
            benchmark="toy",
            question_id=f"q{i}",
            question=f"question {i}",
            gold_answer=f"gold {i}",
            answer=a,
            verdicts=vs,
        )
        for i, (vs, a) in enumerate(zip(verdicts, answers, strict=True))
    ]
    run = QaRun(run=RunMeta(benchmark="toy", system=name), questions=questions)
    return LoadedRun.of(run, f"{name}-id", name, not_publishable_because=("toy",))


def _pair(a: int, b: int) -> list[Verdict]:
    return [_v("A", a), _v("B", b)]


# --- hand-computed ------------------------------------------------------------------------------


def test_agreement_of_two_binary_judges_by_hand() -> None:
    # A: 1 1 0 0, B: 1 0 0 0 -> p_o = 3/4; p_e = 1/2*1/4 + 1/2*3/4 = 1/2; Cohen = (3/4 - 1/2) / (1/2) = 1/2.
    # Fleiss: P̄ = 3/4, p_1 = 3/8, P_e = 9/64 + 25/64 = 34/64, kappa = (48/64 - 34/64) / (30/64) = 7/15.
    # Krippendorff nominal: n = 8, within = 2, expected = 64 - 9 - 25 = 30, alpha = 1 - 7 * 2 / 30 = 8/15.
    run = _run("x", [_pair(1, 1), _pair(1, 0), _pair(0, 0), _pair(0, 0)])
    rep = judges.agreement(judges.verdict_matrix([run]), **BOOT)
    assert (rep.n_items, rep.n_complete, rep.n_unanimous, rep.graded) == (4, 4, 3, False)
    assert rep.raw_agreement.estimate == pytest.approx(0.75)
    assert rep.unanimity.estimate == pytest.approx(0.75)
    (pair,) = rep.pairs
    assert (pair.judge_a, pair.judge_b, pair.n_items, pair.agreement) == ("A", "B", 4, 0.75)
    assert pair.kappa.estimate == pytest.approx(0.5)
    assert rep.fleiss_kappa.estimate == pytest.approx(7 / 15)
    assert rep.krippendorff_alpha_nominal.estimate == pytest.approx(8 / 15)
    assert rep.krippendorff_alpha_interval is None
    assert (rep.seed, rep.n_resamples, rep.alpha) == (20260627, 2000, 0.05)
    rows = judges.agreement_rows(rep)
    assert [r["statistic"] for r in rows] == [
        "raw_agreement",
        "unanimity",
        "cohen_kappa",
        "fleiss_kappa",
        "krippendorff_alpha_nominal",
    ]
    assert rows[2]["judges"] == "A vs B"


def test_accuracy_per_judge_counts_failures_as_zero() -> None:
    # q3 has no answer: 0 under both judges although both verdicts say 1.
    run = _run("x", [_pair(1, 1), _pair(1, 0), _pair(0, 0), _pair(1, 1)], ["a", "b", "c", None])
    acc = {a.judge: a for a in judges.judge_accuracy(run)}
    assert (acc["A"].n, acc["A"].n_graded, acc["A"].accuracy, acc["A"].pass_rate) == (4, 4, 0.5, 0.5)
    assert acc["B"].accuracy == 0.25
    assert run.score.per_judge_accuracy == {"A": 0.5, "B": 0.25}
    # Agreement uses what the judges said, failed or not: q3's verdicts agree.
    assert judges.agreement(judges.verdict_matrix([run]), **BOOT).n_unanimous == 3


def test_graded_judges_get_interval_alpha_and_pass_fail_kappa() -> None:
    # Rubric 0-5 rescaled by /5; pass at >= 3. Unit scores as is.
    run = _run(
        "g",
        [
            [_v("A", 5, "rubric-0-5"), _v("B", 0.9, "unit")],
            [_v("A", 3, "rubric-0-5"), _v("B", 0.2, "unit")],
            [_v("A", 1, "rubric-0-5"), _v("B", 0.1, "unit")],
        ],
    )
    m = judges.verdict_matrix([run])
    assert m.graded
    np.testing.assert_allclose(m.scores, [[1.0, 0.9], [0.6, 0.2], [0.2, 0.1]])
    np.testing.assert_array_equal(m.passes, [[1, 1], [1, 0], [0, 0]])
    rep = judges.agreement(m, **BOOT)
    assert rep.krippendorff_alpha_interval is not None
    # Interval alpha by hand: values 1, .9, .6, .2, .2, .1 (n = 6); within = Σ_u 2(v1-v2)^2 / 1 = 2(.01+.16+.01) = .36;
    # Σ_{i≠j}(vi-vj)^2 = 2(n S2 - S1^2) = 2(6*2.26 - 3^2) = 9.12; alpha = 1 - 5 * .36 / 9.12.
    assert rep.krippendorff_alpha_interval.estimate == pytest.approx(1 - 5 * 0.36 / 9.12)
    (d,) = judges.disagreements(run)
    assert (d.question_id, d.verdicts, d.passed_by, d.failed_by) == ("q1", {"A": 3.0, "B": 0.2}, ("A",), ("B",))
    assert d.spread == pytest.approx(0.4)
    assert (d.question, d.gold_answer, d.answer) == ("question 1", "gold 1", "an answer")


def _rankings(runs: list[LoadedRun]) -> tuple[judges.JudgeRanking, ...]:
    """:func:`judges.ranking` of every panel with two or more runs, as the judges page ranks them."""
    return tuple(judges.ranking(members, **BOOT) for members in judges.panels(runs).values() if len(members) >= 2)


def test_ranking_detects_a_leader_change_by_hand() -> None:
    x = _run("x", [_pair(1, 1), _pair(1, 0)])  # A 1.0, B 0.5
    y = _run("y", [_pair(1, 1), _pair(0, 1)])  # A 0.5, B 1.0
    z = _run("z", [_pair(0, 0), _pair(0, 0)])  # A 0.0, B 0.0
    (rk,) = _rankings([x, y, z])
    assert rk.panel == "toy: A, B"
    assert rk.rank == {"A": {"x-id": 1, "y-id": 2, "z-id": 3}, "B": {"x-id": 2, "y-id": 1, "z-id": 3}}
    assert rk.run_ids == ("x-id", "y-id", "z-id")
    (pair,) = rk.pairs
    assert rk.leader_changed and pair.changes.leaders_a == ("x-id",) and pair.changes.leaders_b == ("y-id",)
    assert pair.changes.swapped_pairs == (("x-id", "y-id"),)
    # One discordant pair of three: tau_b = (2 - 1) / 3.
    assert pair.changes.tau_b == pytest.approx(1 / 3)
    assert pair.tau_interval is not None and pair.tau_interval.estimate == pytest.approx(1 / 3)
    same = _rankings([x, z])[0]
    assert not same.leader_changed and same.pairs[0].tau_interval is None


def test_runs_of_different_panels_are_not_ranked_together() -> None:
    x = _run("x", [_pair(1, 1)])
    other = _run("o", [[_v("A", 1), _v("C", 1)]])
    assert _rankings([x, other]) == ()
    with pytest.raises(ValueError, match="different panels"):
        judges.ranking([x, other], **BOOT)
    single = _run("s", [[_v("A", 1)]])
    assert not judges.is_multi_judge(single)
    assert list(judges.panels([x, single])) == [("toy", None, ("A", "B"))]


def test_agreement_needs_two_judges() -> None:
    with pytest.raises(ValueError, match="at least two judges"):
        judges.agreement(judges.verdict_matrix([_run("s", [[_v("A", 1)]])]), **BOOT)


# --- real data ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def qa() -> QaLoad:
    return load_qa(require(SHARED_DATA))


def _named(load: QaLoad, name: str) -> LoadedRun:
    (run,) = [r for r in load.runs if r.display_name == name]
    return run


@pytest.mark.parametrize(
    ("version", "fleiss", "unanimous"),
    [("v1", 0.9589069526, 1522), ("v2", 0.9610801912, 1498)],
)
def test_locomo_audit_three_verdicts(qa: QaLoad, version: str, fleiss: float, unanimous: int) -> None:
    run = _named(qa, f"ap-baseline (ap-baseline/{version})")
    m = judges.verdict_matrix([run])
    assert m.judges == ("judgment_1", "judgment_2", "judgment_3") and m.scores.shape == (1540, 3)
    rep = judges.agreement(m, **BOOT)
    assert rep.fleiss_kappa.estimate == pytest.approx(fleiss, abs=1e-10)
    assert rep.fleiss_kappa.estimate == pytest.approx(fleiss_kappa_terms(m.passes).value(), abs=1e-15)
    assert (rep.n_items, rep.n_unanimous) == (1540, unanimous)
    assert rep.unanimity.estimate == pytest.approx(unanimous / 1540)
    # Binary verdicts: Krippendorff's nominal alpha is Fleiss' kappa with a small-sample correction.
    assert rep.krippendorff_alpha_nominal.estimate == pytest.approx(fleiss, abs=1e-4)
    assert rep.fleiss_kappa.low < rep.fleiss_kappa.estimate < rep.fleiss_kappa.high
    assert len(judges.disagreements(run)) == 1540 - unanimous


def test_shared_weights_give_the_same_intervals_as_one_bootstrap_per_statistic(qa: QaLoad) -> None:
    m = judges.verdict_matrix([_named(qa, "ap-baseline (ap-baseline/v2)")])
    p = m.passes
    rep = judges.agreement(m, seed=7, n_resamples=300, alpha=0.1)
    for name, got in (
        ("raw_agreement", rep.raw_agreement),
        ("unanimity", rep.unanimity),
        ("fleiss_kappa", rep.fleiss_kappa),
        ("krippendorff_alpha_nominal", rep.krippendorff_alpha_nominal),
    ):
        assert got == bootstrap(agreement_terms(p, name), seed=7, n_resamples=300, alpha=0.1)  # type: ignore[arg-type]
    assert rep.pairs[2].kappa == bootstrap(cohen_kappa_terms(p[:, 1], p[:, 2]), seed=7, n_resamples=300, alpha=0.1)
    # Statistics over different item counts in one call still match their own bootstrap.
    terms = [agreement_terms(p, "fleiss_kappa"), agreement_terms(p[:100], "fleiss_kappa")]
    many = bootstrap_many(terms, seed=3, n_resamples=200, alpha=0.05)
    assert many == tuple(bootstrap(t, seed=3, n_resamples=200, alpha=0.05) for t in terms)
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_many(terms, seed=3, n_resamples=0, alpha=0.05)


def test_locomo_audit_accuracy_per_judge(qa: QaLoad) -> None:
    acc = {a.judge: a.accuracy for a in judges.judge_accuracy(_named(qa, "ap-baseline (ap-baseline/v2)"))}
    assert acc == pytest.approx({"judgment_1": 970 / 1540, "judgment_2": 962 / 1540, "judgment_3": 970 / 1540})


def test_cognitive_memory_judge_reliability(qa: QaLoad) -> None:
    run = _named(qa, "cognitive_memory (judge reliability current_sdk_20260505)")
    rep = judges.agreement(judges.verdict_matrix([run]), **BOOT)
    (pair,) = rep.pairs
    assert (pair.judge_a, pair.judge_b, pair.n_items, pair.agreement) == ("original", "alt", 50, 0.94)
    assert round(pair.kappa.estimate, 4) == 0.8792
    assert pair.kappa.low < 0.8792 < pair.kappa.high <= 1.0
    again = judges.agreement(judges.verdict_matrix([run]), **BOOT)
    assert (again.pairs[0].kappa.low, again.pairs[0].kappa.high) == (pair.kappa.low, pair.kappa.high)
    assert [(a.judge, a.accuracy) for a in judges.judge_accuracy(run)] == [("original", 0.58), ("alt", 0.52)]
    assert [d.question_id for d in judges.disagreements(run)] == ["conv-41-q7", "conv-47-q125", "conv-26-q144"]


def test_evolving_events_leader_changes_between_the_two_graded_judges(qa: QaLoad) -> None:
    runs = [r for r in qa.runs if r.meta.benchmark == "evolving-events"]
    assert len(runs) == 12
    (rk,) = _rankings(runs)
    assert rk.judges == ("deepeval_correctness", "directllm_correctness")
    (pair,) = rk.pairs
    names = rk.display_names
    assert [names[r] for r in pair.changes.leaders_a] == ["mflow (topk5_gpt54)"]
    assert [names[r] for r in pair.changes.leaders_b] == ["mflow (topk10_gpt54)"]
    assert rk.leader_changed
    # 3 of 66 run pairs swap order: tau_b = (63 - 3) / 66.
    assert (len(pair.changes.swapped_pairs), pair.changes.n_pairs) == (3, 66)
    assert pair.changes.tau_b == pytest.approx(60 / 66)
    assert pair.tau_interval is not None and pair.tau_interval.low < 60 / 66 <= pair.tau_interval.high
    top = next(r for r in runs if r.display_name == "mflow (topk10_gpt54)")
    assert rk.accuracy["directllm_correctness"][top.run_id] == pytest.approx(0.977)
    assert rk.accuracy["deepeval_correctness"][top.run_id] == pytest.approx(0.6543732360, abs=1e-9)
    # Graded judges: interval alpha on the scores; one cognee answer lacks the deepeval verdict (not an item).
    pooled = judges.agreement(judges.verdict_matrix(runs), **BOOT)
    assert (pooled.n_items, pooled.n_complete, pooled.graded) == (1199, 1199, True)
    assert pooled.krippendorff_alpha_interval is not None
    assert not math.isnan(pooled.krippendorff_alpha_interval.estimate)


def test_single_judge_runs_have_no_panel(qa: QaLoad) -> None:
    keys = {judges.panel_label(k): len(v) for k, v in judges.panels(qa.runs).items()}
    assert keys == {
        "evolving-events: deepeval_correctness, directllm_correctness": 12,
        "locomo (without category 5): judgment_1, judgment_2, judgment_3": 2,
        "locomo (without category 5): alt, original": 1,
    }
