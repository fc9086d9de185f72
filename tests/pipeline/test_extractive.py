"""The one extractive generator: its sentence rule, and the example script using it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from cofe.pipeline import ExtractiveGenerator
from cofe.pipeline._generate import split_sentences
from cofe.runlog import Chunk


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        (
            "Paris is large. It had 2.1 million people!\nIs it old? Yes",
            ["Paris is large.", "It had 2.1 million people!", "Is it old?", "Yes"],
        ),
        (
            "北京是首都。上海很大！广州呢？深圳\n杭州",
            ["北京是首都。", "上海很大！", "广州呢？", "深圳", "杭州"],
        ),
        (
            'He said "Go." Then... he left. 他说：“走。”然后走了',
            ['He said "Go."', "Then...", "he left.", "他说：“走。”", "然后走了"],
        ),
        ("a title\n\n  a line  \n", ["a title", "a line"]),
        ("", []),
    ],
)
def test_sentences_end_at_terminal_punctuation_in_both_languages_and_at_line_breaks(
    text: str, sentences: list[str]
) -> None:
    assert split_sentences(text) == sentences


def test_a_decimal_point_does_not_cut_the_answer_sentence() -> None:
    context = [Chunk(chunk_id="t", doc_id="d", text="The tower is 324.5 metres tall. It opened.")]
    assert (
        ExtractiveGenerator()("How tall is the tower?", context)
        == "The tower is 324.5 metres tall."
    )


def test_chinese_answers_come_from_the_right_sentence() -> None:
    context = [Chunk(chunk_id="z", doc_id="d", text="北京是首都。上海的人口最多！广州很热")]
    assert ExtractiveGenerator()("哪个城市人口最多？", context) == "上海的人口最多！"


def test_the_example_script_answers_with_the_shared_generator() -> None:
    from examples.build_squad_bm25 import TOP_K, answer_all

    chunks = [
        Chunk(chunk_id=f"c{i}", doc_id="d", text=text)
        for i, text in enumerate(
            [
                "The tower is 324.5 metres tall. It opened in 1889.",
                "Line one about the tower\nline two about its height",
                "北京是首都。上海的人口最多！广州很热",
                "Nothing to see here.",
            ]
        )
    ]
    samples = [
        SimpleNamespace(id="q1", query="How tall is the tower?"),
        SimpleNamespace(id="q2", query="哪个城市人口最多？"),
    ]
    by_id = {c.chunk_id: c for c in chunks}
    for rerank in (True, False):
        for sample, record in zip(samples, answer_all(samples, chunks, rerank=rerank), strict=True):
            given = record.context if rerank else record.pool[:TOP_K]
            expected = ExtractiveGenerator()(sample.query, [by_id[r.chunk_id] for r in given])
            assert record.answer == expected
    assert answer_all(samples[:1], chunks)[0].answer == "The tower is 324.5 metres tall."
