from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest
from _data import require
from _qa_data import LOCOMO_JSON

from memeval_core.errors import IngestError
from memeval_core.qa import locomo
from memeval_core.qa.columns import ColumnRun
from memeval_core.qa.models import QaQuestion, QaRun, RunMeta


@pytest.fixture(scope="module")
def ds() -> locomo.LocomoDataset:
    return locomo.load_locomo(require(LOCOMO_JSON))


def test_dataset_counts(ds: locomo.LocomoDataset) -> None:
    assert len(ds.questions) == 1986
    counts = {c: sum(q.category == c for q in ds.questions) for c in "12345"}
    assert counts == locomo.CATEGORY_COUNTS
    assert ds.questions[0].sample_id == "conv-26"
    assert tuple(dict.fromkeys(q.sample_id for q in ds.questions)) == locomo.SAMPLE_IDS
    assert sum(q.position is not None for q in ds.questions) == 1540
    assert ds.by_id["conv-26-q0"].evidence == ("D1:3",)
    assert ds.by_position[("conv-30", 79)].qa_index == 80  # category-5 item sits at qa index 79


def test_naming_convention_and_mapping_table() -> None:
    assert locomo.category_name("1") == "multi_hop" and locomo.category_name("4") == "single_hop"
    assert locomo.MEMORYBENCH_LABEL_TO_CODE["world-knowledge"] == "4"
    table = locomo.category_mapping_table()
    assert [r["memeval"] for r in table] == ["multi_hop", "temporal", "open_domain", "single_hop", "adversarial"]
    assert table[0]["cognitive-memory-benchmarks category_name"] == "single-hop"
    assert table[4]["memobase generate_scores output"] == "(excluded)"


def _run(questions: list[QaQuestion]) -> QaRun:
    return QaRun(run=RunMeta(benchmark="locomo", system="s"), questions=questions)


def test_join_by_each_key(ds: locomo.LocomoDataset) -> None:
    qs = [
        QaQuestion(benchmark="locomo", question_id="conv-26-q0", question="When did Caroline go to the LGBTQ support"
                   " group?"),
        QaQuestion(benchmark="locomo", question_id="x", conversation="1", question_index=80),
        QaQuestion(benchmark="locomo", question_id="conv-26-f1", question="When did Melanie paint a sunrise?"),
        QaQuestion(benchmark="locomo", question_id="y", question="what did caroline research?"),
        QaQuestion(benchmark="locomo", question_id="conv-26-q2", question="A different question"),
        QaQuestion(benchmark="locomo", question_id="z", question="Not in LoCoMo", category="9"),
    ]  # fmt: skip
    joined, report = locomo.join_columns(ColumnRun.of(_run(qs)), ds)
    assert report.joined == 4 and report.total == 6
    assert report.by_key == {"question_id": 1, "conversation+index": 1, "conversation+position": 1, "question_text": 1}
    assert report.text_mismatches == 1 and report.unmatched == ("conv-26-q2", "z")
    assert [q.question_id for q in joined.questions[:4]] == ["conv-26-q0", "conv-30-q80", "conv-26-q1", "conv-26-q3"]
    assert joined.questions[3].category == "1" and joined.questions[3].category_name == "multi_hop"
    assert joined.questions[0].gold_answer == "7 May 2023"
    assert "4/6 joined" in report.summary()


def _edge_questions() -> list[QaQuestion]:
    """Ids of every shape join knows, including ones the shortcut lookups must leave to the full matcher."""
    q = partial(QaQuestion, benchmark="locomo")
    return [
        q(question_id="conv-26-q0", question="When did Caroline go to the LGBTQ support group?", category="4",
          gold_answer="stated"),
        q(question_id="conv-26-q2", question="A different question"),  # text mismatch
        q(question_id="conv-26-f1"),  # no text: position alone decides
        q(question_id="conv-26-f03", question="When did Melanie paint a sunrise?"),  # its text's question is taken
        q(question_id="conv-26-f2", question="what did caroline research?"),  # position's text differs: by text
        q(question_id="conv-26-f4", conversation="conv-26", question_index=5),  # conversation + index come first
        q(question_id="conv-26-q1", question="Not its text"),  # unmatched: keeps its id
        q(question_id="conv-26-f0"),  # duplicate: conv-26-q0 was taken by the first
        q(question_id="nope", question="Not in LoCoMo", extra_field=1),
    ]  # fmt: skip


def test_join_matches_each_shape_and_leaves_its_input_alone(ds: locomo.LocomoDataset) -> None:
    mine = _run(_edge_questions())
    originals = list(mine.questions)
    before = [q.model_dump() for q in originals]
    copied, report = locomo.join_columns(ColumnRun.of(mine), ds)
    assert report.by_key == {"question_id": 1, "conversation+index": 1, "conversation+position": 1, "question_text": 1}
    assert report.duplicates == 1 and report.text_mismatches == 2 and report.category_conflicts == 1
    assert report.unmatched == ("conv-26-q2", "conv-26-f03", "conv-26-q1", "conv-26-f0", "nope")
    assert [q.model_dump() for q in originals] == before
    ids = [q.question_id for q in copied.questions]
    assert ids == ["conv-26-q0", "conv-26-q2", "conv-26-q1", "conv-26-f03", "conv-26-q3", "conv-26-q5",
                   "unjoined:conv-26-q1", "conv-26-f0", "nope"]  # fmt: skip
    assert copied.questions[0].category == "2"  # the dataset's code wins
    fresh = _edge_questions()
    locomo.join_columns(ColumnRun.of(_run(fresh)), ds)
    assert fresh[2].question == "" and fresh[2].gold_evidence_ids is None  # the copying join leaves its input alone


