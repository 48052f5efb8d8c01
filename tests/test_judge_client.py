"""The judge client against the local stand-in: retries, Retry-After, every failure as one sentence, no key leaks."""

from __future__ import annotations

import time
import traceback
from collections.abc import Iterator

import pytest

from memeval_core.judge.client import JudgeError, OpenAIJudge, RetryPolicy, public_url, retry_after, scrub
from tests.judge_standin import KEY, MODEL, StandIn

PROMPT = "Question: q\nGold answer: seventh of May\nGenerated answer: It was the seventh.\n\nFirst, provide a short"
FAST = RetryPolicy(attempts=3, base=0.01, cap=0.05)


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn() as s:
        yield s


def judge(s: StandIn, *, key: str = KEY, model: str = MODEL, timeout: float = 5.0) -> OpenAIJudge:
    return OpenAIJudge(model, s.url, key, timeout=timeout, retry=FAST)


def failure(j: OpenAIJudge) -> JudgeError:
    with pytest.raises(JudgeError) as exc:
        j.complete(PROMPT, 50, None)
    return exc.value


def test_a_call_sends_temperature_zero_and_a_seed(standin: StandIn) -> None:
    out = judge(standin).complete(PROMPT, 50, "json_object")
    assert '"label": "CORRECT"' in out.text and out.tokens_in > 0 and out.tokens_out > 0
    (body,) = standin.requests
    assert body["temperature"] == 0 and isinstance(body["seed"], int) and body["max_tokens"] == 50
    assert body["response_format"] == {"type": "json_object"}


def test_429_waits_as_long_as_retry_after_says(standin: StandIn) -> None:
    standin.faults.extend(["429"])
    standin.retry_after = "1"
    j = judge(standin)
    start = time.monotonic()
    assert "CORRECT" in j.complete(PROMPT, 50, None).text
    assert time.monotonic() - start >= 1.0  # the backoff alone would have waited at most 0.05 s
    assert (standin.calls, j.retries) == (2, 1)


def test_500_and_a_dropped_connection_are_retried(standin: StandIn) -> None:
    standin.faults.extend(["500", "drop"])
    j = judge(standin)
    assert "CORRECT" in j.complete(PROMPT, 50, None).text
    assert (standin.calls, j.retries) == (3, 2)


def test_retries_used_up_give_one_sentence(standin: StandIn) -> None:
    standin.always = "500"
    assert str(failure(judge(standin))) == (
        f"the judge endpoint {standin.url} (model {MODEL}) answered HTTP 500 on all 3 tries"
    )
    standin.always = "drop"
    assert str(failure(judge(standin))) == (
        f"the judge endpoint {standin.url} (model {MODEL}) "
        "could not be reached or dropped the connection on all 3 tries"
    )


def test_a_slow_answer_times_out(standin: StandIn) -> None:
    standin.always = "slow"
    standin.slow_seconds = 1.0
    err = failure(judge(standin, timeout=0.2))
    assert str(err).endswith("did not answer within 0.2 s on all 3 tries")


def test_a_retry_after_beyond_the_limit_is_not_waited_for(standin: StandIn) -> None:
    standin.always = "429"
    standin.retry_after = "3600"
    start = time.monotonic()
    assert str(failure(judge(standin))).endswith("answered HTTP 429, and asked to wait 3600 s before retrying")
    assert time.monotonic() - start < 5


def test_malformed_responses_are_not_retried(standin: StandIn) -> None:
    standin.faults.extend(["malformed"])
    err = failure(judge(standin))
    assert str(err).endswith("returned a response that is not valid chat-completions JSON")
    standin.faults.extend(["badshape"])
    assert str(failure(judge(standin))).endswith(
        "returned a response without a message (no choices[0].message.content)"
    )
    assert standin.calls == 2


def test_refused_model_and_bad_key(standin: StandIn) -> None:
    err = failure(judge(standin, model="gpt-nonexistent"))
    assert str(err) == (
        f"the judge endpoint {standin.url} (model gpt-nonexistent) answered HTTP 404: it does not serve this model "
        "or this is not its base URL (The model `gpt-nonexistent` does not exist or you do not have access to it.)"
    )
    wrong = "sk-wrong-" + "K3yThatMustNotLeak" * 2
    err = failure(judge(standin, key=wrong))
    # The stand-in echoes the key it was sent; the message carries *** instead.
    assert str(err) == (
        f"the judge endpoint {standin.url} (model {MODEL}) refused the API key (HTTP 401: Incorrect API key "
        "provided: ***. You can find your API key in your account.)"
    )
    shown = "".join(traceback.format_exception(err)) + repr(err) + repr(err.__context__) + repr(err.__cause__)
    assert wrong not in shown and err.__context__ is None and err.__cause__ is None
    assert standin.calls == 2  # neither is retried


def test_a_server_refusing_seeds_is_called_without_one(standin: StandIn) -> None:
    standin.reject_seed = True
    j = judge(standin)
    assert "CORRECT" in j.complete(PROMPT, 50, None).text
    assert "CORRECT" in j.complete(PROMPT, 50, None).text
    assert j.seed is None and standin.calls == 3 and "seed" not in standin.requests[-1]


def test_urls_lose_their_credentials() -> None:
    assert public_url("https://user:pa55word@example.test:8443/v1/?api-key=abc#x") == "https://example.test:8443/v1"
    assert public_url("http://127.0.0.1:11434/v1/") == "http://127.0.0.1:11434/v1"
    assert scrub("key sk-abcdef and sk-abcdef", ["sk-abcdef", ""]) == "key *** and ***"


def test_retry_after_forms() -> None:
    assert retry_after({"retry-after": "2"}) == 2.0
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert retry_after({}) is None and retry_after({"retry-after": "soon"}) is None


def test_half_a_surrogate_pair_in_a_reply_becomes_a_question_mark(standin: StandIn) -> None:
    standin.faults.extend(["surrogate"])
    out = judge(standin).complete(PROMPT, 50, "json_object")
    assert '"label": "CORRECT"' in out.text and out.text.endswith(" ?")
    out.text.encode("utf-8")  # storable text
