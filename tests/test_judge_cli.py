"""``python -m memeval_core judge`` against the local stand-in: results, cache, resume, limits, errors, no key leaks."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memeval_core.cli import main
from memeval_core.judge.lineup import rejudge_of
from memeval_core.qa.judges import judge_accuracy
from memeval_core.results import load_qa_results
from tests.judge_standin import KEY, MODEL, StandIn, rule, write_tiny_run

ROOT = Path(__file__).resolve().parents[1]
JUDGE = f"{MODEL}/mem0-locomo"


@pytest.fixture
def standin(monkeypatch: pytest.MonkeyPatch) -> Iterator[StandIn]:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", "off")
    with StandIn() as s:
        yield s


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    write_tiny_run(results)
    return results


def judge(capsys: pytest.CaptureFixture[str], s: StandIn, results: Path, *extra: str) -> tuple[int, str, str]:
    argv = ["judge", "--results", str(results), "--model", MODEL, "--base-url", s.url, "--tries", "2", *extra]
    if "--run" not in extra:
        argv += ["--benchmark", "locomo"]
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def judged_file(results: Path) -> dict[str, Any]:
    (path,) = (results / "judged").glob("*.json")
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def last_line(err: str) -> str:
    return err.strip().splitlines()[-1]


# ------------------------------------------------------------------ the shared mem0 LoCoMo run


def test_rejudging_the_shared_mem0_run_gives_the_rules_accuracy(
    shared_data: Path, standin: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = load_qa_results(shared_data, None).runs
    mem0 = next(r for r in runs if r.meta.system == "mem0" and r.meta.benchmark == "locomo")
    assert mem0.score.n_questions == 1540
    out_dir = tmp_path / "judged"
    args = ["--run", mem0.run_id, "--out", str(out_dir), "--concurrency", "16"]
    code, out, _ = judge(capsys, standin, shared_data, *args)
    assert code == 0
    pairs = [(q, s) for q, s in zip(mem0.run.questions, mem0.question_scores, strict=True) if s.scored]
    correct = sum(s.failure is None and rule(q.gold_answer or "", q.answer or "") for q, s in pairs)
    expected = correct / mem0.score.n_questions
    distinct = {(q.question, q.gold_answer, q.answer) for q, s in pairs if s.failure is None}
    assert standin.calls == len(distinct)

    reloaded = load_qa_results(out_dir, shared_data / "locomo" / "data").runs
    (run,) = reloaded
    by_judge = {a.judge: a for a in judge_accuracy(run)}
    assert by_judge[JUDGE].accuracy == expected and by_judge[JUDGE].n == 1540
    assert by_judge["llm_score"].accuracy == mem0.score.accuracy  # the original judge is carried over unchanged
    assert f"accuracy {expected:.4f} under {JUDGE} (published {mem0.score.accuracy:.4f})" in out
    block = rejudge_of(run)
    assert block is not None and block["original_run_id"] == mem0.run_id
    assert (block["model"], block["base_url"], block["prompt"]) == (MODEL, standin.url, "mem0-locomo")
    assert block["calls"] == len(distinct) and block["cache_hits"] == 0 and block["memeval_version"]

    # A second run makes no call: every verdict comes from the cache.
    code, out, err = judge(capsys, standin, shared_data, *args)
    assert code == 0 and standin.calls == len(distinct)
    assert f"calls 0 | cache hits {len(distinct)}" in last_line(err)


# ------------------------------------------------------------------ cache, resume, concurrency


def test_resume_after_sigkill_loses_nothing_and_repeats_no_stored_call(tmp_path: Path) -> None:
    results = tmp_path / "results"
    write_tiny_run(results, n=300)
    env = {**os.environ, "OPENAI_API_KEY": KEY, "MEMEVAL_CACHE_DIR": "off", "PYTHONPATH": str(ROOT)}
    with StandIn(delay=0.01) as s:
        argv = [sys.executable, "-m", "memeval_core", "judge", "--results", str(results), "--benchmark", "locomo"]
        argv += ["--model", MODEL, "--base-url", s.url, "--concurrency", "4"]
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while s.answered < 100 and time.monotonic() < deadline:
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        first = list(s.judged)
        with sqlite3.connect(results / "judged" / "judge-cache.sqlite") as db:
            stored = db.execute("SELECT count(*) FROM verdicts").fetchone()[0]
        assert 0 < stored < 300 and 0 <= len(first) - stored <= 4  # at most the calls under way were lost
        calls_before = s.calls
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
        resumed = s.judged[len(first) :]
    assert s.calls - calls_before == 300 - stored  # nothing stored is asked again
    assert len(set(resumed)) == len(resumed) and set(first) | set(resumed) == {
        (f"the answer number {i}", f"number {i}" if i % 2 == 0 else "nothing") for i in range(300)
    }
    doc = judged_file(results)
    new = [v for q in doc["questions"] for v in q.get("verdicts", []) if v["judge"] == JUDGE]
    assert len(new) == 300  # each verdict once
    assert sum(v["score"] for v in new) == 150


def test_concurrency_stays_within_the_bound(standin: StandIn, tiny: Path, capsys: pytest.CaptureFixture[str]) -> None:
    standin.delay = 0.05
    code, _, _ = judge(capsys, standin, tiny, "--concurrency", "5")
    assert code == 0 and standin.calls == 40
    assert 2 <= standin.peak <= 5


def test_repeats_are_separate_verdicts(standin: StandIn, tiny: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = judge(capsys, standin, tiny, "--repeats", "3")
    assert code == 0 and standin.calls == 120
    q0 = judged_file(tiny)["questions"][0]
    assert [v["judge"] for v in q0["verdicts"]] == ["original", f"{JUDGE}#1", f"{JUDGE}#2", f"{JUDGE}#3"]


def test_failed_and_unscored_questions_are_not_judged(
    standin: StandIn, tiny: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert judge(capsys, standin, tiny)[0] == 0
    questions = {q["question_id"]: q for q in judged_file(tiny)["questions"]}
    assert questions["conv-99-qfail"].get("verdicts", []) == []
    assert questions["conv-99-qout"].get("verdicts", []) == []
    assert [v["score"] for v in questions["conv-99-q1"]["verdicts"]] == [1.0, 0.0]


def test_unparsed_verdicts_are_kept_raw_and_never_counted(
    standin: StandIn, tiny: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    standin.faults.extend(["unparsable", "unparsable"])
    code, out, _ = judge(capsys, standin, tiny, "--concurrency", "1")
    assert code == 0 and "2 unparsed" in out
    unparsed = [q for q in judged_file(tiny)["questions"] if "unparsed_verdicts" in q]
    assert [u["unparsed_verdicts"] for u in unparsed] == [[{"judge": JUDGE, "raw": "I am not able to tell."}]] * 2
    assert all(JUDGE not in [v["judge"] for v in q["verdicts"]] for q in unparsed)


def test_dry_run_counts_calls_and_cost_and_sends_nothing(
    standin: StandIn, tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({MODEL: {"input": 1.0, "output": 2.0}}), encoding="utf-8")
    code, out, _ = judge(capsys, standin, tiny, "--dry-run", "--prices", str(prices))
    assert code == 0 and standin.calls == 0
    assert out.splitlines()[-1].startswith(f"dry run: 40 calls to {MODEL} at {standin.url}, estimated $0.0")
    assert "40 answers x 1 = 40 verdicts, 0 cached, 40 calls" in out
    judge(capsys, standin, tiny, "--prices", str(prices))
    code, out, _ = judge(capsys, standin, tiny, "--dry-run", "--prices", str(prices))
    assert "40 cached, 0 calls, estimated $0.0000" in out


def test_max_cost_stops_before_it_is_exceeded(
    standin: StandIn, tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({MODEL: {"input": 100.0, "output": 100.0}}), encoding="utf-8")
    code, _, err = judge(capsys, standin, tiny, "--prices", str(prices), "--max-cost", "0.5", "--concurrency", "3")
    assert code == 1
    message = last_line(err)
    assert message.startswith("error: stopped before exceeding --max-cost $0.5000 (spent $0.")
    spent = float(message.split("(spent $")[1].split(")")[0])
    assert 0 < spent <= 0.5 and 0 < standin.calls < 40
    assert f"{standin.calls} of 40 verdicts are done and cached" in message
    assert not list((tiny / "judged").glob("*.json"))  # no partial judged run


# ------------------------------------------------------------------ failures: one sentence, exit code, cache kept


def test_429_with_retry_after_is_waited_out(standin: StandIn, tiny: Path, capsys: pytest.CaptureFixture[str]) -> None:
    standin.faults.extend(["429", "500", "drop"])
    code, _, err = judge(capsys, standin, tiny, "--concurrency", "1", "--tries", "4")
    assert code == 0 and "error" not in err and standin.calls == 43


@pytest.mark.parametrize(
    ("fault", "what"),
    [
        ("429", "answered HTTP 429 on all 2 tries"),
        ("500", "answered HTTP 500 on all 2 tries"),
        ("drop", "could not be reached or dropped the connection on all 2 tries"),
        ("malformed", "returned a response that is not valid chat-completions JSON"),
    ],
)
def test_endpoint_failures_stop_with_one_sentence_and_keep_the_cache(
    standin: StandIn, tiny: Path, capsys: pytest.CaptureFixture[str], fault: str, what: str
) -> None:
    standin.retry_after = "0"
    standin.faults.extend(["ok"] * 7)
    standin.always = fault
    code, _, err = judge(capsys, standin, tiny, "--concurrency", "1")
    assert code == 1
    assert last_line(err) == (
        f"error: the judge endpoint {standin.url} (model {MODEL}) {what}; "
        "7 of 40 verdicts are done and cached, rerun to resume"
    )
    assert not list((tiny / "judged").glob("*.json"))  # no partial judged run
    standin.always = None
    calls = standin.calls
    assert judge(capsys, standin, tiny)[0] == 0 and standin.calls - calls == 33


def test_refused_model(standin: StandIn, tiny: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["judge", "--results", str(tiny), "--benchmark", "locomo", "--model", "gpt-x", "--base-url", standin.url]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 1
    assert last_line(err).startswith(
        f"error: the judge endpoint {standin.url} (model gpt-x) answered HTTP 404: it does not serve this model"
    )


def test_bad_key_and_the_key_appears_nowhere(
    standin: StandIn, tiny: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = judge(capsys, standin, tiny)  # the good key: a complete run
    assert code == 0
    wrong = "sk-wrong-" + "K3yThatMustNotLeak" * 2
    monkeypatch.setenv("OPENAI_API_KEY", wrong)
    (tiny / "judged" / "judge-cache.sqlite").unlink()
    for f in (tiny / "judged").glob("judge-cache.sqlite-*"):
        f.unlink()
    code2, out2, err2 = judge(capsys, standin, tiny, "--out", str(tiny / "judged2"))
    assert code2 == 1
    assert "refused the API key (HTTP 401: Incorrect API key provided: ***." in last_line(err2)
    written = b"".join(p.read_bytes() for p in tiny.rglob("*") if p.is_file())
    for key in (KEY, wrong):
        assert key not in out + err + out2 + err2
        assert key.encode() not in written


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("no-slot", "error: prompt file {p} has no {{answer}} slot; a judge prompt needs"),
        ("no-answers", "error: run tiny-"),
        ("no-run", "error: no QA run under {r} has the id, name or source file 'nope'"),
        ("no-key", "error: set $MY_KEY to the judge endpoint's API key"),
        ("bad-prices", "error: price file {p} cannot be read as JSON"),
        ("cost-without-price", "error: --max-cost needs a price for judge-model; give one in a --prices FILE"),
    ],
)
def test_bad_input_is_one_sentence_and_exit_2(
    standin: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str], setup: str, message: str
) -> None:
    results = tmp_path / "results"
    write_tiny_run(results, answered=setup != "no-answers")
    bad = tmp_path / "bad.txt"
    bad.write_text("Q: {question} G: {gold_answer}", encoding="utf-8")
    extra = {
        "no-slot": ["--prompt", str(bad)],
        "no-answers": [],
        "no-run": ["--run", "nope"],
        "no-key": ["--api-key-env", "MY_KEY", "--base-url", "https://judge.example.test/v1"],
        "bad-prices": ["--prices", str(bad)],
        "cost-without-price": ["--max-cost", "1"],
    }[setup]
    argv = ["judge", "--results", str(results), "--model", MODEL, "--base-url", standin.url]
    argv += ([] if "--run" in extra else ["--benchmark", "locomo"]) + extra
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and standin.calls == 0
    assert len(err.strip().splitlines()) == 1
    assert err.startswith(message.format(p=bad, r=results))
    if setup == "no-answers":
        assert err.strip().endswith("has no answer to judge (no scored question with a non-blank answer)")


def test_a_run_is_picked_by_file(standin: StandIn, tiny: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = judge(capsys, standin, tiny, "--run", str(tiny / "tiny.json"))
    assert code == 0 and standin.calls == 40 and out.startswith(f"tiny: accuracy {20 / 41:.4f} under {JUDGE}")


def test_a_reply_with_half_a_surrogate_pair_is_stored_and_counted(
    standin: StandIn, tiny: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    standin.faults.extend(["surrogate"])
    code, _, err = judge(capsys, standin, tiny, "--concurrency", "1")
    assert code == 0 and "Traceback" not in err
    verdicts = [v for q in judged_file(tiny)["questions"] for v in q.get("verdicts", []) if v["judge"] == JUDGE]
    assert len(verdicts) == standin.answered
