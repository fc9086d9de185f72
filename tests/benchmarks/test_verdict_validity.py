"""Smoke test of benchmarks/verdict_validity.py: gold labels from offsets, no pipeline run."""

import json
from types import SimpleNamespace

import pandas as pd

from benchmarks.verdict_validity import (
    ChunkSpan,
    GoldFacts,
    align,
    answer_contains,
    compare,
    gold_facts,
    load_gold,
)

# the parser joined the paragraph's lines and collapsed its double space
SOURCE_PARAGRAPH = "The cat sat\non the  mat in Paris."
PARSED = "Intro.\n\nThe cat sat on the mat in Paris.\n\nEnd."
ANSWER = "the  mat"  # as the source paragraph spells it


def _span():
    alignment = align(SOURCE_PARAGRAPH, PARSED)
    start = SOURCE_PARAGRAPH.index(ANSWER)
    return alignment, alignment.span(start, start + len(ANSWER))


def test_a_whitespace_changed_paragraph_is_aligned_with_an_offset_map():
    alignment, span = _span()
    assert alignment.how == "whitespace"
    assert PARSED[span[0] : span[1]] == "the mat"
    # an unchanged paragraph is found exactly; a paragraph the parser lost is not found
    assert align("End.", PARSED).how == "exact"
    assert align("Not there.", PARSED) is None
    # the same paragraph twice: the hint (end of the previous paragraph) picks the later one
    twice = "A b.\n\nA b."
    assert align("A b.", twice, hint=1).offsets[0] == 6
    assert align("A  b.", twice, hint=1).offsets[0] == 6


def test_gold_facts_from_a_cutting_and_a_covering_chunk():
    _, (start, end) = _span()
    cutting = ChunkSpan("doc#0", 0, start + 4)  # ends inside "the mat"
    covering = ChunkSpan("doc#1", start - 4, end + 3)
    other = [f"other#{i}" for i in range(6)]

    only_cut = gold_facts([(start, end)], [cutting], ["doc#0", *other], None, 4, "x", ["mat"])
    assert (only_cut.parse_ok, only_cut.chunk_ok, only_cut.stage) == (True, False, "chunking")

    chunks = [cutting, covering]
    late = gold_facts([(start, end)], chunks, [*other[:4], "doc#1"], None, 4, "x", ["the mat"])
    assert (late.chunk_ok, late.pool_ok, late.context_ok) == (True, True, False)
    assert late.stage == "retrieval" and late.covering == ("doc#1",)

    answer = "It sat on THE   mat."
    top = gold_facts([(start, end)], chunks, ["doc#1", *other], None, 4, answer, [ANSWER])
    assert top.context_ok and top.answer_ok and top.stage == "pass"
    wrong = gold_facts([(start, end)], chunks, ["doc#1"], None, 4, "a dog", [ANSWER])
    assert wrong.stage == "generation"

    # a reranker's context: in the pool but cut from the context is reranking's loss
    reranked = gold_facts([(start, end)], chunks, ["doc#1"], ["doc#0"], 4, answer, [ANSWER])
    assert reranked.stage == "reranking"
    # an answer whose span could not be mapped is lost at parsing; any answer may hold a fact
    assert gold_facts([None], chunks, ["doc#1"], None, 4, answer, [ANSWER]).stage == "parse"
    two = gold_facts([None, (start, end)], chunks, ["doc#1"], None, 4, answer, ["x", ANSWER])
    assert two.stage == "pass"


def test_answer_containment_is_whole_words_and_case_folded():
    assert answer_contains("Paris, France", ["paris"])
    assert not answer_contains("the border with Germany", ["German"])
    assert not answer_contains("often", ["ten"])
    assert answer_contains("生命数耗完即算为踢爆。", ["踢爆"])  # CJK: no word boundaries
    assert answer_contains("全裸或者部分裸体都是受到鼓励的。", ["。全裸或者部分裸体"])
    assert not answer_contains(None, ["x"])


def test_compare_counts_agreement_and_excludes_unscorable():
    def facts(stage: str) -> GoldFacts:
        lost = (
            ("parse", "chunking", "retrieval", "generation").index(stage) if stage != "pass" else 4
        )
        return GoldFacts(lost > 0, lost > 1, lost > 2, lost > 2, lost > 3, False)

    gold = {
        "a": facts("pass"),
        "b": facts("retrieval"),
        "c": facts("generation"),
        "d": facts("pass"),
    }
    points = pd.DataFrame(
        {
            "sample_id": ["a", "b", "c", "d"],
            "pool_rank": pd.array([1, 2, 1, None], dtype="Int64"),
            "context_rank": pd.array([None] * 4, dtype="Int64"),
        }
    )
    verdicts = pd.DataFrame(
        {
            "sample_id": ["a", "b", "c", "d"],
            "verdict": ["pass_to_context", "pass", "unscorable", "brand_new_verdict"],
            "stage": [None, None, None, "retrieval"],
            "explanation": ["", "", "no 'x' here (why)", ""],
        }
    )
    out = compare("default", gold, SimpleNamespace(points=points, verdicts=verdicts), 4, 3)
    assert out.scored == 3 and out.excluded == {"unscorable (no '…' here)": 1}
    assert out.excluded_gold == {"generation": 1}
    # b: gold lost it before the top 4, cofe saw the answer text at rank 2
    assert out.stage == {("pass", "pass"): 1, ("retrieval", "pass"): 1, ("pass", "retrieval"): 1}
    assert out.agreement(out.at_k) == 1 / 3
    assert out.examples[("verdict", "retrieval", "pass")] == ["b"]


def test_gold_spans_come_from_the_offsets_without_edge_space_or_punctuation(tmp_path):
    context = "魏舒攻击晋国。 后来他回国。"
    answers = [
        {"text": "晋国。 ", "answer_start": 4},  # the sentence's "。" and a space taken along
        {"text": "回国", "answer_start": 3},  # an offset that does not point at the text
    ]
    qa = {"id": "q", "question": "哪国？", "answers": answers}
    path = tmp_path / "cmrc.json"
    path.write_text(
        json.dumps({"data": [{"title": "T", "paragraphs": [{"context": context, "qas": [qa]}]}]}),
        encoding="utf-8",
    )
    question = load_gold(path).questions["q"]
    assert question.spans == ((4, 6),) and context[4:6] == "晋国"
    assert question.bad_spans == 1 and question.texts == ("晋国。", "回国")
