"""docs/DESIGN.md, "Adding a measure", followed step by step: a newcomer's measure is one
class; a scoring takes it by name, or always with DEFAULT; a package ships it by entry point."""

from __future__ import annotations

import shutil
import sys
import textwrap
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from cofe import ScoreConfig, score_run
from cofe._errors import InputError
from cofe.matching import strict_tokens
from cofe.measures import Measure, Need, Step, StepView, Unscored, register
from cofe.measures import _base as measures_base
from cofe.runlog import read_run
from tests.conftest import EXAMPLE_RUN

TOY = ("AnswerWords", "AnswerWordsAlways", "JudgedToy", "ShippedToy")


@pytest.fixture(autouse=True)
def forget_toys():
    yield
    for name in TOY:  # the registry is global: leave it as the rest of the suite expects
        Measure.REGISTRY.pop(name, None)


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    run = tmp_path_factory.mktemp("run") / "ex"
    shutil.copytree(EXAMPLE_RUN, run, ignore=shutil.ignore_patterns("scores*"))
    return run


def _answer_words(view: StepView) -> float | Unscored:
    tokens = view.tokens()
    return float(len(tokens)) if tokens else Unscored("the answer has no words")


def _define(name: str, *, default: bool = False, needs: frozenset[Need] = frozenset()):
    # step 1 of the walk-through: a subclass with a NAME, its STEPS and an evaluate(),
    # registered (``@register`` on a class statement)
    return register(
        type(
            name,
            (Measure,),
            {
                "NAME": name,
                "STEPS": frozenset({Step.ANSWER}),
                "DEFAULT": default,
                "NEEDS": needs,
                "evaluate": lambda self, view: _answer_words(view),
            },
        )
    )


def _column(result, name: str):
    rows = result.scores[(result.scores.step == "answer") & (result.scores.measure == name)]
    return rows.set_index("sample_id")["value"]


def test_a_new_measure_is_scored_when_asked_for_by_name(example):
    _define("AnswerWords")
    plain = score_run(example)
    assert "AnswerWords" not in set(plain.scores.measure)  # DEFAULT is False: only by name
    asked = score_run(example, config=ScoreConfig(measures="answer/AnswerWords,PointRecall"))
    words = _column(asked, "AnswerWords")
    answers = {r.sample_id: r.answer for r in read_run(example).records.values()}
    assert len(words) == len(plain.verdicts)
    for sample_id, value in words.items():  # the value is the toy's, sample by sample
        assert value == len(strict_tokens(answers[sample_id]))
    # the verdicts do not depend on the measures asked for
    assert list(asked.verdicts.verdict) == list(plain.verdicts.verdict)


def test_default_measures_are_taken_by_every_scoring(example):
    _define("AnswerWordsAlways", default=True)
    result = score_run(example)
    assert len(_column(result, "AnswerWordsAlways")) == len(result.verdicts)


def test_what_a_measure_needs_is_checked_against_the_run(example):
    _define("JudgedToy", needs=frozenset({Need.JUDGED}))
    with pytest.raises(InputError, match="cannot measure JudgedToy at answer"):
        score_run(example, config=ScoreConfig(measures="JudgedToy"))
    Measure.REGISTRY.pop("JudgedToy")  # a NAME is registered once: the first toy goes
    _define("JudgedToy", default=True, needs=frozenset({Need.JUDGED}))
    assert "JudgedToy" not in set(score_run(example).scores.measure)  # not judged: not taken


def test_a_package_ships_measures_by_entry_point(example, tmp_path, monkeypatch):
    (tmp_path / "toy_measures.py").write_text(
        textwrap.dedent("""
        from cofe.measures import Measure, Step

        class ShippedToy(Measure):
            NAME = "ShippedToy"
            STEPS = frozenset({Step.ANSWER})

            def evaluate(self, view):
                return 1.0
    """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    shipped = EntryPoint("toy", "toy_measures", "cofe.measures")
    monkeypatch.setattr(
        "importlib.metadata.entry_points",
        lambda group: [shipped] if group == "cofe.measures" else [],
    )
    monkeypatch.setattr(measures_base, "_loaded", [])
    result = score_run(example, config=ScoreConfig(measures="ShippedToy"))
    assert set(_column(result, "ShippedToy")) == {1.0}
    sys.modules.pop("toy_measures", None)


def test_a_plugin_that_fails_to_load_is_named(monkeypatch):
    broken = EntryPoint("broken", "no_such_module_here", "cofe.measures")
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: [broken])
    monkeypatch.setattr(measures_base, "_loaded", [])
    with pytest.raises(ValueError, match="measure plugin 'broken'"):
        ScoreConfig(measures="NotAMeasureAnywhere")


def test_the_walk_through_is_in_the_design_map():
    design = (Path(__file__).parents[2] / "docs" / "DESIGN.md").read_text(encoding="utf-8")
    assert "## Adding a measure" in design and "tests/measures/test_adding_a_measure.py" in design
