"""The binders and deciders in the order ``AnswerMatcher.fragment`` walks them.

BINDERS account for the fragment's units, each over what the ones before it left missing:

1. ``said`` -- the units the answer writes; ``zh-shortened`` and ``zh-contracted`` -- a
   Chinese word written shorter or longer;
2. ``converted`` then ``rounded`` -- figures the answer states otherwise (both read only
   the figures still missing: a figure said as it is needs neither);
3. ``synonym`` -- English words said as a WordNet synonym (after the figures: never for
   a count or a unit; a synonym is a trace only if the question does not hold the word);
4. ``asked`` -- sets the question's units aside: it reads what 1-3 accounted for (with
   nothing said and no figure, the question changes nothing), so it comes after them;
5. ``abbreviation`` -- acronyms either way, read on what the evidence still misses; not
   a trace of the fragment.

A binder added later (a figure-tolerance rule: percent and ratio, a currency) goes where
its reading needs it; one that accounts for figures, before ``asked``:

    from cofe.matching.answer import BINDERS, Binder, Case, register

    PERCENT_RATIO = register(Binder("percent-ratio", "50% said as one half.", "common",
        bind=lambda m, r: ..., reaches=(Case("half of them", "50%"),),
        misses=(Case("half of them", "40%", Decision.UNDECIDED),)))
    # in this module: BINDERS = (..., ROUNDED, PERCENT_RATIO, SYNONYM, ...)

DECIDERS settle the fragment, the first that answers deciding: with nothing missing,
``apart`` and ``rebound`` can still hold it undecided before ``complete`` calls it
present; with units missing, ``other-value`` (absent: another figure said), ``no-trace``
(absent: nothing said), ``zh-swapped`` (undecided), then ``threshold`` always answers.
``no-content`` first: a fragment of function words has nothing to bind.
"""

from __future__ import annotations

from cofe.matching.answer._rules import Binder, Decider
from cofe.matching.answer.rules.common import (
    asked,
    complete,
    conclusion,
    converted,
    currency_implied,
    figure_declined,
    figure_missing,
    long_answer,
    no_content,
    no_trace,
    other_value,
    percent_ratio,
    precision,
    rebound,
    recomputed,
    rounded,
    said,
    scale_dropped,
    scaled_rounding,
    threshold,
)
from cofe.matching.answer.rules.en import abbreviation, apart, negated, synonym, yes_no
from cofe.matching.answer.rules.zh import contracted, shortened, swapped

BINDERS: tuple[Binder, ...] = (
    said.SAID,
    shortened.SHORTENED,
    contracted.CONTRACTED,
    converted.CONVERTED,
    rounded.ROUNDED,
    precision.PRECISION,
    recomputed.RECOMPUTED,
    percent_ratio.PERCENT_RATIO,
    scaled_rounding.SCALED_ROUNDING,
    scale_dropped.SCALE_DROPPED,
    currency_implied.CURRENCY_IMPLIED,
    synonym.SYNONYM,
    asked.ASKED,
    abbreviation.ABBREVIATION,
)

DECIDERS: tuple[Decider, ...] = (
    yes_no.YES_NO,
    no_content.NO_CONTENT,
    apart.APART,
    rebound.REBOUND,
    conclusion.CONCLUSION,
    negated.NEGATED,
    complete.COMPLETE,
    other_value.OTHER_VALUE,
    figure_missing.FIGURE_MISSING,
    figure_declined.FIGURE_DECLINED,
    long_answer.LONG_ANSWER,
    no_trace.NO_TRACE,
    swapped.SWAPPED,
    threshold.THRESHOLD,
)
