"""The labelled judging benchmark (benchmarks/judge_validity.py): its set is what the build
makes from its sources and well formed, and the benchmark's plumbing -- a run per language,
judged through the loopback lexical stand-in, measures read as ``cofe score`` reads them --
gives the figures the stand-in must give."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.judge_validity import (
    DATA,
    HOLDOUT,
    HOLDOUT_SOURCES,
    KINDS,
    SOURCES,
    auc,
    build,
    choose,
    gold,
    judge_set,
    lexical_judge,
)
from cofe.llm import Endpoint, LLMClient
from cofe.testing import ScriptedOpenAI


def rows_of(lang: str, data: Path = DATA) -> list[dict]:
    return [
        json.loads(x) for x in (data / f"{lang}.jsonl").read_text(encoding="utf-8").splitlines()
    ]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    ("data", "sources", "questions"),
    [(DATA, SOURCES, 50), (HOLDOUT, HOLDOUT_SOURCES, 19)],
    ids=["dev", "holdout"],
)
def test_the_set_is_its_build_and_well_formed(lang, data, sources, questions):
    rows = rows_of(lang, data)
    assert rows == build(lang, sources)  # the committed files are exactly what --build writes
    assert len({r["id"] for r in rows}) == len(rows)
    by_question: dict[str, dict[str, dict]] = {}
    for row in rows:
        assert row["kind"] in KINDS and row["lang"] == lang
        by_question.setdefault(row["question_id"], {})[row["kind"]] = row
    assert len(by_question) >= questions
    for kinds in by_question.values():
        correct, wrong = kinds["correct"], kinds["wrong"]
        assert correct["answer"] != correct["reference"]  # no answer is the reference copied
        assert wrong["title"] == correct["title"] and wrong["answer"] != correct["answer"]
        other = next(r for r in rows if r["question_id"] == wrong["other_question"])
        assert other["title"] != correct["title"]  # another article's answer
        assert all(c["supported"] and c["correct"] for c in correct["claims"])
        assert not any(c["supported"] or c["correct"] for c in wrong["claims"])
        assert kinds["refusal"]["claims"] == []
        if "plus_false" in kinds:
            plus = kinds["plus_false"]
            assert plus["answer"].startswith(correct["answer"])
            *right, false = plus["claims"]
            assert right == correct["claims"] and not false["supported"]
            assert plus["answer"].endswith(false["text"])
    assert gold(by_question[rows[0]["question_id"]]["correct"])["Faithfulness"] == 1.0


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_held_out_set_shares_no_paragraph_with_the_dev_set(lang):
    dev = {r["context"] for r in rows_of(lang)}
    held = {r["context"] for r in rows_of(lang, HOLDOUT)}
    assert held and not dev & held


def test_auc_counts_ties_as_a_half():
    assert auc([1.0, 1.0], [0.0, 0.0]) == 1.0
    assert auc([1.0], [1.0]) == 0.5
    assert auc([0.0, 1.0], [0.5]) == 0.5
    assert auc([], [1.0]) is None


def test_the_stand_in_run_gives_figures_per_kind(tmp_path):
    rows = choose(rows_of("en"), ("correct", "wrong", "refusal"), 3, seed=28)
    assert [r["kind"] for r in rows] == ["correct", "wrong", "refusal"] * 3
    with ScriptedOpenAI(lexical_judge) as server:
        client = LLMClient(Endpoint(server.base_url, "lexical-stand-in", "x", timeout=10))
        result = judge_set(rows, client, None, tmp_path, concurrency=2)
    assert result["samples"] == 9 and result["judged"] == 9
    assert result["calls_per_sample"] == 2.0
    faith = result["table"]["Faithfulness"]
    assert faith["means"]["wrong"][0] == 0.0 and faith["auc_wrong"] > 0.8
    assert "refusal" not in faith["means"]  # no claim to check: unscored, with the reason
    assert "no claim" in next(iter(faith["unscored"]))
    assert result["gold"]["Faithfulness"] == {"correct": 1.0, "wrong": 0.0}
