"""A text's content units: the normalisers (``_normalisers``) applied in their order."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from cofe.matching._normalize import is_cjk, strict_tokens
from cofe.matching.answer import _normalisers
from cofe.matching.answer._figures import after_number, dimensions, multiples, times
from cofe.matching.answer._rules import DROP, Token, Unit
from cofe.matching.answer._tables import table
from cofe.matching.answer._text import (
    FIGURE,
    FUNCTION,
    HAS_CJK,
    PLAIN,
    STEM,
    acronym,
    tokens,
)
from cofe.matching.answer.rules.en.clock_times import CLOCK_CODE
from cofe.matching.answer.rules.en.degrees import degrees
from cofe.matching.answer.rules.en.square_units import square_shown
from cofe.matching.answer.rules.zh._words import measures as zh_measures


@dataclass(frozen=True, slots=True)
class Units:
    """The content of a text as the matcher compares it."""

    words: frozenset[str]  # stems of content words and CJK characters
    numbers: frozenset[str]  # digits, normalised
    names: frozenset[str]  # stems of capitalised content words (fragments only)
    # (number, the content unit next to it): "720 feet" -> ("720", "feet"); a different
    # number beside the same unit in the answer states another value
    measured: frozenset[tuple[str, str]] = frozenset()
    text: str = ""  # the normalised text (digits, case folded): where CJK neighbours are read
    surface: dict[str, str] = field(default_factory=dict)  # unit -> a word it came from

    def shown(self, unit: str) -> str:
        """The unit as a person reads it: the word, not its stem; a figure as written."""
        shown = self.surface.get(unit) or self.written.get(unit, unit)
        clock = CLOCK_CODE.fullmatch(shown)
        if clock:  # "t0900" -> "09:00"
            return f"{clock[1]}:{clock[2]}"
        return square_shown(shown)

    all: frozenset[str] = frozenset()  # words and numbers together (set by ``units``)
    acronyms: frozenset[str] = frozenset()  # words written in capitals: "UK", "FCC", "MSP"
    # a figure read in a base unit -> as written ("1,142 MW": 1142000000 -> 1142): shown as
    # written, and its digits a trace of the figure however the other text scales it
    written: dict[str, str] = field(default_factory=dict)
    source: str = ""  # the text as given (fragments only): what the units lose, as signs
    # (the content unit before a number, number): "Hangzhou in 1276" -> ("hangzhou",
    # "1276"); with ``measured``, what each figure is bound to
    preceding: frozenset[tuple[str, str]] = frozenset()


def normalise(text: str) -> str:
    """The text rules in their order, each where its cheap precondition lets it."""
    for rule in _normalisers.TEXT:
        if rule.applies(text):
            text = rule.rewrite(text)
    return text


def read_token(raw: str, fired: list[str] | None = None) -> Unit | None:
    """A token's content unit, its kind, the word it came from, and the acronym it writes
    ("UK", "MSPs" -> "MSP"; else ""); None for a function word. ``fired``: collects the
    names of the token rules that read or rewrote it (for the rules' examples)."""
    t = Token(raw, raw.casefold())
    if not t.token.isascii() and is_cjk(t.token[0]):
        scripts: tuple[str, ...] = ("cjk",)
    elif not t.token.isalpha():  # a word skips every number rule: the common case
        scripts = ("figure", "word")
    else:
        scripts = ("word",)
    for script in scripts:
        if script == "word":
            t.acronym = acronym(raw)
        for rule in _normalisers.TOKENS[script]:
            before = (t.token, t.spelt)
            found = rule.read(t)
            if fired is not None and (found is not None or (t.token, t.spelt) != before):
                fired.append(rule.name)
            if found is not None:
                return None if found is DROP else found
    return None  # unreachable: the last rule of each script reads every token


unit = lru_cache(maxsize=300_000)(read_token)  # a corpus's words repeat (Zipf): read once


@lru_cache(maxsize=1)
def _zh() -> tuple[frozenset[str], str, frozenset[str], frozenset[str]]:
    zh = table("zh")
    return (
        frozenset(zh["people"]),
        zh["about"],
        frozenset(zh["bound_after_figure"]),
        frozenset(zh["half_day"]) | {"<", ">"},
    )


def units(text: str, *, names: bool = False) -> Units:
    """The content units of a text (``names``: a fragment's -- also note its capitalised
    words and keep the text)."""
    given = text if names else ""
    text = normalise(text)
    people, about, bound_after_figure, directions = _zh()
    zh_measure = zh_measures()
    measure_after = after_number()
    scaled_units = multiples()
    dimension = dimensions()
    degree_words = degrees()
    words: set[str] = set()
    numbers: set[str] = set()
    capitals: set[str] = set()
    surface: dict[str, str] = {}
    written: dict[str, str] = {}  # a figure read in a base unit -> the figure as written
    acronyms: set[str] = set()
    # (number, the content unit right after it): "720 feet", "1998 年" -- its unit
    measured: set[tuple[str, str]] = set()
    number = ""  # the unit before was this number: "in", "m", "c" may be units of measure
    ordinal = False  # the figure came after "第": a rank ("第3名", third place), not a count
    before = ""  # the token before this one
    since_figure = 9  # tokens since the last figure: a multiple scales only the one before it
    preceding: set[tuple[str, str]] = set()
    previous = ""  # the last content unit, when no figure came after it
    one = False  # the token before was "1", which is a figure only before a unit of measure
    for raw in tokens(text.replace("_", "dot") if "_" in text else text):
        if number and not raw.isascii() and is_cjk(raw[0]):
            rest = raw.lstrip(about)  # zh-about: "70多种" = "70种", "6万多吨" = "60000吨"
            if rest and rest != raw and (len(rest) == 1 or rest in zh_measure):
                raw = rest
            if raw in people and not ordinal:  # zh-people
                raw = "人"
        ordinal, before = before.endswith("第"), raw  # read by the token after a figure
        since_figure += 1
        found: Unit | None
        if raw in bound_after_figure and since_figure > 3:  # zh-bound-after-figure
            found = (raw, PLAIN, raw, "")  # not after a figure (and its unit): a word
        else:
            found = unit(raw)
        if number and raw.casefold() in degree_words:  # degrees: the scale after it
            continue
        if found is not None and found[0] == "1" and found[1] is PLAIN:  # one-before-unit
            one = True  # "1 km": a figure after all, when a unit of measure follows
        elif one and found is not None and found[0] in dimension:
            numbers.add("1")
            number, one = "1", False
            since_figure = 1  # the figure was the token before: "1 decade" scales to 10 years
        else:
            one = False
        if number and raw.casefold() in measure_after:  # measure-after-number: "5 m"
            after = measure_after[raw.casefold()]
            found = (after, STEM, after, "")
        if found is None:
            continue
        unit_, kind, word, acronym_ = found
        if acronym_:
            acronyms.add(acronym_)
            if kind is FUNCTION:
                continue
        if kind is FIGURE:
            numbers.add(unit_)
            if previous:
                preceding.add((previous, unit_))
            number, previous = unit_, ""
            since_figure = 0
            continue
        if unit_ in scaled_units:  # multiples
            base, by, alone = scaled_units[unit_]
            # only right after its figure: "in 2010, a decade after" is no 20,100 years
            scaled = times(number, by) if number and since_figure == 1 else None
            if scaled is not None:
                numbers.discard(number)
                numbers.add(scaled)
                written[scaled] = number  # a trace, and how the fragment wrote it
                number, unit_ = scaled, base
            elif alone:
                unit_ = base
        words.add(unit_)
        previous = unit_
        if number:
            measured.add((number, unit_))
            number = ""
        if names and unit_ in directions:
            capitals.add(unit_)
            surface.setdefault(unit_, word)  # "lacks 超过", not "lacks >"
        if names and kind is STEM:  # a fragment: its words as written, for evidence
            if unit_ != word:
                surface.setdefault(unit_, word)
            if raw[0].isupper():
                capitals.add(unit_)
    return Units(
        frozenset(words),
        frozenset(numbers),
        frozenset(capitals),
        frozenset(measured),
        text.casefold() if not text.isascii() and HAS_CJK.search(text) else "",
        surface,
        frozenset(words | numbers),
        frozenset(acronyms),
        written,
        given,
        frozenset(preceding),
    )


@lru_cache(maxsize=1)
def _joiners() -> frozenset[str]:
    return frozenset(table("en")["name_joiners"])


@lru_cache(maxsize=100_000)
def initialisms(text: str) -> dict[str, frozenset[str]]:
    """What each run of capitalised words abbreviates to, with the units it covers:
    "Supreme Court of the United Kingdom" -> "UK": {united, kingdom}, "SC": {supreme,
    court}, "SCUK": all four (joiners such as "of the" give no letter)."""
    joiners = _joiners()
    runs: list[list[tuple[str, str]]] = [[]]
    for raw in strict_tokens(text, fold=False):
        found = unit(raw) if raw[0].isupper() and raw.isascii() else None
        if found is not None and found[1] is STEM:
            runs[-1].append((found[0], raw[0]))
        elif not (runs[-1] and raw.casefold() in joiners):
            runs.append([])
    out: dict[str, frozenset[str]] = {}
    for run in runs:
        for start in range(len(run)):
            for end in range(start + 2, min(len(run), start + 7) + 1):
                letters = "".join(initial for _, initial in run[start:end])
                out[letters] = out.get(letters, frozenset()) | {u for u, _ in run[start:end]}
    return out


@lru_cache(maxsize=100_000)
def fragment_units(fragment: str) -> Units:
    return units(fragment, names=True)


@lru_cache(maxsize=10_000)  # canary and monitoring sets ask the same questions every round
def question_units(question: str) -> Units:
    return units(question)
