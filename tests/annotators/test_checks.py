"""The automatic checks, one by one."""

from __future__ import annotations

import pytest

from annotators import Checker, CheckStats, DraftQuery, locate
from annotators._checks import fits_type, is_question
from cofe.matching import normalize_strict

SEGMENT = "The Eiffel Tower in Paris was finished in 1889 by Gustave Eiffel. It is 330 metres tall."


def _draft(**kw) -> DraftQuery:
    data = {
        "type": "factual",
        "query": "When was the Eiffel Tower finished?",
        "coarse_keywords": ["Eiffel Tower"],
        "fine_keywords": [["1889"]],
        "answer": "In 1889.",
    }
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
    bad = checker.check(
        _draft(fine_keywords=[["1920"]], query="Other question on the Eiffel Tower?"),
        SEGMENT,
        "Eiffel Tower",
        stats,
    )
    assert bad.check == "verbatim" and "'1920' is not in the segment" in bad.rejected
    label = checker.check(
        _draft(fine_keywords=[["the"]], query="A third one about the Eiffel Tower?"),
        SEGMENT,
        "Eiffel Tower",
        stats,
    )
    assert label.check == "labels" and "stopwords" in label.rejected
    anchor = checker.check(
        _draft(coarse_keywords=["Gustave Eiffel"], query="How tall is it in metres?"),
        SEGMENT,
        "Landmarks",
        stats,
    )
    assert anchor.check == "coarse_anchor"
    dup = checker.check(
        _draft(query="When was the Eiffel Tower finished ?"), SEGMENT, "Eiffel Tower", stats
    )
    assert dup.check == "duplicate"
    near = checker.check(
        _draft(query="When was the Eiffel Tower finally finished?"), SEGMENT, "Eiffel Tower", stats
    )
    assert near.check == "duplicate" and "near-duplicate" in near.rejected
    counts = stats.to_dict()
    assert counts["verbatim"]["rejected"] == 1 and counts["duplicate"]["rejected"] == 2
    assert counts["labels"]["rejected"] == 1 and counts["coarse_anchor"]["rejected"] == 1


def test_coarse_keywords_not_in_query_or_title_are_dropped_but_one_anchor_suffices() -> None:
    checked = Checker().check(
        _draft(coarse_keywords=["Eiffel Tower", "Paris"]), SEGMENT, "Landmarks", CheckStats()
    )
    assert checked.rejected is None and checked.coarse == ["Eiffel Tower"]


def test_a_reply_with_two_queries_of_one_type_is_valid() -> None:
    from annotators import DraftReply

    reply = DraftReply.model_validate(
        {"queries": [_draft().model_dump(), _draft(query="How tall is it?").model_dump()]}
    )
    assert [q.type for q in reply.queries] == ["factual", "factual"]


@pytest.mark.parametrize(
    "query",
    [
        "The Eiffel Tower was finished in 1889.",
        "Eiffel Tower completion year",
        "埃菲尔铁塔于1889年建成。",
    ],
)
def test_a_query_that_is_not_a_question_is_rejected(query) -> None:
    stats = CheckStats()
    checked = Checker().check(_draft(query=query), SEGMENT, "Eiffel Tower", stats)
    assert checked.check == "question" and "not a question" in checked.rejected
    assert stats.to_dict()["question"]["rejected"] == 1


@pytest.mark.parametrize(
    "query",
    [
        "When was the Eiffel Tower finished?",
        "Explain when the Eiffel Tower was finished.",
        "埃菲尔铁塔是哪一年建成的",
        "请说明埃菲尔铁塔的建成年份",
    ],
)
def test_questions_and_instructions_pass_the_question_check(query) -> None:
    assert is_question(query)


def test_a_query_holding_all_its_keywords_is_rejected_and_a_stated_point_dropped() -> None:
    stats = CheckStats()
    checker = Checker()
    leaked = checker.check(
        _draft(query="Was the Eiffel Tower finished in 1889?"), SEGMENT, "Eiffel Tower", stats
    )
    assert leaked.check == "own_keywords" and "states its own answer" in leaked.rejected
    # one point the query states is dropped (a repair); the other is what the answer must say
    partial = checker.check(
        _draft(
            query="The Eiffel Tower, finished in 1889, is how tall?",
            fine_keywords=[["1889"], ["330 metres"]],
        ),
        SEGMENT,
        "Eiffel Tower",
        stats,
    )
    assert partial.rejected is None and partial.fine == [["330 metres"]]
    assert {
        "field": "fine_keywords[0]",
        "from": "1889",
        "to": "",
        "why": "the query states it",
    } in partial.repairs
    counts = stats.to_dict()["own_keywords"]
    assert (counts["rejected"], counts["repaired"]) == (1, 1)


@pytest.mark.parametrize(
    ("kind", "query", "fits"),
    [
        ("comparative", "How does the Eiffel Tower compare with Big Ben in height?", True),
        ("comparative", "When was the Eiffel Tower finished?", False),
        ("comparative", "埃菲尔铁塔和大本钟哪个更高？", True),
        ("tutorial", "How do you climb the Eiffel Tower?", True),
        ("tutorial", "Who built the Eiffel Tower?", False),
        ("tutorial", "如何登上埃菲尔铁塔？", True),
        ("analytical", "Why was the Eiffel Tower built for the World's Fair?", True),
        ("analytical", "What year was the Eiffel Tower finished?", False),
        ("analytical", "埃菲尔铁塔为什么建在巴黎？", True),
        ("factual", "What year was the Eiffel Tower finished?", True),
    ],
)
def test_a_type_that_does_not_fit_is_relabelled_factual(kind, query, fits) -> None:
    assert fits_type(query, kind) is fits
    stats = CheckStats()
    checked = Checker().check(_draft(type=kind, query=query), SEGMENT, "Eiffel Tower", stats)
    assert checked.type == (kind if fits else "factual")
    if not fits:
        assert checked.repairs[0] == {
            "field": "type",
            "from": kind,
            "to": "factual",
            "why": f"the query does not read as {kind}",
        }
        assert stats.to_dict()["type"]["repaired"] == 1
        assert stats.to_dict()["verbatim"]["passed"] == 1  # the type's repair is not verbatim's
