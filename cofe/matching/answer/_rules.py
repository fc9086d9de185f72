"""The kinds of rule the answer matcher is made of, and the registry that names them.

Normalisers make a text's *content units* (``units``): a :class:`TextRule` rewrites the
whole text, a :class:`TokenRule` reads one token into its unit, a :class:`ContextRule`
reads a token by its neighbours (a figure before it). Binders and deciders settle a
fragment (``AnswerMatcher.fragment``): a :class:`Binder` accounts for units of the fragment
the answer does not write as they are (a rounding, a synonym); a :class:`Decider` settles
the fragment from what is accounted for. Each rule has a unique kebab-case ``name``, a
one-line ``doc``, and examples: inputs it must reach (with the effect expected) and inputs
it must not reach; tests/matching/test_rules.py checks every one of them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeVar

from cofe.matching.answer._decision import Decision

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Fragment, Reading

Lang = Literal["en", "zh", "common"]
_KEBAB = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


@dataclass(frozen=True, slots=True)
class TextRule:
    """Rewrites a whole text, where ``applies`` (a cheap test: a character, a regex) lets it."""

    name: str
    doc: str
    lang: Lang
    rewrite: Callable[[str], str]
    applies: Callable[[str], bool]
    reaches: tuple[tuple[str, str], ...]  # (text, the text rewritten)
    misses: tuple[str, ...]  # texts it leaves as they are

    def probe(self, text: str) -> str:
        return self.rewrite(text) if self.applies(text) else text


@dataclass(slots=True)
class Token:
    """One token as the token rules read it: as written, as read so far, its acronym."""

    raw: str
    token: str
    acronym: str = ""
    spelt: str = ""  # the word respelt for its stem ("armour" -> "armor"), if it was


# a token's content unit, its kind, the word it came from, the acronym it writes
Unit = tuple[str, str, str, str]
DROP: Unit = ("", "", "", "")  # a token rule's answer for a function word: no unit


@dataclass(frozen=True, slots=True)
class TokenRule:
    """Reads a token of its ``script`` ("cjk", "figure": not all letters, "word"): its
    unit (final), ``DROP`` (a function word), or None to pass it on (``token.token``
    possibly rewritten for the rules after it)."""

    name: str
    doc: str
    lang: Lang
    script: str | tuple[str, ...]  # documentation: the order lives in _normalisers.TOKENS
    read: Callable[[Token], Unit | None]
    reaches: tuple[tuple[str, str], ...]  # (token, its unit once read; "" dropped)
    misses: tuple[str, ...]  # tokens it passes on unchanged


@dataclass(frozen=True, slots=True)
class ContextRule:
    """Reads a token by the one before it (a figure); applied inside ``units``' token loop,
    in the order ``CONTEXT_RULES`` lists."""

    name: str
    doc: str
    lang: Lang
    reaches: tuple[tuple[str, str], ...]  # (text, a unit its units then hold)
    misses: tuple[tuple[str, str], ...]  # (text, a unit its units must not hold)


@dataclass(frozen=True, slots=True)
class Case:
    """An answer and a fragment: what a binder or decider is checked on."""

    answer: str
    fragment: str
    decision: Decision = Decision.PRESENT  # the fragment's decision
    question: str = "What is it?"
    whole_names: tuple[str, ...] = ()  # names a reading shortened (``AnswerMatcher.fragment``)
    declining: bool = False  # the answer declines part of what it is asked (``AnswerMatcher``)


@dataclass(frozen=True, slots=True)
class Binder:
    """Accounts for units of a fragment the answer does not write as they are: returns
    them (a subset of ``reading.missing``), where ``applies`` lets it run.

    ``trace``: whether the units it accounts for show that the answer touches the fragment
    at all (the ``no-trace`` decider): "always", "evidence" (only units the question does
    not hold), "never"."""

    name: str
    doc: str
    lang: Lang
    bind: Callable[[AnswerMatcher, Reading], frozenset[str]]
    reaches: tuple[Case, ...]
    misses: tuple[Case, ...]
    applies: Callable[[AnswerMatcher, Reading], bool] = lambda m, r: bool(r.missing)
    trace: Literal["always", "evidence", "never"] = "always"


@dataclass(frozen=True, slots=True)
class Decider:
    """Settles a fragment (a :class:`Fragment`) or passes (None) to the next decider."""

    name: str
    doc: str
    lang: Lang
    decide: Callable[[AnswerMatcher, Reading], Fragment | None]
    reaches: tuple[Case, ...]
    misses: tuple[Case, ...]


AnyRule = TextRule | TokenRule | ContextRule | Binder | Decider
R = TypeVar("R", TextRule, TokenRule, ContextRule, Binder, Decider)


@dataclass(slots=True)
class Registry:
    """Every rule by its name; a second rule of the same name is refused."""

    rules: dict[str, AnyRule] = field(default_factory=dict)

    def add(self, rule: R) -> R:
        if not _KEBAB.fullmatch(rule.name):
            raise ValueError(f"rule name {rule.name!r} is not kebab-case")
        if rule.name in self.rules:
            raise ValueError(f"a rule named {rule.name!r} is already registered")
        if not rule.doc or "\n" in rule.doc:
            raise ValueError(f"rule {rule.name!r} needs a one-line doc")
        self.rules[rule.name] = rule
        return rule

    def __getitem__(self, name: str) -> AnyRule:
        return self.rules[name]

    def __iter__(self) -> Iterator[AnyRule]:
        return iter(self.rules.values())

    def __len__(self) -> int:
        return len(self.rules)


REGISTRY = Registry()
register = REGISTRY.add


def substitution(
    name: str,
    doc: str,
    lang: Lang,
    pattern: re.Pattern[str],
    replacement: str | Callable[[re.Match[str]], str],
    applies: Callable[[str], bool],
    reaches: tuple[tuple[str, str], ...],
    misses: tuple[str, ...],
) -> TextRule:
    """A text rule that is one regex substitution (the shape most text rules have)."""

    def rewrite(text: str) -> str:
        return pattern.sub(replacement, text)

    return register(TextRule(name, doc, lang, rewrite, applies, reaches, misses))
