"""Judge prompts: versioned, hashed, each with the source it was taken from and a strict verdict parser.

Built in (:data:`BUILTIN`):

- ``mem0-locomo``: the binary CORRECT/WRONG LoCoMo prompt of mem0's evaluation (``ACCURACY_PROMPT`` in
  mem0ai/mem0 ``evaluation/metrics/llm_judge.py``), which most published LoCoMo numbers use. Verbatim except
  that its ``{generated_answer}`` slot is called ``{answer}`` here; sent, as there, with ``response_format``
  ``json_object`` and read from the JSON key ``label``.
- ``longmemeval``: LongMemEval's per-question-type yes/no prompts (``get_anscheck_prompt`` in
  xiaowu0162/LongMemEval ``src/evaluation/evaluate_qa.py``), chosen by the question's type (the run's
  ``category``) and, for abstention questions (``_abs`` in the id, or ``is_abstention``), the abstention prompt.
  ``max_tokens`` 10 as there.
- ``rubric-0-5``: memeval's own 0-5 rubric; the score is rescaled to [0, 1] and >= 3 counts as correct.

A prompt file (:func:`load_prompt`) is either text with the slots ``{question}``, ``{gold_answer}`` and
``{answer}`` (binary, answered with CORRECT or WRONG) or a JSON object (``template``, ``scale``, ``labels``,
``max_tokens``, ``response_format``, ``name``). Slots are filled in one pass, so other braces are left as
they are and a slot inside an answer is never filled again.

Parsing never guesses: a response that does not state exactly one verdict is *unparsed* (None).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson

SLOTS: tuple[str, ...] = ("question", "gold_answer", "answer")
"""The slots every template must contain."""
PromptScale = Literal["binary", "rubric-0-5"]
_SLOT = re.compile(r"\{(question|gold_answer|answer)\}")
DEFAULT = "default"
"""Template key of a prompt with one template."""
ABSTENTION = "abstention"
"""Template key of LongMemEval's prompt for questions that have no answer in the history."""


class PromptError(ValueError):
    """A prompt file or prompt name that cannot be used; the message is one sentence."""


@dataclass(frozen=True)
class Item:
    """What a prompt needs from one question."""

    question_id: str
    """The question's id (LongMemEval abstention questions carry ``_abs``)."""
    question: str
    """Question text."""
    gold_answer: str
    """Reference answer ('' when the dataset has none)."""
    answer: str
    """The system's answer."""
    category: str | None = None
    """Raw category code (LongMemEval: the question type)."""
    is_abstention: bool = False
    """The question expects the system to abstain."""


@dataclass(frozen=True)
class Prompt:
    """One judge prompt: its templates, how its response is read, and where it comes from."""

    name: str
    """Short name (``mem0-locomo``, ``longmemeval``, ``rubric-0-5`` or a file's stem)."""
    version: int
    """Bumped whenever the text or the parser of a built-in prompt changes."""
    templates: Mapping[str, str]
    """Template per key: ``default``, or LongMemEval's question types plus ``abstention``."""
    scale: PromptScale
    """``binary`` (0/1) or ``rubric-0-5`` (0..5, rescaled by /5)."""
    source: str
    """Where the text comes from: repository, file and commit, or the prompt file's path."""
    labels: Mapping[str, int] = field(default_factory=lambda: {"CORRECT": 1, "WRONG": 0})
    """Binary prompts: verdict word (case-insensitive) -> score."""
    max_tokens: int = 200
    """Completion token limit sent with each call (and the output-token bound of the cost estimate)."""
    response_format: str | None = None
    """``json_object`` to request JSON output (as mem0's evaluation does), else None."""
    by_type: bool = False
    """Choose the template by question type (LongMemEval); otherwise ``default``."""

    @property
    def hash(self) -> str:
        """SHA-256 of everything that changes a call or its reading (not the name or the source)."""
        spec = [dict(self.templates), self.scale, dict(self.labels), self.max_tokens, self.response_format]
        return hashlib.sha256(json.dumps([self.version, spec, self.by_type], sort_keys=True).encode()).hexdigest()

    def template_key(self, item: Item) -> str:
        """The template ``item`` is judged with; :class:`PromptError` for a question type the prompt lacks."""
        if not self.by_type:
            return DEFAULT
        if item.is_abstention or "_abs" in item.question_id:
            return ABSTENTION
        if item.category is not None and item.category in self.templates and item.category != ABSTENTION:
            return item.category
        known = ", ".join(k for k in self.templates if k != ABSTENTION)
        raise PromptError(
            f"question {item.question_id} has question type {item.category!r}, which prompt {self.name} "
            f"does not know (it knows {known})"
        )

    def render(self, item: Item) -> str:
        """The prompt text for ``item``: its template with the three slots filled in one pass."""
        values = {"question": item.question, "gold_answer": item.gold_answer, "answer": item.answer}
        parts = _parts(self.templates[self.template_key(item)])
        return "".join([values[p] if i % 2 else p for i, p in enumerate(parts)])

    def parse(self, raw: str) -> float | None:
        """The raw score the response states, or None when it states no verdict or more than one."""
        if self.scale == "rubric-0-5":
            return parse_rubric(raw)
        return parse_label(raw, self._upper)

    @functools.cached_property
    def _upper(self) -> dict[str, int]:
        return {k.upper(): v for k, v in self.labels.items()}


@functools.lru_cache(maxsize=64)
def _parts(template: str) -> tuple[str, ...]:
    """The template split at its slots: literal, slot name, literal, ... (slots at the odd places)."""
    return tuple(_SLOT.split(template))


_DECODER = json.JSONDecoder()


