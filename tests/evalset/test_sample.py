import pytest
from pydantic import ValidationError

from cofe.evalset import AnyOf, EvalSample, QueryType, keyword_alternatives


def test_unknown_fields_are_kept_in_meta():
    sample = EvalSample.model_validate({"id": "a", "query": "q?", "lang": "en", "meta": {"x": 1}})
    assert sample.meta == {"x": 1, "lang": "en"}


def test_keywords_accept_strings_and_alternatives():
    sample = EvalSample.model_validate(
        {"id": "a", "query": "q", "fine_keywords": [["Denver", {"any_of": ["24–10", "24-10"]}]]}
    )
    first, second = sample.fine_keywords[0]
    assert first == "Denver"
    assert isinstance(second, AnyOf)
    assert keyword_alternatives(second) == ["24–10", "24-10"]


@pytest.mark.parametrize(
    "bad, field",
    [
        ({"id": "", "query": "q"}, "id"),
        ({"id": "a", "query": "q", "query_type": "opinion"}, "query_type"),
        ({"id": "a", "query": "q", "fine_keywords": ["flat"]}, "fine_keywords.0"),
        ({"id": "a", "query": "q", "fine_keywords": [[{"any_of": []}]]}, "fine_keywords.0.0"),
    ],
)
def test_bad_records_name_the_field(bad, field):
    with pytest.raises(ValidationError) as info:
        EvalSample.model_validate(bad)
    locations = {".".join(map(str, e["loc"])) for e in info.value.errors()}
    assert any(loc.startswith(field) for loc in locations)


def test_query_types():
    assert {t.value for t in QueryType} == {
        "factual",
        "analytical",
        "comparative",
        "tutorial",
        "other",
    }
