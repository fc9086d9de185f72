"""Every rule of the answer matcher reaches what its examples say and nothing they exclude."""

import pytest

from cofe.matching.answer import (
    BINDERS,
    CONTEXT,
    DECIDERS,
    REGISTRY,
    TEXT,
    TOKENS,
    AnswerMatcher,
    Binder,
    Case,
    ContextRule,
    Decider,
    Registry,
    TextRule,
    TokenRule,
    read_token,
    units,
)

RULES = list(REGISTRY)


def decided(case: Case):
    matcher = AnswerMatcher(case.answer, case.question, declining=case.declining)
    return matcher.fragment(case.fragment, whole_names=case.whole_names)


def fired(token: str) -> tuple[object, list[str]]:
    names: list[str] = []
    found = read_token(token, names)
    return ("" if found is None else found[0]), names


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_each_rule_reaches_its_examples(rule):
    for example in rule.reaches:
        if isinstance(rule, TextRule):
            text, expected = example
            assert rule.applies(text), (rule.name, text)
            assert rule.probe(text) == expected, (rule.name, text)
        elif isinstance(rule, TokenRule):
            token, expected = example
            unit, names = fired(token)
            assert rule.name in names and unit == expected, (rule.name, token, unit, names)
        elif isinstance(rule, ContextRule):
            text, expected = example
            assert expected in units(text).all, (rule.name, text, units(text).all)
        else:
            found = decided(example)
            assert rule.name in found.rules, (rule.name, example, found)
            assert found.decision is example.decision, (rule.name, example, found)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_each_rule_leaves_what_it_must_not_reach(rule):
    for example in rule.misses:
        if isinstance(rule, TextRule):
            assert rule.probe(example) == example, (rule.name, example)
        elif isinstance(rule, TokenRule):
            _, names = fired(example)
            assert rule.name not in names, (rule.name, example, names)
        elif isinstance(rule, ContextRule):
            text, unwanted = example
            assert unwanted not in units(text).all, (rule.name, text, units(text).all)
        else:
            found = decided(example)
            assert rule.name not in found.rules, (rule.name, example, found)
            assert found.decision is example.decision, (rule.name, example, found)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_every_rule_has_examples_of_both_kinds_and_a_one_line_doc(rule):
    assert rule.reaches and rule.misses, rule.name
    assert rule.doc and "\n" not in rule.doc


def test_the_registry_refuses_a_second_rule_of_a_name():
    registry = Registry()
    rule = REGISTRY["said"]
    registry.add(rule)
    with pytest.raises(ValueError, match="already registered"):
        registry.add(rule)
    with pytest.raises(ValueError, match="already registered"):
        REGISTRY.add(REGISTRY["rounded"])


def test_the_registry_refuses_a_name_not_in_kebab_case():
    bad = Decider("Not_Kebab", "A doc.", "common", lambda m, r: None, (), ())
    with pytest.raises(ValueError, match="kebab-case"):
        Registry().add(bad)


def test_every_registered_rule_is_in_one_of_the_orders_and_each_once():
    ordered = [
        *TEXT,
        *dict.fromkeys(r for rules in TOKENS.values() for r in rules),
        *CONTEXT,
        *BINDERS,
        *DECIDERS,
    ]
    assert len({r.name for r in ordered}) == len(ordered)
    assert {r.name for r in ordered} == {r.name for r in REGISTRY}
    assert all(isinstance(r, Binder) for r in BINDERS)
    assert all(isinstance(r, Decider) for r in DECIDERS)


def test_a_point_names_the_rules_that_decided_it():
    found = AnswerMatcher("Nearly 47 percent of them were Hispanic.", "Who?").point([["46.9%"]])
    assert found.rules == ("said", "rounded", "complete")
    assert found.why.endswith("[rule: said, rounded, complete]")
    found = AnswerMatcher("The facade is 220 feet long.", "How long?").point([["720 feet"]])
    assert found.rules == ("said", "other-value") and "[rule: said, other-value]" in found.why


def test_the_design_map_names_every_rule():
    """docs/DESIGN.md is the map of the matcher: every registered rule is named there."""
    from pathlib import Path

    design = (Path(__file__).resolve().parents[2] / "docs" / "DESIGN.md").read_text("utf-8")
    missing = [rule.name for rule in RULES if rule.name not in design]
    assert not missing, f"rules not in docs/DESIGN.md: {missing}"
