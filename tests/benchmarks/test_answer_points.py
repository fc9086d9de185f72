"""The labelled answer-points dev set is well formed, and the answer step still agrees with
its reader: blamed points are the reader's absent ones, reference answers pass, another
question's answer does not. Floors sit a little under the figures in benchmarks/README.md,
so a change that makes the matcher blame correct answers fails here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.answer_points import DATA, agreement, build_run, load
from cofe.stages import ScoreConfig

LABELS = {"present", "partial", "absent", "contradicts"}


HOLDOUT = DATA / "holdout"  # written by another reader, after the rules it first measured


@pytest.mark.parametrize(
    ("folder", "lang", "least"),
    [(DATA, "en", 45), (DATA, "zh", 45), (HOLDOUT, "en", 15), (HOLDOUT, "zh", 15)],
)
def test_the_labelled_sets_are_well_formed(folder: Path, lang: str, least: int) -> None:
    questions = load(folder / f"{lang}.jsonl")
    assert len({q["id"] for q in questions}) == len(questions) >= least
    pairs = 0
    for q in questions:
        for point in q["points"]:
            assert 1 <= len(point) <= 4
            assert all(fragment in q["paragraph"] for fragment in point), q["id"]
        for answer in q["answers"]:
            assert len(answer["labels"]) == len(q["points"]) and set(answer["labels"]) <= LABELS
            pairs += len(answer["labels"])
    assert pairs >= 20 * least / 3


def test_the_held_out_set_shares_no_paragraph_with_the_dev_set() -> None:
    for lang in ("en", "zh"):
        dev = {q["paragraph"] for q in load(DATA / f"{lang}.jsonl")}
        assert not dev & {q["paragraph"] for q in load(HOLDOUT / f"{lang}.jsonl")}


@pytest.mark.parametrize(
    ("folder", "lang", "precision", "recall"),
    [
        (DATA, "en", 0.95, 0.65),
        (DATA, "zh", 0.95, 0.72),
        (HOLDOUT, "en", 0.93, 0.75),
        (HOLDOUT, "zh", 0.93, 0.75),
    ],
)
def test_the_answer_step_agrees_with_the_reader(
    tmp_path: Path, folder: Path, lang: str, precision: float, recall: float
) -> None:
    questions = load(folder / f"{lang}.jsonl")
    gold = build_run(questions, tmp_path / lang)
    found = agreement(tmp_path / lang, gold, ScoreConfig())
    report = json.dumps(found, indent=1)
    assert found["blame_precision"] >= precision, report
    assert found["present_recall"] >= recall, report
    assert found["reference_passes"] >= 0.9, report
    assert found["other_passes"] <= 0.02, report
    # the copied-words rule it replaces is far worse on the same answers
    verbatim = agreement(tmp_path / lang, gold, ScoreConfig(answer_match="verbatim"))
    assert verbatim["blame_precision"] < precision and verbatim["present_recall"] < recall
