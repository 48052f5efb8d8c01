from __future__ import annotations

from memeval_core.qa.getters import CATEGORY_OF, DICT_OF, EXTRA_OF, FIELDS_SET_OF, PRIVATE_OF, SCORED_OF
from memeval_core.qa.models import QaQuestion


def test_getters_read_a_questions_fields_and_pydantic_state() -> None:
    q = QaQuestion(benchmark="locomo", question_id="conv-26-q0", category="2", scored=False, note="n")
    assert DICT_OF(q) is q.__dict__ and DICT_OF(q)["question_id"] == "conv-26-q0"
    assert FIELDS_SET_OF(q) is q.model_fields_set and FIELDS_SET_OF(q) >= {"category", "scored", "note"}
    assert EXTRA_OF(q) == {"note": "n"} and PRIVATE_OF(q) is None
    assert list(map(CATEGORY_OF, [q, q])) == ["2", "2"] and SCORED_OF(q) is False
