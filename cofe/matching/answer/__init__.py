"""Does an answer convey an information point it does not copy word for word?

Chunks copy their document, so a keyword is looked for verbatim in them. An answer is
written: "current annual salary is $155,756" comes back as "the current annual salary ...
is 155,756 dollars", "can't replicate" as "cannot replicate", "5 years" as "five years".
This package decides, fragment by fragment, on *content units* that survive such
rewriting, with small named rules (``rules/common``, ``rules/en``, ``rules/zh``; one file
each, with its examples; ``REGISTRY`` holds them by name):

* **normalisers** make the units of a text (``units``), in the order
  ``_normalisers`` lists: TEXT rules rewrite the text (contractions, dates, number words,
  Chinese numerals ...), TOKEN rules read each token (stopwords, units of measure, stems
  ...), CONTEXT rules read a token by the figure before it ("5 m", "836名");
* **binders** account for the fragment's units the answer does not write as they are
  (``said``, ``converted``, ``rounded``, ``synonym``, ``abbreviation`` ...) and
  **deciders** settle it (``complete``, ``other-value``, ``no-trace``, ``threshold``
  ...), in the order ``_binders`` lists (``BINDERS``, ``DECIDERS``).

Evidence is what the answer adds to the question: a unit the question already holds
proves nothing (every answer repeats its question), so it is set aside (``asked``).
Numbers and names must be found exactly. A fragment is then **present** (every number and
name, and most content units, are in the answer), **absent** (a number it states is not
in the answer, or almost none of its content is) or **undecided** (partial overlap a word
count cannot settle: never blamed on the generator; ``cofe judge`` settles it). A point is
present when all its fragments are, absent when all are absent, partial when some are
present and others absent, and undecided otherwise. Every decision names the rules that
decided it (``PointDecision.rules``, and ``[rule: ...]`` in its ``why``).
"""

from cofe.matching.answer._binders import BINDERS, DECIDERS
from cofe.matching.answer._decision import RANK, DecidedBy, Decision, PointDecision
from cofe.matching.answer._matcher import AnswerMatcher
from cofe.matching.answer._normalisers import CONTEXT, TEXT, TOKENS
from cofe.matching.answer._reading import Fragment, Reading
from cofe.matching.answer._rules import (
    REGISTRY,
    Binder,
    Case,
    ContextRule,
    Decider,
    Registry,
    TextRule,
    TokenRule,
    register,
)
from cofe.matching.answer._units import Units, read_token, units

__all__ = [
    "BINDERS",
    "CONTEXT",
    "DECIDERS",
    "RANK",
    "REGISTRY",
    "TEXT",
    "TOKENS",
    "AnswerMatcher",
    "Binder",
    "Case",
    "ContextRule",
    "DecidedBy",
    "Decider",
    "Decision",
    "Fragment",
    "PointDecision",
    "Reading",
    "Registry",
    "TextRule",
    "TokenRule",
    "Units",
    "read_token",
    "register",
    "units",
]
