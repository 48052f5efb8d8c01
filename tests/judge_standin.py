"""A local stand-in of an OpenAI-compatible chat-completions server, for the judge's tests and benchmark.

``POST /v1/chat/completions`` on 127.0.0.1 answers each judge prompt with a deterministic verdict from
:func:`rule` (the gold answer and the answer are read back out of the prompt):

- mem0's LoCoMo prompt (and any prompt asking for CORRECT or WRONG): ``{"reason": ..., "label": "CORRECT"}``;
- LongMemEval's prompts (``Answer yes or no only``): ``yes`` or ``no``;
- memeval's 0-5 rubric (``Score: N``): ``Score: 5`` when the rule holds, else ``Score: 1``.

Authentication: a bearer token other than :attr:`StandIn.key` gets 401 whose message *echoes the key it was
sent* (so tests prove memeval scrubs it). A model other than those in :attr:`StandIn.models` gets 404.
Failure injection, per request in arrival order: :attr:`StandIn.faults` (consumed one per request) or
:attr:`StandIn.always` (every request): ``429`` (with ``Retry-After: retry_after``), ``500``, ``malformed``
(200 whose body is not JSON), ``badshape`` (200, JSON without ``choices``), ``drop`` (the connection closes
without an answer), ``slow`` (answers after :attr:`slow_seconds`), ``unparsable`` (a reply with no verdict),
``surrogate`` (the verdict followed by half of a UTF-16 surrogate pair, ``\\ud83d``, which JSON allows).
:attr:`reject_seed` answers 400 to any request carrying ``seed``. :attr:`delay` delays every answer.

Counters: :attr:`calls` (chat requests received), :attr:`answered` (200s with a verdict), :attr:`peak`
(most requests in progress at once), :attr:`judged` (``(gold, answer)`` of every answered call, in order),
:attr:`requests` (each request body without its headers); ``GET /v1/stats`` returns the first three as JSON
(for a stand-in in another process: ``python tests/judge_standin.py [DELAY]`` prints its base URL).
"""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

KEY = "sk-standin-" + "S3cr3tKeyForTests" * 2
"""The key the stand-in accepts (fake, with the shape of a real one so leak scans would find it)."""
MODEL = "judge-model"

_GOLD = ("Gold answer: ", "Correct Answer: ", "Rubric: ", "Explanation: ")
_ANSWER = ("Generated answer: ", "Model Response: ")
_END = ("\n\nFirst, provide a short", "\n\nIs the model response", "\n\nDoes the model", "\n\nScore the generated")
_WORD = re.compile(r"[a-z0-9]+")


def rule(gold: str, answer: str) -> bool:
    """The stand-in's verdict: some word of 3+ characters of the gold answer occurs among the answer's words."""
    answer_words = set(_WORD.findall(answer.lower()))
    return any(len(w) >= 3 and w in answer_words for w in _WORD.findall(gold.lower()))


def extract(prompt: str) -> tuple[str, str]:
    """``(gold, answer)`` read back out of a rendered judge prompt (the last occurrence of each marker)."""
    g_at, g_marker = max((prompt.rfind(m), m) for m in _GOLD)
    a_at, a_marker = max((prompt.rfind(m), m) for m in _ANSWER)
    end = max(prompt.rfind(m) for m in _END)
    if g_at < 0 or a_at < 0:
        raise ValueError("the prompt has no gold answer or no answer marker")
    gold = prompt[g_at + len(g_marker) : a_at].rstrip("\n")
    answer = prompt[a_at + len(a_marker) : end if end > a_at else len(prompt)]
    return gold, answer


def reply(prompt: str) -> str:
    """The stand-in's response text to a judge prompt."""
    gold, answer = extract(prompt)
    ok = rule(gold, answer)
    if "Answer yes or no only" in prompt:
        return "yes" if ok else "no"
    if "Score: N" in prompt:
        return f"The answer {'matches' if ok else 'misses'} the gold answer.\nScore: {5 if ok else 1}"
    reason = "It refers to the same thing." if ok else "It does not match."
    return json.dumps({"reason": reason, "label": "CORRECT" if ok else "WRONG"})