def _json_objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object embedded in ``text`` (a fenced block, or the whole text), outermost first."""
    stripped = text.strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        try:
            whole = orjson.loads(stripped)
        except orjson.JSONDecodeError:
            whole = None
        if isinstance(whole, dict):
            return [whole]
    found: list[dict[str, Any]] = []
    for start in (m.start() for m in re.finditer(r"\{", text)):
        try:
            obj, _ = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            found.append(obj)
    return found


def parse_label(raw: str, labels: Mapping[str, int]) -> float | None:
    """A binary verdict: the JSON ``label`` (or ``verdict``) if present, else the one label word the text uses."""
    upper = labels if all(k.isupper() for k in labels) else {k.upper(): v for k, v in labels.items()}
    for obj in _json_objects(raw):
        for key in ("label", "verdict", "answer"):
            value = obj.get(key)
            if isinstance(value, str) and value.strip().upper() in upper:
                return float(upper[value.strip().upper()])
    words = {w.upper() for w in re.findall(r"[A-Za-z]+", raw)} & set(upper)
    scores = {upper[w] for w in words}
    return float(scores.pop()) if len(scores) == 1 else None


_SCORE_LINE = re.compile(r"(?im)^[\s*#>_-]*score[\s*_]*[:=]\s*\**\s*([0-9]+(?:\.[0-9]+)?)")


def parse_rubric(raw: str) -> float | None:
    """A 0-5 score: the JSON ``score``, else the last ``Score: N`` line; anything outside 0..5 is unparsed."""
    value: float | None = None
    for obj in _json_objects(raw):
        s = obj.get("score")
        if isinstance(s, int | float) and not isinstance(s, bool):
            value = float(s)
    if value is None:
        lines = _SCORE_LINE.findall(raw)
        value = float(lines[-1]) if lines else None
    if value is None or not 0.0 <= value <= 5.0 or value != int(value):
        return None
    return value


# ------------------------------------------------------------------ built-in prompts

PROMPTS_FILE = Path(__file__).with_name("prompts.json")
"""The built-in prompts' text, reading rules, versions and sources (verbatim upstream text is kept there)."""


def _builtin() -> dict[str, Prompt]:
    doc = json.loads(PROMPTS_FILE.read_text(encoding="utf-8"))
    out: dict[str, Prompt] = {}
    for name, p in doc["prompts"].items():
        for key, template in p["templates"].items():
            check_slots(template, f"built-in prompt {name} ({key})")
        out[name] = Prompt(
            name=name,
            version=int(p["version"]),
            templates=dict(p["templates"]),
            scale=p["scale"],
            source=str(p["source"]),
            labels=dict(p["labels"]),
            max_tokens=int(p["max_tokens"]),
            response_format=p["response_format"],
            by_type=bool(p["by_type"]),
        )
    return out


def default_prompt(benchmark: str) -> str:
    """The prompt a benchmark's own evaluation uses: LongMemEval's for ``longmemeval-*``, else mem0's LoCoMo one."""
    return "longmemeval" if benchmark.startswith("longmemeval") else "mem0-locomo"


def check_slots(template: str, where: str) -> None:
    """:class:`PromptError` naming the first of the three slots ``template`` lacks."""
    for slot in SLOTS:
        if "{" + slot + "}" not in template:
            raise PromptError(
                f"{where} has no {{{slot}}} slot; a judge prompt needs {{question}}, {{gold_answer}} and {{answer}}"
            )


def _from_json(path: Path, doc: Any) -> Prompt:
    if not isinstance(doc, dict) or not isinstance(doc.get("template"), str):
        raise PromptError(f"prompt file {path} is JSON but has no string field 'template'")
    scale = doc.get("scale", "binary")
    if scale not in ("binary", "rubric-0-5"):
        raise PromptError(f"prompt file {path}: scale must be 'binary' or 'rubric-0-5', not {scale!r}")
    labels = doc.get("labels", {"CORRECT": 1, "WRONG": 0})
    if not isinstance(labels, dict) or sorted(set(labels.values())) != [0, 1]:
        raise PromptError(f"prompt file {path}: labels must map words to 1 (correct) and 0 (wrong)")
    max_tokens = doc.get("max_tokens", 200)
    if not isinstance(max_tokens, int) or max_tokens < 1:
        raise PromptError(f"prompt file {path}: max_tokens must be a positive integer")
    fmt = doc.get("response_format")
    if fmt not in (None, "json_object"):
        raise PromptError(f"prompt file {path}: response_format must be 'json_object' or absent")
    check_slots(doc["template"], f"prompt file {path}")
    name = doc.get("name") if isinstance(doc.get("name"), str) else path.stem
    return Prompt(str(name), 1, {DEFAULT: doc["template"]}, scale, str(path), labels, max_tokens, fmt)


def load_prompt(name_or_file: str) -> Prompt:
    """A built-in prompt by name, or a prompt file (text with the three slots, or JSON); :class:`PromptError`."""
    if name_or_file in BUILTIN:
        return BUILTIN[name_or_file]
    path = Path(name_or_file)
    if not path.is_file():
        raise PromptError(f"no built-in prompt and no file is called {name_or_file!r}; built in: {', '.join(BUILTIN)}")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PromptError(f"prompt file {path} cannot be read as UTF-8 text ({type(exc).__name__})") from None
    if path.suffix.lower() == ".json":
        try:
            return _from_json(path, orjson.loads(text))  # refuses lone surrogate escapes, which are no text
        except orjson.JSONDecodeError as exc:
            raise PromptError(f"prompt file {path} is not valid JSON (line {exc.lineno})") from None
    check_slots(text, f"prompt file {path}")
    return Prompt(path.stem, 1, {DEFAULT: text}, "binary", str(path))


BUILTIN: dict[str, Prompt] = _builtin()
"""The prompts memeval ships, by name: ``mem0-locomo``, ``longmemeval``, ``rubric-0-5``."""
