"""Every refusal rule's own examples: what it must reach and what it must not."""

from __future__ import annotations

import pytest

from cofe.refusal import Extent, Kind, RuleError, parse_rules, read_decline, rules
from cofe.refusal._read import sentences

EXAMPLES = [
    (rule, text, reach)
    for rule in rules()
    for reach, texts in ((True, rule.reaches), (False, rule.misses))
    for text in texts
]


def _reached(rule_name: str, kind: Kind, answer: str) -> bool:
    found = read_decline(answer)
    if kind in (Kind.BARE, Kind.DECLINE):
        return found is not None and found.rule == rule_name
    if kind is Kind.LEAD_IN:
        return found is not None and rule_name in found.lead_ins
    if kind in (Kind.TURN, Kind.BEYOND):
        return found is not None and found.extent is Extent.ANSWERED and found.turn == rule_name
    rule = next(r for r in rules() if r.name == rule_name)  # explains: sentence by sentence
    return any(rule.regex.search(s) for s in sentences(answer.lower()))


@pytest.mark.parametrize(
    ("rule", "text", "reach"),
    EXAMPLES,
    ids=[f"{r.name}-{i}" for i, (r, _, _) in enumerate(EXAMPLES)],
)
def test_rule_reaches_its_examples_and_misses_its_counterexamples(rule, text, reach):
    assert _reached(rule.name, rule.kind, text) is reach, (rule.name, text)


def test_every_kind_and_both_languages_have_rules():
    kinds = {(r.kind, r.lang) for r in rules()}
    for kind in Kind:
        assert (kind, "en") in kinds and (kind, "zh") in kinds, kind


def test_rules_without_examples_or_with_unknown_pieces_are_refused():
    table = {"kind": "decline", "lang": "en", "doc": "d", "pattern": "x", "reaches": ["x"]}
    with pytest.raises(RuleError, match="reaches and misses"):
        parse_rules({"rule": {"r": {**table, "misses": []}}})
    with pytest.raises(RuleError, match="unknown vocab"):
        parse_rules({"rule": {"r": {**table, "pattern": "{nope}", "misses": ["y"]}}})
    with pytest.raises(RuleError, match="'r'"):
        parse_rules({"rule": {"r": {**table, "kind": "sometimes", "misses": ["y"]}}})
    with pytest.raises(RuleError, match="needs"):  # a decline rule names its cheap test
        parse_rules({"rule": {"r": {**table, "misses": ["y"]}}})
    assert parse_rules({"rule": {"r": {**table, "misses": ["y"], "needs": ["x"]}}})


def test_names_are_unique():
    names = [r.name for r in rules()]
    assert len(names) == len(set(names))
