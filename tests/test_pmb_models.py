"""PMB report models: validated from the harness's camelCase JSON, and pickled (warm-start cache) to the same state."""

from __future__ import annotations

import copy
import pickle

import pytest

from memeval_core.pmb.models import BeliefIngestion, CategoryBreakdown, Ingestion, RetrievalSummary


def _state(m: object) -> tuple[object, ...]:
    return (type(m), m.__dict__, m.__pydantic_extra__, m.__pydantic_fields_set__, m.__pydantic_private__)  # type: ignore[attr-defined]


@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_pickled_models_come_back_with_the_same_state(protocol: int) -> None:
    per_belief = [{"beliefId": "b1", "latencyMs": 2.5, "newField": [1]}, {"belief_id": "b2", "latency_ms": 0}]
    ingestion = Ingestion.model_validate({"beliefCount": 2, "perBelief": per_belief})
    category = CategoryBreakdown.model_validate({"category": "c", "caseCount": 3, "passed": 2, "failed": 1})
    summary = RetrievalSummary.model_validate({"meanLatencyMs": 1.0, "caseCount": 3})
    for model in (ingestion, category, summary, *ingestion.per_belief):
        back = pickle.loads(pickle.dumps(model, protocol))
        assert _state(back) == _state(model) and back == model
        assert back.model_dump(by_alias=True) == model.model_dump(by_alias=True)
        with pytest.raises(ValueError, match="frozen"):
            setattr(back, next(iter(type(back).model_fields)), 1)  # still frozen
    back_ingestion = pickle.loads(pickle.dumps(ingestion, protocol))
    assert [type(b) for b in back_ingestion.per_belief] == [BeliefIngestion, BeliefIngestion]
    assert back_ingestion.per_belief[0].model_extra == {"newField": [1]}
    assert copy.deepcopy(back_ingestion) == ingestion
