"""The automatic checks, one by one."""

from __future__ import annotations

from annotators import Checker, CheckStats, DraftQuery, locate
from cofe.matching import normalize_strict

SEGMENT = "The Eiffel Tower in Paris was finished in 1889 by Gustave Eiffel. It is 330 metres tall."


def _draft(**kw) -> DraftQuery:
    data = {"type": "factual", "query": "When was the Eiffel Tower finished?",
            "coarse_keywords": ["Eiffel Tower"], "fine_keywords": [["1889"]], "answer": "In 1889."}  # fmt: skip
    data.update(kw)
    return DraftQuery.model_validate(data)


def test_locate_exact_repairs_near_misses_to_whole_words_and_refuses_far_ones() -> None:
    norm = normalize_strict(SEGMENT)
    assert locate("1889", SEGMENT, norm) == ("1889", 100.0)
    assert locate("Gustave Eifel", SEGMENT, norm)[0] == "Gustave Eiffel"
    assert locate("330 meters", SEGMENT, norm)[0] == "330 metres"
    assert locate("the moon landing", SEGMENT, norm)[0] is None


def test_each_check_rejects_with_its_reason() -> None:
    stats = CheckStats()
    checker = Checker()
    assert checker.check(_draft(), SEGMENT, "Eiffel Tower", stats).rejected is None
    bad = checker.check(_draft(fine_keywords=[["1920"]], query="Other question on the Eiffel Tower?"),
                        SEGMENT, "Eiffel Tower", stats)  # fmt: skip
    assert bad.check == "verbatim" and "'1920' is not in the segment" in bad.rejected
    label = checker.check(_draft(fine_keywords=[["the"]], query="A third one about the Eiffel Tower?"),
                          SEGMENT, "Eiffel Tower", stats)  # fmt: skip
    assert label.check == "labels" and "stopwords" in label.rejected
    anchor = checker.check(_draft(coarse_keywords=["Gustave Eiffel"], query="How tall is it in metres?"),
                           SEGMENT, "Landmarks", stats)  # fmt: skip
    assert anchor.check == "coarse_anchor"
    dup = checker.check(
        _draft(query="When was the Eiffel Tower finished ?"), SEGMENT, "Eiffel Tower", stats
    )
    assert dup.check == "duplicate"
    near = checker.check(_draft(query="When was the Eiffel Tower finally finished?"), SEGMENT,
                         "Eiffel Tower", stats)  # fmt: skip
    assert near.check == "duplicate" and "near-duplicate" in near.rejected
    counts = stats.to_dict()
    assert counts["verbatim"]["rejected"] == 1 and counts["duplicate"]["rejected"] == 2
    assert counts["labels"]["rejected"] == 1 and counts["coarse_anchor"]["rejected"] == 1


def test_coarse_keywords_not_in_query_or_title_are_dropped_but_one_anchor_suffices() -> None:
    checked = Checker().check(_draft(coarse_keywords=["Eiffel Tower", "Paris"]), SEGMENT, "Landmarks",
                              CheckStats())  # fmt: skip
    assert checked.rejected is None and checked.coarse == ["Eiffel Tower"]


def test_a_reply_with_two_queries_of_one_type_is_invalid() -> None:
    import pytest
    from pydantic import ValidationError

    from annotators import DraftReply

    with pytest.raises(ValidationError, match="at most one query per type"):
        DraftReply.model_validate({"queries": [_draft().model_dump(), _draft().model_dump()]})
