"""no-trace: nothing of the fragment in the answer, not even a trace: absent."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._figures import kind, rounds_to
from cofe.matching.answer._reading import Fragment
from cofe.matching.answer._rules import Case, Decider, register
from cofe.matching.answer._text import NOT_DIGIT, PREFIX, cjk_unit
from cofe.matching.answer._units import Units
from cofe.matching.answer.rules.common.currency_implied import CURRENCIES
from cofe.matching.answer.rules.en.clock_times import CLOCK_CODE
from cofe.matching.answer.rules.zh._words import stop_characters

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading


def _other_unit(m: AnswerMatcher, frag: Units, number: str) -> bool:
    """The answer states a figure of the kind the fragment's figure measures, in another
    unit (a conversion it may have rounded otherwise): a trace, not an absence."""
    for figure, unit in frag.measured:
        measured = kind(unit)
        if figure == number and measured:
            return any(u != unit and kind(u) == measured for _, u in m._measured)
    return False


def touched(m: AnswerMatcher, unit: str, frag: Units) -> bool:
    """Any trace of a unit the answer does not say: a Chinese word, any of its
    characters; a number, its digits however written ("1,142" and "1.142"); a word, a
    word of the answer starting alike ("herbal" and "herbs"; a name only as itself:
    "France" is not "Franciscan")."""
    if cjk_unit(unit):
        stop = stop_characters()
        return any(char in m._text for char in unit if char not in stop)
    clock = CLOCK_CODE.fullmatch(unit)
    if clock:  # a time: its hour said on either clock
        hours = {str(int(clock[1]) % 12 or 12), str(int(clock[1]))}
        return any(n.partition(".")[0] in hours for n in m._numbers) or bool(hours & m._digits)
    if unit[0].isdigit():
        written = frag.written.get(unit, unit)
        digits = NOT_DIGIT.sub("", unit)
        return (
            digits in m._digits
            or NOT_DIGIT.sub("", written) in m._digits
            # its last digits ("'97" of 1997, "八十年代" of the 1980s)
            or any(len(said) >= 2 and digits.endswith(said) for said in m._digits)
            or _other_unit(m, frag, unit)
            or any(rounds_to(unit, said) for said in m._numbers)  # "2.5" of "2.46"
        )
    if unit in frag.names:
        return False
    return len(unit) >= PREFIX and unit[:PREFIX] in m._prefixes


def _decide(m: AnswerMatcher, r: Reading) -> Fragment | None:
    # no trace at all, even of the question's words
    # a currency the answer also names is no trace: it stands beside every amount
    if r.traced(CURRENCIES) or any(
        touched(m, u, r.frag) for u in r.everything if u not in CURRENCIES
    ):
        return None
    return Fragment(Decision.ABSENT, r.text, r.shown())


NO_TRACE = register(
    Decider(
        "no-trace",
        "No unit said, none bound, and no trace (a word's first letters, a figure's digits).",
        "common",
        _decide,
        reaches=(Case("The weather was mild.", "massive exodus to the cities", Decision.ABSENT),),
        misses=(Case("Doctors who used herbs.", "herbal remedies", Decision.UNDECIDED),),
    )
)
