"""The measure registry is explicit (issue 41): ``@register`` adds a class by its NAME, a
base class without one is never a measure, and a taken NAME is refused."""

from __future__ import annotations

import types
from importlib.metadata import EntryPoint

import pytest

from cofe._errors import ConfigurationError, InputError
from cofe.measures import KeywordRecall, Measure, Step, parse_measure, register
from cofe.measures import _base as measures_base
from cofe.measures._judged_measure import JudgedMeasure


def test_an_unknown_name_lists_only_real_measures() -> None:
    with pytest.raises(InputError) as raised:
        parse_measure("Nope")
    known = str(raised.value).split("known: ", 1)[1].split(", ")
    assert "" not in known and "JudgedMeasure" not in known
    assert known[0] == "AnswerCorrectness" and "KeywordRecall" in known
    assert set(known) == set(Measure.REGISTRY)


def test_no_base_class_is_registered() -> None:
    assert "" not in Measure.REGISTRY
    assert JudgedMeasure not in Measure.REGISTRY.values()
    with pytest.raises(TypeError, match="no NAME"):
        register(JudgedMeasure)


def test_a_taken_name_is_refused_and_the_first_class_kept() -> None:
    class Impostor(Measure):
        NAME = "KeywordRecall"
        STEPS = frozenset({Step.ANSWER})

    with pytest.raises(ValueError, match=r"'KeywordRecall' is already registered \(cofe\.measures"):
        register(Impostor)
    assert Measure.REGISTRY["KeywordRecall"] is KeywordRecall
    assert register(KeywordRecall) is KeywordRecall  # the same class again: nothing changes


def test_defining_a_subclass_alone_registers_nothing() -> None:
    class Unregistered(Measure):
        NAME = "UnregisteredToy"

    assert "UnregisteredToy" not in Measure.REGISTRY


def test_a_plugin_module_is_registered_and_a_clash_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shipped = types.ModuleType("shipped_toys")

    class ShippedOnce(Measure):
        NAME = "ShippedOnce"

    class Clash(Measure):
        NAME = "RougeL"

    shipped.ShippedOnce = ShippedOnce  # type: ignore[attr-defined]
    monkeypatch.setitem(__import__("sys").modules, "shipped_toys", shipped)
    entry = EntryPoint("toys", "shipped_toys", "cofe.measures")
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: [entry])
    monkeypatch.setattr(measures_base, "_loaded", [])
    try:
        assert type(parse_measure("ShippedOnce")) is ShippedOnce  # loaded on first need
        shipped.Clash = Clash  # type: ignore[attr-defined]
        monkeypatch.setattr(measures_base, "_loaded", [])
        with pytest.raises(ConfigurationError, match=r"plugin 'toys'.*'RougeL' is already"):
            parse_measure("NotAnywhere")
    finally:
        Measure.REGISTRY.pop("ShippedOnce", None)
