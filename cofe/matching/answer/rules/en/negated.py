"""negated: every word of the fragment is said, but a word of it only ever under a negation
the fragment does not have ("3M is not capital-intensive" for "capital-intensive", "revenue
did not increase" for "revenue increased") -- or the fragment negates what the answer says
plainly ("not capital-intensive" for "is capital-intensive"): the answer states the
opposite, not conveyed."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._reading import Fragment
from cofe.matching.answer._rules import Case, Decider, register
from cofe.matching.answer._text import PREFIX

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading

_NEGATION = frozenset(("not", "no", "never", "cannot", "neither", "nor", "n't"))
_WORD = re.compile(r"[a-z][a-z'-]*|\d[\d.,]*|[^\w\s]", re.I)
# between a negation and the word it negates: auxiliaries, articles, adverbs of degree
# ("is not a capital-intensive", "did not really increase", "cannot be determined")
_BETWEEN = frozenset(
    "a an the be been being have has had do does did is are was were very so too as any "
    "ever yet really necessarily always quite fully entirely".split()
)
# "no less than", "not only", "no longer": a negation word that negates nothing said
_IDIOMS = frozenset(("less", "fewer", "more", "only", "just", "merely", "longer", "doubt"))


def _tokens(text: str) -> list[str]:
    out = []
    for token in _WORD.findall(text.lower().replace("\u2019", "'")):
        if token.endswith("n't") and len(token) > 3:
            out += [token[:-3], "n't"]  # "didn't" -> "did", "n't"
        else:
            out.append(token)
    return out


def _negated_at(tokens: list[str], at: int) -> bool:
    """The word at ``at`` is what a negation before it negates (only auxiliaries, articles
    and adverbs of degree between them)."""
    if tokens[at] in _IDIOMS:
        return False
    for token in reversed(tokens[:at]):
        if token in _NEGATION:
            return True
        if token not in _BETWEEN:
            return False
    return False


def _stems(tokens: list[str], negated: bool) -> set[str]:
    """The content words (by their first letters) a negation negates, or all of them."""
    return {
        t[:PREFIX]
        for i, t in enumerate(tokens)
        if t[0].isalpha()
        and len(t) >= PREFIX
        and t not in _NEGATION
        and t not in _BETWEEN
        and (not negated or _negated_at(tokens, i))
    }


def _decide(m: AnswerMatcher, r: Reading) -> Fragment | None:
    if r.missing or not r.text.isascii():
        return None  # only a fragment wholly said: the others are settled by what is missing
    frag = _tokens(r.text)
    negated_in_fragment = _stems(frag, negated=True)
    places = m._polarity
    if places is None:  # read once per answer, on the first fragment wholly said
        answer = _tokens(m._answer_text)
        places = {}
        for i, t in enumerate(answer):
            if t[0].isalpha() and len(t) >= PREFIX:
                places.setdefault(t[:PREFIX], []).append(_negated_at(answer, i))
        m._polarity = places
    for stem in sorted(_stems(frag, negated=False)):
        said = places.get(stem)
        if not said:
            continue  # said otherwise (a number, a synonym): nothing to read a negation on
        negated_here = stem in negated_in_fragment
        if (negated_here and not any(said)) or (not negated_here and all(said)):
            how = "plainly" if negated_here else "only negated"
            return Fragment(Decision.ABSENT, r.text, (), f"the answer says {stem}... {how}")
    return None


NEGATED = register(
    Decider(
        "negated",
        "Every word said, but one only under a negation the fragment lacks (or the reverse).",
        "en",
        _decide,
        reaches=(
            Case("3M is not a capital-intensive business.", "capital-intensive", Decision.ABSENT),
            Case(
                "Revenue didn't increase in 2022; it fell 3%.", "revenue increased", Decision.ABSENT
            ),
            Case("3M is a capital-intensive business.", "not capital-intensive", Decision.ABSENT),
        ),
        misses=(
            Case("3M is a capital-intensive business.", "capital-intensive"),
            Case("Revenue did not fall; it increased 5%.", "revenue increased"),
            Case("Not only did revenue increase, margins widened.", "revenue increased"),
            Case("It is not capital-intensive.", "not capital-intensive"),
            Case("No, revenue increased by 5%.", "revenue increased"),
        ),
    )
)