class StandIn:
    """The server; ``with StandIn() as s:`` starts it on a free port and stops it on exit."""

    def __init__(self, *, key: str = KEY, models: tuple[str, ...] = (MODEL,), delay: float = 0.0) -> None:
        self.key = key
        self.models = models
        self.delay = delay
        self.faults: deque[str] = deque()
        self.always: str | None = None
        self.retry_after = "1"
        self.slow_seconds = 5.0
        self.reject_seed = False
        self.calls = 0
        self.answered = 0
        self.peak = 0
        self.in_progress = 0
        self.judged: list[tuple[str, str]] = []
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.server = _Server(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        """Base URL for the OpenAI client (``http://127.0.0.1:PORT/v1``)."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def start(self) -> StandIn:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> StandIn:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def next_fault(self) -> str | None:
        """The fault for the request just received (queued faults first)."""
        with self.lock:
            if self.faults:
                return self.faults.popleft()
            return self.always


class _Server(ThreadingHTTPServer):
    """Quiet about clients that go away mid-request (a killed judge, a timed-out call)."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


def _handler(state: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
            body = json.dumps({"error": {"message": message, "type": "error", "code": status}}).encode()
            self._send(status, body, headers)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/stats"):
                with state.lock:
                    stats = {"calls": state.calls, "answered": state.answered, "peak": state.peak}
                self._send(200, json.dumps(stats).encode())
            else:
                self._error(404, f"no route {self.path}")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._error(404, f"no route {self.path}")
                return
            with state.lock:
                state.calls += 1
                state.requests.append(body)
                state.in_progress += 1
                state.peak = max(state.peak, state.in_progress)
            try:
                self._answer(body)
            finally:
                with state.lock:
                    state.in_progress -= 1

        def _answer(self, body: dict[str, Any]) -> None:
            sent = self.headers.get("Authorization", "").removeprefix("Bearer ")
            if sent != state.key:
                self._error(401, f"Incorrect API key provided: {sent}. You can find your API key in your account.")
                return
            if body.get("model") not in state.models:
                self._error(404, f"The model `{body.get('model')}` does not exist or you do not have access to it.")
                return
            if state.reject_seed and "seed" in body:
                self._error(400, "Unsupported parameter: 'seed' is not supported with this model.")
                return
            fault = state.next_fault()
            time.sleep(state.slow_seconds if fault == "slow" else state.delay)
            if fault == "429":
                self._error(429, "Rate limit reached; slow down.", {"Retry-After": state.retry_after})
            elif fault == "500":
                self._error(500, "The server had an error while processing your request.")
            elif fault == "malformed":
                self._send(200, b'{"id": "x", "choices": [{"message": ')
            elif fault == "badshape":
                self._send(200, json.dumps({"id": "x", "object": "chat.completion"}).encode())
            elif fault == "drop":
                self.close_connection = True
                self.connection.close()
            else:
                prompt = str(body["messages"][-1]["content"])
                text = "I am not able to tell." if fault == "unparsable" else reply(prompt)
                text += " \ud83d" if fault == "surrogate" else ""
                self._complete(body, prompt, text)

        def _complete(self, body: dict[str, Any], prompt: str, text: str) -> None:
            usage = {"prompt_tokens": len(prompt) // 4, "completion_tokens": max(1, len(text) // 4)}
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
            doc = {
                "id": f"chatcmpl-{state.calls}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": usage,
            }
            self._send(200, json.dumps(doc).encode())
            with state.lock:
                state.answered += 1
                if text != "I am not able to tell.":
                    state.judged.append(extract(prompt))

    return Handler


MEMOBASE = "memobase/docs/experiments/locomo-benchmark/fixture/memobase"
"""The two memobase LoCoMo runs of the shared data (small files, 1,540 answers each)."""


def rejudged_results(shared: Path, target: Path, url: str, *, rubric: bool = True) -> Path:
    """Two memobase LoCoMo runs and locomo10.json copied to ``target``, each re-judged by the stand-in at ``url``
    with mem0's prompt and (``rubric``) the 0-5 rubric; ``$OPENAI_API_KEY`` must hold :data:`KEY`."""
    (target / "memobase").mkdir(parents=True)
    (target / "locomo").mkdir()
    for f in sorted((shared / MEMOBASE).glob("memobase_eval_*.json")):
        shutil.copyfile(f, target / "memobase" / f.name)
    shutil.copyfile(shared / "locomo" / "data" / "locomo10.json", target / "locomo" / "locomo10.json")
    from memeval_core.cli import main as memeval

    base = ["judge", "--results", str(target), "--benchmark", "locomo", "--model", MODEL, "--base-url", url]
    assert memeval([*base, "--concurrency", "16"]) == 0
    if rubric:
        assert memeval([*base, "--concurrency", "16", "--prompt", "rubric-0-5"]) == 0
    return target


def main() -> None:
    """Serve until interrupted (``python tests/judge_standin.py [DELAY]``), printing the base URL."""
    import sys

    s = StandIn(delay=float(sys.argv[1]) if len(sys.argv) > 1 else 0.0).start()
    print(s.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        s.stop()


if __name__ == "__main__":
    main()


def write_tiny_run(results: Path, n: int = 40, *, answered: bool = True, name: str = "tiny.json") -> Path:
    """A memeval-format LoCoMo-like run of ``n`` answered questions, plus one failed and one unscored question.

    Question ``i`` has gold answer ``"the answer number i"``; its answer repeats the number for even ``i``
    (the stand-in's rule holds) and says ``"nothing"`` for odd ``i``. With ``answered=False`` every answer is blank.
    """
    questions: list[dict[str, Any]] = []
    for i in range(n):
        answer = (f"number {i}" if i % 2 == 0 else "nothing") if answered else ""
        questions.append(
            {
                "benchmark": "locomo",
                "question_id": f"conv-99-q{i}",
                "question": f"What is question {i} about?",
                "category": "1",
                "gold_answer": f"the answer number {i}",
                "answer": answer,
                "verdicts": [{"judge": "original", "score": 1.0, "scale": "binary"}] if answer else [],
            }
        )
    questions.append({"benchmark": "locomo", "question_id": "conv-99-qfail", "question": "q", "gold_answer": "g"})
    questions.append(
        {"benchmark": "locomo", "question_id": "conv-99-qout", "question": "q", "answer": "a", "scored": False}
    )
    run = {"benchmark": "locomo", "system": "tiny", "answer_model": "m", "judge_models": ["orig"], "top_k": 5}
    path = results / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"schema_version": 1, "run": run, "questions": questions}), encoding="utf-8")
    return path