def test_repeated_texts_join_in_order(ds: locomo.LocomoDataset) -> None:
    text = "What are the names of Jolene's snakes?"
    twins = [q for q in ds.questions if q.question == text]
    assert len(twins) == 2
    qs = [QaQuestion(benchmark="locomo", question_id=f"t{i}", question=text) for i in range(3)]
    joined, report = locomo.join_columns(ColumnRun.of(_run(qs)), ds)
    assert [q.question_id for q in joined.questions[:2]] == [t.question_id for t in twins]
    assert report.joined == 2 and report.unmatched == ("t2",)


def test_not_a_dataset() -> None:
    with pytest.raises(IngestError, match="not a LoCoMo dataset"):
        locomo.parse_locomo([{"qa": []}], "x.json", "")


def test_text_indexes_are_built_on_first_use(ds: locomo.LocomoDataset) -> None:
    fresh = locomo.parse_locomo(
        [{"sample_id": "a", "conversation": {}, "qa": [{"question": "Same  Text", "category": 1}]},
         {"sample_id": "b", "conversation": {}, "qa": [{"question": "same text", "category": 2}, {"question": "x?",
                                                                                                  "category": 5}]}],
        "x.json",
        "",
    )  # fmt: skip
    assert "by_text" not in fresh.__dict__ and "by_text_any" not in fresh.__dict__
    assert {k: [q.question_id for q in v] for k, v in fresh.by_text.items()} == {
        ("a", "same text"): ["a-q0"], ("b", "same text"): ["b-q0"], ("b", "x?"): ["b-q1"]
    }  # fmt: skip
    assert [q.question_id for q in fresh.by_text_any["same text"]] == ["a-q0", "b-q0"]
    assert fresh.questions[2].position is None and fresh.by_position == {("a", 0): fresh.questions[0],
                                                                          ("b", 0): fresh.questions[1]}  # fmt: skip
    twins = ds.by_text[("conv-48", locomo.normalize_text("What are the names of Jolene's snakes?"))]
    assert [q.qa_index for q in twins] == sorted(q.qa_index for q in twins) and len(twins) == 2


@pytest.mark.parametrize(
    ("qa", "where", "message"),
    [
        ({"question": 3, "category": 1}, "$[0].qa[1]", "a qa item must be an object with a string question"),
        ({"question": "q", "category": True}, "$[0].qa[1].category", "category must be an integer code, got True"),
        ({"question": "q", "category": 1, "evidence": "D1:1"}, "$[0].qa[1].evidence", "evidence must be a list"),
    ],
)
def test_a_bad_question_is_named_by_its_place(qa: dict[str, object], where: str, message: str) -> None:
    good = {"question": "ok?", "category": 1, "evidence": ["D1:1", 7]}
    with pytest.raises(IngestError, match=r"locomo10\.json") as err:
        locomo.parse_locomo([{"sample_id": "c", "conversation": {}, "qa": [good, qa]}], "locomo10.json", "")
    assert err.value.path == where and message in err.value.message
    parsed = locomo.parse_locomo([{"sample_id": "c", "conversation": {}, "qa": [good]}], "locomo10.json", "")
    assert parsed.questions[0].evidence == ("D1:1", "7") and parsed.questions[0].category == "1"


def test_invalid_utf8_in_a_dialogue_is_not_a_dataset(tmp_path: Path) -> None:
    raw = json.dumps([{"sample_id": "c", "conversation": {"s": "ok"}, "qa": [{"question": "q", "category": 1}]}])
    bad = raw.encode().replace(b'"ok"', b'"o\xffk"')
    (tmp_path / "locomo10.json").write_bytes(bad)
    assert locomo.find_locomo(tmp_path) is None
    with pytest.raises(IngestError, match="not UTF-8 text"):
        locomo.load_locomo(tmp_path / "locomo10.json")


def test_a_dataset_nested_too_deeply_is_not_found_and_is_named(tmp_path: Path) -> None:
    (tmp_path / "locomo10.json").write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    assert locomo.find_locomo(tmp_path) is None
    with pytest.raises(IngestError, match="nested 200000 levels deep"):
        locomo.load_locomo(tmp_path / "locomo10.json")


def test_a_repeated_conversation_id_joins_with_the_matched_questions_own_values() -> None:
    convs = [
        {"sample_id": "conv-26", "conversation": {}, "qa": [{"question": "Alpha?", "answer": "a", "category": 1}]},
        {"sample_id": "conv-26", "conversation": {}, "qa": [{"question": "Beta?", "answer": "b", "category": 4}]},
    ]
    ds = locomo.parse_locomo(convs, "d", "")
    assert ds.by_id["conv-26-q0"].question == "Beta?"  # the later question wins the id
    run = _run([QaQuestion(benchmark="locomo", question_id="x1", conversation="conv-26", question="Alpha?")])
    joined, report = locomo.join_columns(ColumnRun.of(run), ds)
    q = joined.questions[0]
    assert report.by_key["question_text"] == 1
    assert (q.question_id, q.category, q.category_name, q.gold_answer) == ("conv-26-q0", "1", "multi_hop", "a")


def test_a_lone_surrogate_in_the_dataset_is_named(tmp_path: Path) -> None:
    text = json.dumps([{"sample_id": "c", "conversation": {}, "qa": [{"question": "q\ud83d", "category": 1}]}])
    (tmp_path / "locomo10.json").write_text(text, encoding="utf-8")
    with pytest.raises(IngestError) as err:
        locomo.load_locomo(tmp_path / "locomo10.json", "locomo10.json")
    assert err.value.path == "$[0].qa[0].question" and "lone UTF-16 surrogate" in err.value.message
