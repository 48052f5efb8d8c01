"""One judge call through the official ``openai`` client, against any OpenAI-compatible endpoint.

Every call is ``chat.completions.create`` with one user message, ``temperature=0`` and a fixed ``seed``
(dropped for the rest of the run when the server refuses the parameter), a timeout per call, and memeval's
own retries (the client's are off): on 429, 5xx, a timeout or a dropped connection it waits
``min(cap, base * 2^attempt)`` scaled by a random jitter in [0.5, 1], or what ``Retry-After`` /
``retry-after-ms`` asks for when the server says (at most :data:`MAX_RETRY_AFTER` s), then tries again.

Every failure (bad key, unknown model, malformed responses, retries used up) becomes a :class:`JudgeError`
whose message is one sentence. Messages are scrubbed
of the key (:func:`scrub`), and the ``openai`` exception (whose request holds the key in its headers) is
never chained.
"""

from __future__ import annotations

import email.utils
import json
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    # Imported where a judge is built and called: the SDK costs about 50 MB and a second at start-up, which
    # every other command (leaderboard, verify, the app) would otherwise pay.
    import openai

DEFAULT_BASE_URL = "https://api.openai.com/v1"
SEED = 20260627
"""Seed sent with every call (servers that support it sample reproducibly)."""
MAX_RETRY_AFTER = 300.0
"""Longest ``Retry-After`` honoured; a server asking for more ends the run with a message."""


class JudgeError(Exception):
    """A judge call failed; ``str()`` is one sentence without secrets."""


@dataclass(frozen=True)
class Completion:
    """What one call returned."""

    text: str
    """The message content."""
    tokens_in: int
    """Prompt tokens (the server's usage, else estimated)."""
    tokens_out: int
    """Completion tokens (the server's usage, else estimated)."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait before trying a transient failure again."""

    attempts: int = 6
    """Tries per call, the first included."""
    base: float = 1.0
    """First backoff, seconds."""
    cap: float = 30.0
    """Longest backoff, seconds."""

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """Seconds to wait after failed try ``attempt`` (0-based): exponential, capped, jittered."""
        return min(self.cap, self.base * 2.0**attempt) * rng.uniform(0.5, 1.0)


class Completer(Protocol):
    """Anything that answers a prompt (the real client, or a fake in tests)."""

    def complete(self, text: str, max_tokens: int, response_format: str | None) -> Completion:
        """One judged response to ``text``."""
        ...


