"""Golden tests on the shipped SQuAD and CMRC files: counts, first/middle/last records."""

import json

import pytest

from cofe.evalset import AnyOf
from cofe.importers import derive_coarse, import_squad
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
    # no record is skipped; the only problems are 22 answers (of 19 questions) that start or
    # end inside a word, e.g. "four" of "fourth" (three annotators: one problem)
    assert (squad.stats["answer_mid_word"], squad.stats["label_flagged"]) == (22, 19)
    assert squad.stats["answer_start_mismatch"] == 0
    assert len(squad.problems) == 19
    assert all("answer_mid_word" in p.message for p in squad.problems)
    flagged = [s for s in squad.samples if s.meta.get("label_flags")]
    assert len(flagged) == 19


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
    # two questions in the trial file have an empty question text: reported with their place;
    # five answer_starts are one off (article 28) and one answer starts inside "JAXR": flagged
    assert [p.field for p in cmrc.problems] == [
        *(f"data[28].paragraphs[0].qas[{k}].answers[0]" for k in range(5)),
        "data[188].paragraphs[0].qas[4].query",
        "data[206].paragraphs[0].qas[0].query",
        "data[237].paragraphs[0].qas[0].answers[0]",
    ]
    assert (cmrc.stats["answer_start_mismatch"], cmrc.stats["answer_mid_word"]) == (5, 1)
    assert cmrc.stats["label_flagged"] == 6
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


def test_cmrc_bad_labels_are_flagged_by_record(cmrc):
    by_id = {s.id: s for s in cmrc.samples}
    jaxr = by_id["TRIAL_749_QUERY_0"]
    assert jaxr.meta["label_flags"] == ["answer_mid_word: 'AXR' inside 'JAXR'"]
    assert len(jaxr.meta["answer_starts"]) == 1  # the span is right, only cut: still given
    problem = cmrc.problems[-1]
    assert problem.file.endswith("cmrc2018-trial.json")
    assert "'AXR' inside 'JAXR'" in problem.message and "kept" in problem.message
    off_by_one = by_id["TRIAL_210_QUERY_0"]
    (flag,) = off_by_one.meta["label_flags"]
    assert flag.startswith("answer_start_mismatch: answer_start 14 points at '名龙尖，'")
    assert flag.endswith("the text occurs at 13")
    assert off_by_one.meta["answer_starts"] == []  # a wrong offset is not passed on
    # CJK answers next to CJK text are never mid-word
    assert sum(1 for s in cmrc.samples if s.meta.get("label_flags")) == 6


def _squad_file(tmp_path, context, answers, question="Where is it?"):
    path = tmp_path / "labels.json"
    qa = {"id": "q1", "question": question, "answers": answers}
    data = {"data": [{"title": "T", "paragraphs": [{"context": context, "qas": [qa]}]}]}
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("context", "answer", "start", "flag"),
    [
        ("It is in JAXR now.", "AXR", 10, "answer_mid_word: 'AXR' inside 'JAXR'"),
        ("It is in JAXR now.", "in JAX", 6, "answer_mid_word: 'JAX' inside 'JAXR'"),
        ("It was the fourth.", "four", 11, "answer_mid_word: 'four' inside 'fourth'"),
        ("From 1562 to 1598.", "562 to 1598", 6, "answer_mid_word: '562' inside '1562'"),
        ("Il est à Montréal.", "Montr", 9, "answer_mid_word: 'Montr' inside 'Montréal'"),
        ("ab cd", "b c", 1, "answer_mid_word: 'b' inside 'ab' and 'c' inside 'cd'"),
        ("It is in JAXR now.", "JAXR", 9, None),
        ("It is in JAXR now.", " JAXR ", 8, None),  # spaces around the span: whole words
        ("It is (JAXR).", "JAXR", 7, None),
        ("简称JAXR的规范", "JAXR", 2, None),  # next to CJK: a boundary
        ("泡泡战士踢爆了", "战士踢", 2, None),  # CJK has no word boundaries
        (
            "It is in JAXR now.",
            "JAXR",
            8,
            "answer_start_mismatch: answer_start 8 points at ' JAX', "
            "not at the answer 'JAXR'; the text occurs at 9",
        ),
        (
            "It is in JAXR now.",
            "JAXR",
            -1,
            "answer_start_mismatch: answer_start is -1, not an offset into the paragraph",
        ),
        (
            "It is in JAXR now.",
            "JAXR",
            None,
            "answer_start_mismatch: answer_start is None, not an offset into the paragraph",
        ),
        (
            "It is in JAXR now.",
            "XYZ",
            3,
            "answer_start_mismatch: answer_start 3 points at 'is ', not at the answer 'XYZ'",
        ),
    ],
)
def test_answer_labels_are_checked(tmp_path, context, answer, start, flag):
    result = import_squad(_squad_file(tmp_path, context, [{"text": answer, "answer_start": start}]))
    (sample,) = result.samples  # flagged or not, the sample is imported
    if flag is None:
        assert not result.problems and "label_flags" not in sample.meta
        assert result.stats["label_flagged"] == 0
        return
    assert sample.meta["label_flags"] == [flag]
    (problem,) = result.problems
    assert problem.field == "data[0].paragraphs[0].qas[0].answers[0]"
    assert problem.message.startswith(flag) and problem.file.endswith("labels.json")
    assert result.stats["label_flagged"] == 1
    kind = flag.split(":")[0]
    assert result.stats[kind] == 1
    if kind == "answer_start_mismatch":
        assert sample.meta["answer_starts"] == []
    else:
        assert sample.meta["answer_starts"] == [start]


def test_repeated_bad_answers_are_one_problem_naming_each_record(tmp_path):
    answers = [
        {"text": "four", "answer_start": 11},
        {"text": "the fourth", "answer_start": 7},
        {"text": "four", "answer_start": 11},
        {"text": "fourth", "answer_start": -1},
    ]
    result = import_squad(_squad_file(tmp_path, "It was the fourth.", answers))
    (sample,) = result.samples
    assert [p.field for p in result.problems] == [
        "data[0].paragraphs[0].qas[0].answers[0]",
        "data[0].paragraphs[0].qas[0].answers[3]",
    ]
    assert "(same in answers[2])" in result.problems[0].message
    assert sample.meta["label_flags"] == [
        "answer_mid_word: 'four' inside 'fourth'",
        "answer_start_mismatch: answer_start is -1, not an offset into the paragraph",
    ]
    assert sample.meta["answer_starts"] == [11, 7, 11]
    assert (result.stats["answer_mid_word"], result.stats["answer_start_mismatch"]) == (2, 1)
    assert result.stats["label_flagged"] == 1


def test_a_skipped_question_reports_no_label_flags(tmp_path):
    path = _squad_file(tmp_path, "It is in JAXR now.", [{"text": "AXR", "answer_start": 10}], "")
    result = import_squad(path)
    assert result.samples == []
    assert [p.field for p in result.problems] == ["data[0].paragraphs[0].qas[0].query"]
    assert result.stats["label_flagged"] == 0
