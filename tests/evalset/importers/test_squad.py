"""Golden tests on the shipped SQuAD and CMRC files: counts, first/middle/last records."""

import json

import pytest

from cofe.evalset import AnyOf
from cofe.evalset.importers import derive_coarse, import_squad
from cofe.matching import normalize_strict
from tests.conftest import REPO

SQUAD = REPO / "cofe/_data/squad/squad-v1.1-dev-part-b.json"
CMRC = REPO / "cofe/_data/cmrc2018/cmrc2018-trial.json"


@pytest.fixture(scope="module")
def squad():
    return import_squad(SQUAD)


@pytest.fixture(scope="module")
def cmrc():
    return import_squad(CMRC)


def test_squad_counts(squad):
    assert len(squad.samples) == 5609
    assert len(squad.documents) == 24
    assert squad.stats["paragraphs"] == 1154
    assert not squad.problems


def test_squad_first_middle_last(squad):
    first, middle, last = squad.samples[0], squad.samples[2804], squad.samples[-1]
    assert first.id == "5705e26d75f01819005e76d4"
    assert first.query == "What is Southern California often abbreviated as?"
    assert first.fine_keywords == [["SoCal"]]
    assert first.coarse_keywords == ["Southern California"]
    assert first.source.doc == "Southern_California.txt" and (
        first.source.start,
        first.source.end,
    ) == (0, 580)

    assert middle.id == "572fd8efb2c2fd14005684fd"
    assert middle.fine_keywords == [
        [
            AnyOf(
                any_of=[
                    "dispersed population and distance",
                    "their dispersed population and distance from the Scottish Parliament in Edinburgh",
                ]
            )
        ]
    ]
    assert (
        middle.coarse_keywords == ["Scottish Parliament"] and middle.meta["coarse_rule"] == "title"
    )

    assert last.id == "572a0bebaf94a219006aa773"
    assert last.fine_keywords == [["1.5 gigatons"]]
    assert last.source.doc == "Amazon_rainforest.txt"


def test_cmrc_counts_and_records(cmrc):
    assert len(cmrc.samples) == 1000 and len(cmrc.documents) == 256
    # two questions in the trial file have an empty question text: reported with their place
    assert [p.field for p in cmrc.problems] == [
        "data[188].paragraphs[0].qas[4].query",
        "data[206].paragraphs[0].qas[0].query",
    ]
    first, middle, last = cmrc.samples[0], cmrc.samples[500], cmrc.samples[-1]
    assert (first.id, first.fine_keywords, first.source.doc) == (
        "TRIAL_800_QUERY_0",
        [["踢爆"]],
        "泡泡战士.txt",
    )
    assert (middle.id, middle.coarse_keywords) == ("TRIAL_184_QUERY_3", ["百老汇剧院"])
    assert last.id == "TRIAL_468_QUERY_2" and last.coarse_keywords == ["欧洲越橘"]


@pytest.mark.parametrize("name", ["squad", "cmrc"])
def test_spans_point_into_the_exported_documents(name, request):
    result = request.getfixturevalue(name)
    raw = json.loads((SQUAD if name == "squad" else CMRC).read_text(encoding="utf-8"))
    paragraphs = {p["context"] for a in raw["data"] for p in a["paragraphs"]}
    for sample in result.samples[::50]:
        text = result.documents[sample.source.doc]
        assert text[sample.source.start : sample.source.end] in paragraphs
        for start in sample.meta["answer_starts"]:
            assert text[start:].startswith(sample.reference_answer) or any(
                text[start:].startswith(alt)
                for point in sample.fine_keywords
                for k in point
                for alt in ([k] if isinstance(k, str) else k.any_of)
            )


@pytest.mark.parametrize("name", ["squad", "cmrc"])
def test_the_coarse_rule_holds_in_the_gold_paragraph(name, request):
    """By construction every derived coarse keyword occurs in the gold paragraph."""
    result = request.getfixturevalue(name)
    with_coarse = [s for s in result.samples if s.coarse_keywords]
    assert len(with_coarse) / len(result.samples) > 0.95
    for sample in with_coarse:
        paragraph = result.documents[sample.source.doc][sample.source.start : sample.source.end]
        assert normalize_strict(sample.coarse_keywords[0]) in normalize_strict(paragraph)


def test_derive_coarse_prefers_names_and_avoids_the_answer():
    paragraph = "Super Bowl 50 was played at Levi's Stadium in Santa Clara, California."
    keyword, how = derive_coarse(
        "Where was Super Bowl 50 played?", paragraph, ["Levi's Stadium"], "Super_Bowl_50"
    )
    assert (keyword, how) == ("Super Bowl 50", "name")
    # the only proper noun is the answer itself: fall back to the title
    keyword, how = derive_coarse(
        "Which stadium hosted Levi's Stadium?", paragraph, ["Levi's Stadium"], "Super_Bowl_50"
    )
    assert (keyword, how) == ("Super Bowl 50", "title")
    assert derive_coarse("What?", "nothing here", ["x"], "Absent") == (None, "none")


def test_malformed_file_names_the_place(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(
        '{"data": [{"title": "T", "paragraphs": [{"context": "c", "qas": [{"id": "1", "question": "q?", "answers": []}]}]}]}',
        encoding="utf-8",
    )
    result = import_squad(path)
    assert result.samples == []
    assert result.problems[0].field == "data[0].paragraphs[0].qas[0].answers"
