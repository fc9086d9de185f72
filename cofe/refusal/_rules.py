"""Refusal rules as data: each a name, a kind, a pattern and the examples that are its tests.

The rules live in ``cofe/_data/refusal/rules.toml`` (one table a rule); this module reads
them once, fills in the shared ``[vocab]`` pieces and compiles each pattern. The registry
refuses a duplicate name, a kind it does not know and a rule without examples of both
sorts, so a rule cannot be added without saying what it must and must not reach.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from importlib import resources
from typing import Any


class Kind(StrEnum):
    """What a refusal rule finds (see the rules file's header)."""

    BARE = "bare"  # the whole answer declines and says nothing else
    DECLINE = "decline"  # a sentence that declines
    LEAD_IN = "lead_in"  # a courtesy or attribution a decline opens with
    TURN = "turn"  # after a decline, a turn towards an answer anyway
    BEYOND = "beyond"  # a decline, after an answer, of anything further than it gave
    EXPLAINS = "explains"  # a later sentence that explains the decline


@dataclass(frozen=True, slots=True)
class RefusalRule:
    name: str
    kind: Kind
    lang: str
    doc: str
    regex: re.Pattern[str]
    anywhere: bool  # a decline found anywhere in a sentence, not only at its start
    reaches: tuple[str, ...]
    misses: tuple[str, ...]
    # words one of which a text must hold for the rule to be tried (a decline rule's cheap
    # test, read for all rules at once by ``may_decline``)
    needs: tuple[str, ...] = ()


class RuleError(ValueError):
    """The rules file is malformed: a bug in cofe's data, named with the rule. Not a
    ``CofeError`` on purpose: the CLI shows its traceback, as for any bug."""


def _expand(pattern: str, vocab: dict[str, str], name: str) -> str:
    def piece(match: re.Match[str]) -> str:
        key = match[1]
        if key not in vocab:
            raise RuleError(f"refusal rule {name!r}: unknown vocab piece {{{key}}}")
        return vocab[key]

    return re.sub(r"\{([a-z_]+)\}", piece, pattern)


def parse_rules(data: dict[str, object]) -> tuple[RefusalRule, ...]:
    """The rules of one parsed rules file, in file order (order matters within a kind: the
    first decline rule that matches names the decline)."""
    vocab = data.get("vocab", {})
    tables = data.get("rule", {})
    if not isinstance(vocab, dict) or not isinstance(tables, dict):
        raise RuleError("refusal rules: [vocab] and [rule.*] must be tables")
    rules: list[RefusalRule] = []
    seen: set[str] = set()
    for name, table in tables.items():
        if name in seen:  # tomllib refuses a repeated table; a second file could not
            raise RuleError(f"refusal rule {name!r} is defined twice")
        seen.add(name)
        try:
            kind = Kind(table["kind"])
            pattern = _expand(table["pattern"], vocab, name)
            rule = RefusalRule(
                name=name,
                kind=kind,
                lang=table["lang"],
                doc=table["doc"],
                regex=re.compile(pattern),
                anywhere=table.get("where", "start") == "anywhere",
                reaches=tuple(table["reaches"]),
                misses=tuple(table["misses"]),
                needs=tuple(table.get("needs", ())),
            )
        except (KeyError, ValueError, re.error) as error:
            raise RuleError(f"refusal rule {name!r}: {error}") from error
        if not rule.reaches or not rule.misses:
            raise RuleError(f"refusal rule {name!r} needs examples it reaches and misses")
        if kind is Kind.DECLINE and not rule.needs:
            raise RuleError(f"decline rule {name!r} needs its 'needs' words (a cheap test)")
        rules.append(rule)
    return tuple(rules)


@cache
def rules() -> tuple[RefusalRule, ...]:
    """Every refusal rule shipped with cofe, in file order."""
    text = resources.files("cofe").joinpath("_data/refusal/rules.toml").read_text("utf-8")
    return parse_rules(tomllib.loads(text))


@cache
def of_kind(kind: Kind) -> tuple[RefusalRule, ...]:
    return tuple(rule for rule in rules() if rule.kind is kind)


@cache
def _needs_automaton() -> Any:  # ahocorasick.Automaton: the C extension ships no types
    import ahocorasick

    automaton = ahocorasick.Automaton()
    for rule in of_kind(Kind.DECLINE):
        for word in rule.needs:
            names = automaton.get(word, frozenset())
            automaton.add_word(word, names | {rule.name})
    automaton.make_automaton()
    return automaton


def may_decline(text: str) -> frozenset[str]:
    """The decline rules whose ``needs`` words the text holds, in one Aho-Corasick pass (the
    library cofe matches keywords with): most answers hold none and decline nothing."""
    found: set[str] = set()
    for _, names in _needs_automaton().iter(text):
        found |= names
    return frozenset(found)