def public_url(url: str) -> str:
    """``url`` without user, password, query or fragment: safe to print, cache and write."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def scrub(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every secret of 4+ characters replaced by ``***``."""
    for s in secrets:
        if len(s) >= 4:
            text = text.replace(s, "***")
    return text


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds the server asks to wait (``retry-after-ms``, ``Retry-After`` seconds or HTTP date), else None."""
    if not headers:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            return max(0.0, float(raw) / scale)
        except ValueError:
            pass
        parsed = email.utils.parsedate_tz(raw) if name == "retry-after" else None
        if parsed is not None:
            return max(0.0, email.utils.mktime_tz(parsed) - time.time())
    return None


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error")
        msg = body.get("message") or (inner.get("message") if isinstance(inner, dict) else None)
        if isinstance(msg, str) and msg:
            return " ".join(msg.split())[:300]
    return " ".join(str(exc.message).split())[:300]


class OpenAIJudge:
    """Calls ``model`` at ``base_url`` with bounded retries; thread-safe (one ``openai.OpenAI`` client shared)."""

    def __init__(
        self,
        model: str,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.model = model
        self.base_url = public_url(base_url)
        self._secrets = [api_key, *(s for s in (urlsplit(base_url).password,) if s)]
        import openai  # see the TYPE_CHECKING import above

        self._client = openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0)
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        self._rng = random.Random()
        self._lock = threading.Lock()
        self.seed: int | None = SEED
        self.retries = 0
        """Retries made so far (all threads)."""

    def complete(self, text: str, max_tokens: int, response_format: str | None) -> Completion:
        """One response to ``text``; :class:`JudgeError` when it cannot be had."""
        last = ""
        for attempt in range(self.retry.attempts):
            transient: _TransientError | None = None
            try:
                return self._once(text, max_tokens, response_format)
            except _TransientError as exc:
                transient = exc
            last = transient.what
            wait = transient.wait if transient.wait is not None else self.retry.backoff(attempt, self._rng)
            if wait > MAX_RETRY_AFTER:
                raise JudgeError(self._say(f"{last}, and asked to wait {wait:.0f} s before retrying"))
            if attempt + 1 < self.retry.attempts:
                with self._lock:
                    self.retries += 1
                self._sleep(wait)
        raise JudgeError(self._say(f"{last} on all {self.retry.attempts} tries"))

    def _say(self, what: str) -> str:
        return scrub(f"the judge endpoint {self.base_url} (model {self.model}) {what}", self._secrets)

    def _request(self, text: str, max_tokens: int, response_format: str | None) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "user", "content": text}],
            "temperature": 0,
            "max_tokens": max_tokens,
        }
        if self.seed is not None:
            kwargs["seed"] = self.seed
        if response_format is not None:
            kwargs["response_format"] = {"type": response_format}
        return kwargs

    def _once(self, text: str, max_tokens: int, response_format: str | None) -> Completion:
        # Nothing is raised inside an ``except`` block: the openai exception (its request carries the key in
        # a header) must not even be the implicit ``__context__`` of what memeval raises.
        import openai  # loaded by __init__; see the TYPE_CHECKING import above

        failure: Exception | None = None
        status: tuple[int, str, float | None] | None = None
        try:
            resp = self._client.chat.completions.create(**self._request(text, max_tokens, response_format))
        except openai.APITimeoutError:
            failure = _TransientError(f"did not answer within {self.timeout:g} s")
        except openai.APIConnectionError:
            failure = _TransientError("could not be reached or dropped the connection")
        except openai.APIStatusError as exc:
            status = (exc.status_code, _server_message(exc), retry_after(exc.response.headers))
        except (json.JSONDecodeError, openai.APIResponseValidationError):
            failure = JudgeError(self._say("returned a response that is not valid chat-completions JSON"))
        if failure is not None:
            raise failure
        if status is not None:
            return self._status(*status, text, max_tokens, response_format)
        return self._read(resp, text)

    def _status(
        self, code: int, message: str, wait: float | None, text: str, max_tokens: int, fmt: str | None
    ) -> Completion:
        if code == 429 or code >= 500:
            raise _TransientError(f"answered HTTP {code}", wait)
        if code in (401, 403):
            raise JudgeError(self._say(f"refused the API key (HTTP {code}: {message})"))
        if code == 404:
            raise JudgeError(
                self._say(f"answered HTTP 404: it does not serve this model or this is not its base URL ({message})")
            )
        if code == 400 and self.seed is not None and "seed" in message.lower():
            self.seed = None  # the server refuses seeds: every later call goes without one
            return self._once(text, max_tokens, fmt)
        raise JudgeError(self._say(f"refused the request (HTTP {code}: {message})"))

    def _read(self, resp: Any, text: str) -> Completion:
        choices = getattr(resp, "choices", None)
        content = None
        if isinstance(choices, list) and choices:
            content = getattr(getattr(choices[0], "message", None), "content", None)
        if not isinstance(content, str):
            raise JudgeError(self._say("returned a response without a message (no choices[0].message.content)"))
        # JSON may carry half of a surrogate pair ("\ud83d"), which is no text: the cache and the judged file
        # could not store the reply. The half becomes "?"; the verdict around it is read as usual.
        content = content.encode("utf-8", "replace").decode("utf-8")
        usage = getattr(resp, "usage", None)
        tokens_in = getattr(usage, "prompt_tokens", None)
        tokens_out = getattr(usage, "completion_tokens", None)
        return Completion(
            text=content,
            tokens_in=tokens_in if isinstance(tokens_in, int) else len(text) // 4 + 8,
            tokens_out=tokens_out if isinstance(tokens_out, int) else len(content) // 4 + 1,
        )


class _TransientError(Exception):
    """A failure worth trying again (429, 5xx, timeout, dropped connection)."""

    def __init__(self, what: str, wait: float | None = None) -> None:
        super().__init__(what)
        self.what = what
        self.wait = wait
