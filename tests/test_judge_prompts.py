"""Judge prompts: shipped text and sources, slot filling, template choice, strict verdict parsing, prompt files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memeval_core.judge.prompts import (
    ABSTENTION,
    BUILTIN,
    Item,
    PromptError,
    default_prompt,
    load_prompt,
    parse_label,
    parse_rubric,
)

ITEM = Item("conv-26-q0", "When did Caroline go to the group?", "7 May 2023", "On 7 May 2023.", "2")
MEM0_LABELS = {"CORRECT": 1, "WRONG": 0}


def test_builtin_prompts_name_their_sources() -> None:
    assert set(BUILTIN) == {"mem0-locomo", "longmemeval", "rubric-0-5"}
    assert "mem0ai/mem0 evaluation/metrics/llm_judge.py" in BUILTIN["mem0-locomo"].source
    assert "xiaowu0162/LongMemEval src/evaluation/evaluate_qa.py" in BUILTIN["longmemeval"].source
    assert all(p.version >= 1 and len(p.hash) == 64 for p in BUILTIN.values())
    assert len({p.hash for p in BUILTIN.values()}) == 3


def test_mem0_prompt_is_the_upstream_text_with_the_answer_slot_renamed() -> None:
    p = BUILTIN["mem0-locomo"]
    text = p.templates["default"]
    # Upstream's typographic quotes and its trailing spaces are kept as they are.
    assert "label an answer to a question as ’CORRECT’ or ’WRONG’" in text
    assert text.count(" \n") == 4
    assert "Generated answer: {answer}\n" in text and "{generated_answer}" not in text
    assert 'in a json format with the key as "label"' in text
    assert p.response_format == "json_object" and p.scale == "binary"


def test_render_fills_each_slot_once_and_leaves_other_braces() -> None:
    item = Item("q1", "What is {x}?", "{answer}", "the {question} slot", None)
    text = BUILTIN["mem0-locomo"].render(item)
    assert "Question: What is {x}?\nGold answer: {answer}\nGenerated answer: the {question} slot\n" in text


def test_longmemeval_picks_the_template_by_question_type() -> None:
    p = BUILTIN["longmemeval"]
    temporal = Item("gpt4_2655b836", "q", "g", "a", "temporal-reasoning")
    assert "do not penalize off-by-one errors" in p.render(temporal)
    assert p.template_key(Item("x_abs", "q", "g", "a", "multi-session")) == ABSTENTION
    assert "unanswerable" in p.render(Item("x", "q", "g", "a", "multi-session", is_abstention=True))
    assert "Rubric: g" in p.render(Item("x", "q", "g", "a", "single-session-preference"))
    with pytest.raises(PromptError, match="question type 'weird'"):
        p.template_key(Item("x", "q", "g", "a", "weird"))
    assert p.max_tokens == 10
    assert default_prompt("longmemeval-s") == "longmemeval" and default_prompt("locomo") == "mem0-locomo"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"label": "CORRECT"}', 1.0),
        ('The answer names the same date.\n{"label": "WRONG"}', 0.0),
        ('```json\n{"reason": "same", "label": "correct"}\n```', 1.0),
        ("CORRECT", 1.0),
        ("The answer is INCORRECT.", None),  # INCORRECT is not a label word: no verdict stated
        ("It is CORRECT, not WRONG.", None),  # both labels: never guessed
        ("I cannot tell.", None),
        ("", None),
    ],
)
def test_binary_parsing_never_guesses(raw: str, expected: float | None) -> None:
    assert parse_label(raw, MEM0_LABELS) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("yes", 1.0), ("No.", 0.0), ("Yes, it is correct.", 1.0), ("yes and no", None), ("maybe", None)],
)
def test_yes_no_parsing(raw: str, expected: float | None) -> None:
    assert BUILTIN["longmemeval"].parse(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Matches.\nScore: 4", 4.0),
        ("**Score:** 5", 5.0),
        ('{"score": 3}', 3.0),
        ("Score: 2\nOn reflection:\nScore: 3", 3.0),
        ("Score: 7", None),
        ("Score: 2.5", None),
        ("good answer", None),
    ],
)
def test_rubric_parsing(raw: str, expected: float | None) -> None:
    assert parse_rubric(raw) == expected


def test_a_prompt_file_needs_every_slot(tmp_path: Path) -> None:
    f = tmp_path / "mine.txt"
    f.write_text("Q: {question}\nA: {answer}\nSay CORRECT or WRONG.", encoding="utf-8")
    with pytest.raises(PromptError) as exc:
        load_prompt(str(f))
    assert str(exc.value) == (
        f"prompt file {f} has no {{gold_answer}} slot; "
        "a judge prompt needs {question}, {gold_answer} and {answer}"
    )
    f.write_text('Q: {question}\nG: {gold_answer}\nA: {answer}\nSay CORRECT or WRONG. {"label": ...}', encoding="utf-8")
    p = load_prompt(str(f))
    assert (p.name, p.scale, p.source) == ("mine", "binary", str(f))
    assert p.render(ITEM).startswith("Q: When did Caroline go to the group?\nG: 7 May 2023\nA: On 7 May 2023.")


def test_a_json_prompt_file_sets_scale_and_labels(tmp_path: Path) -> None:
    f = tmp_path / "graded.json"
    doc = {"name": "my-rubric", "template": "{question}|{gold_answer}|{answer}", "scale": "rubric-0-5"}
    f.write_text(json.dumps(doc), encoding="utf-8")
    p = load_prompt(str(f))
    assert (p.name, p.scale, p.parse("Score: 3")) == ("my-rubric", "rubric-0-5", 3.0)
    f.write_text(json.dumps({**doc, "scale": "stars"}), encoding="utf-8")
    with pytest.raises(PromptError, match="scale must be"):
        load_prompt(str(f))
    with pytest.raises(PromptError, match="no built-in prompt and no file"):
        load_prompt(str(tmp_path / "absent.txt"))


def test_the_hash_follows_the_text_not_the_name(tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("{question} {gold_answer} {answer}", encoding="utf-8")
    b.write_text("{question} {gold_answer} {answer}", encoding="utf-8")
    assert load_prompt(str(a)).hash == load_prompt(str(b)).hash
    b.write_text("{question} {gold_answer} {answer}!", encoding="utf-8")
    assert load_prompt(str(a)).hash != load_prompt(str(b)).hash
