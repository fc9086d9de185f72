"""The answer matcher: a fragment's units, the binders, the deciders; a point's fragments."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from cofe.matching import _synonyms
from cofe.matching.answer._binders import BINDERS, DECIDERS
from cofe.matching.answer._decision import RANK, DecidedBy, Decision, PointDecision
from cofe.matching.answer._figures import dimension
from cofe.matching.answer._reading import Fragment, Reading
from cofe.matching.answer._rules import Binder, Decider
from cofe.matching.answer._text import NOT_DIGIT, PREFIX, cjk_unit
from cofe.matching.answer._units import fragment_units, initialisms, question_units, units

# an answer of this many words or more is long-form (a Chinese character counts half a word):
# reference-style answers, one or two sentences, are shorter
LONG_ANSWER = 60


class AnswerMatcher:
    """Decides, per information point, whether one answer conveys it (one sample).

    ``binders`` and ``deciders`` are the rules ``fragment`` walks, in order (class
    attributes: ``_binders.BINDERS`` and ``_binders.DECIDERS``)."""

    binders: tuple[Binder, ...] = BINDERS
    deciders: tuple[Decider, ...] = DECIDERS

    __slots__ = (
        "_acronyms",
        "_answer",
        "_answer_text",
        "_asked_about",
        "_asked_text",
        "_digits",
        "_long",
        "_measured",
        "_numbers",
        "_polarity",
        "_preceding",
        "_prefixes",
        "_question",
        "_said_words",
        "_text",
        "_words",
        "_written",
        "declining",
    )

    def __init__(self, answer: str, question: str, *, declining: bool = False) -> None:
        """``declining``: the answer declines part of what it is asked (a partial decline,
        ``cofe.refusal``): a figure it then states in no form was declined, not reworded."""
        self.declining = declining
        said = units(answer)
        self._answer: frozenset[str] = said.all
        self._digits = {NOT_DIGIT.sub("", n) for n in (*said.numbers, *said.written.values())}
        self._prefixes = {w[:PREFIX] for w in said.words if len(w) >= PREFIX}
        self._measured: frozenset[tuple[str, str]] = said.measured
        self._numbers: frozenset[str] = said.numbers
        # a figure read in a base unit -> as the answer wrote it ("1,100 MW": 1100000000 ->
        # 1100): its rounding is the written one
        self._written: dict[str, str] = said.written
        self._long: bool | None = None
        self._preceding: frozenset[tuple[str, str]] = said.preceding
        self._text: str = said.text  # the answer's text where it holds Chinese, else ""
        self._acronyms: frozenset[str] = said.acronyms
        self._answer_text = answer
        self._asked_about = question  # read on first need: most fragments never need it
        self._question: frozenset[str] | None = None
        self._asked_text = ""
        self._said_words: _synonyms.SaidWords | None = None  # read on first need
        # the answer's words with their places, for names a reading shortened (on first need)
        self._words: list[tuple[str, str, int, int]] | None = None
        # per word stem of the answer, whether each place of it is negated (``negated``)
        self._polarity: dict[str, list[bool]] | None = None

    @property
    def long(self) -> bool:
        """A long-form answer (LONG_ANSWER words or more; a Chinese character counts as half
        a word): it may restate a description in words of its own, and shares common words
        with a fragment by chance -- word counts settle less in it."""
        text = self._answer_text
        if self._long is None:
            chinese = sum(1 for c in self._text if "\u4e00" <= c <= "\u9fff")
            words = len(text.split()) + chinese / 2
            self._long = words >= LONG_ANSWER
        return self._long

    def asked(self, unit: str) -> bool:
        """The question holds the unit."""
        if self._question is None:
            asked = question_units(self._asked_about)
            self._question, self._asked_text = asked.all, asked.text
        return unit in self._question or (cjk_unit(unit) and unit in self._asked_text)

    def fragment(self, text: str, *, whole_names: tuple[str, ...] = ()) -> Fragment:
        """One fragment (``whole_names``: names a reading shortened, "New York" of "New York
        City", which the answer must write as a name of their own): the binders account for
        its units, then the first decider that answers settles it."""
        frag = fragment_units(text)
        reading = Reading(text, frag, whole_names, frag.all)
        if frag.all:
            for binder in self.binders:
                if binder.applies(self, reading):
                    reading.account(binder, binder.bind(self, reading))
        for decider in self.deciders:
            found = decider.decide(self, reading)
            if found is not None:
                bound = tuple(binder.name for binder, _ in reading.bound)
                return replace(found, rules=(*bound, decider.name))
        raise AssertionError("the last decider answers every fragment")  # pragma: no cover

    def point(self, slots: Sequence[Iterable[str]]) -> PointDecision:
        """One point: per slot the best of its alternatives; then the slots together."""
        decided: list[Fragment] = []
        for alternatives in slots:
            best: Fragment | None = None
            for written, text, shortened in _readings(alternatives):
                found = self.fragment(text, whole_names=shortened)
                if text != written:
                    found = replace(found, text=written, reading=text)
                if best is None or RANK[found.decision] < RANK[best.decision]:
                    best = found
            if best is not None:
                decided.append(best)
        kinds = {f.decision for f in decided}
        if kinds <= {Decision.PRESENT}:
            decision = Decision.PRESENT
        elif kinds == {Decision.ABSENT}:
            decision = Decision.ABSENT
        elif kinds == {Decision.ABSENT, Decision.PRESENT} or any(map(_settles, decided)):
            # a point needs every fragment: one the answer states otherwise (another value,
            # a figure in no form) settles it not conveyed, whatever the words leave open
            # about the others -- but no English word of a fragment, beside others the
            # answer touches, may be a paraphrase of it ("at once" for "immediately")
            decision = Decision.PARTIAL if Decision.PRESENT in kinds else Decision.ABSENT
        else:  # something it could not settle: the point may yet be conveyed
            decision = Decision.UNDECIDED
        rules = tuple(dict.fromkeys(rule for f in decided for rule in f.rules))
        return PointDecision(decision, DecidedBy.PARAPHRASE, _why(decision, decided), rules)


def _settles(fragment: Fragment) -> bool:
    """An absent fragment that settles its point not conveyed: absent by what the answer
    says instead, or with no trace in Chinese -- not one character of it in the answer,
    which a paraphrase would share; English words with no trace may be reworded."""
    if fragment.decision is not Decision.ABSENT:
        return False
    return fragment.rules[-1:] != ("no-trace",) or not fragment.text.isascii()


_BRACKET = re.compile(r"\s*[(（]\s*([^()（）]*?)\s*[)）]")
# a figure and the unit after it, as a bracket's whole content or as the end of the text
# before the bracket: "9.54 inches (242.3 mm)", "115 °F (46.1 °C)"
_MEASURED = re.compile(r"(\d[\d,.]*)\s*(°?\s*[^\s\d()（）,;:]+)")
_MEASURED_END = re.compile(r"(?<![\d,.])(\d[\d,.]*)\s*(°?\s*[^\s\d()（）,;:]+)\s*$")
_ACRONYM_GLOSS = re.compile(r"[A-Z]{2,8}s?")

# a generic word after a name that only says what kind of thing the name is: an answer
# names the same thing without it ("Continental Edison Company" as "Continental Edison",
# "New York City" as "New York"). A company's legal form after any name; a city, river or
# lake only after a name of two words or more ("Mexico City" is not "Mexico", nor
# "Kansas City" "Kansas"); not after "a"/"an" ("a Dutch company" is no name); never
# "University", "College" or "State" ("Boston University" is not "Boston"). Only as the
# name's last word ("New York City Council" keeps its "City"), and the rest must be a name
# of its own in the answer (the ``apart`` decider).
_NAME = r"[A-Z][\w'’.&-]*"
_DESIGNATOR = re.compile(
    r"(?<!\ba )(?<!\ban )(?<!\bA )(?<!\bAn )\b("
    rf"(?:{_NAME}\s+)*{_NAME}\s+(?i:company|corporation|inc|ltd|plc)\b\.?"
    rf"|(?:{_NAME}\s+)+{_NAME}\s+(?i:city|river|lake)\b)"
    r"(?!\s*[A-Z])"
)
_DESIGNATION = re.compile(r"\s+[A-Za-z]+\.?$")


def _readings(alternatives: Iterable[str]) -> Iterable[tuple[str, str, tuple[str, ...]]]:
    """Each alternative of a slot and its other readings (``_restated``), each also without
    the generic word after a name (``_DESIGNATOR``): (the alternative, a reading, the names
    the reading shortened)."""
    for text in alternatives:
        for reading in _restated(text):
            yield text, reading, ()
            if _DESIGNATOR.search(reading):
                names = tuple(_DESIGNATION.sub("", m[1]) for m in _DESIGNATOR.finditer(reading))
                plain = _DESIGNATOR.sub(lambda m: _DESIGNATION.sub("", m[1]), reading)
                if plain != reading:
                    yield text, plain, names


def _restated(text: str) -> Iterable[str]:
    """A fragment, and its readings without a bracket that only restates what comes before
    it: the figure in another unit ("9.54 inches (242.3 mm)": either figure says it) or the
    name's acronym ("United Nations Environment Programme (UNEP)"). Any other bracket
    ("8,000 (2011)", "Paris (Texas)", "Mary (his cousin)") states a fact of its own and
    stays."""
    yield text
    if "(" in text or "（" in text:
        plain, converted, restated = [], [], False
        last = 0
        for bracket in _BRACKET.finditer(text):
            before, inner = text[last : bracket.start()], bracket[1]
            was = _MEASURED_END.search(before)
            now = _MEASURED.fullmatch(inner)
            if was and now and dimension(was[2]) and dimension(was[2]) == dimension(now[2]):
                plain.append(before)
                converted.append(before[: was.start()] + inner)
                restated = True
            elif _ACRONYM_GLOSS.fullmatch(inner) and inner.rstrip("s") in initialisms(before):
                plain.append(before)
                converted.append(before)
                restated = True
            else:
                plain.append(text[last : bracket.end()])
                converted.append(text[last : bracket.end()])
            last = bracket.end()
        if restated:
            for reading in dict.fromkeys(
                ("".join(plain) + text[last:], "".join(converted) + text[last:])
            ):
                if reading.strip() and reading != text:
                    yield reading.strip()


def _why(decision: Decision, fragments: list[Fragment]) -> str:
    parts = []
    for f in fragments:
        if f.decision is Decision.PRESENT and f.reading:
            part = f"{f.text!r} conveyed, read as {f.reading!r}"
        elif f.decision is Decision.PRESENT and not f.missing:
            part = f"{f.text!r} conveyed"
        elif f.decision is Decision.PRESENT:
            part = f"{f.text!r} conveyed (all but {', '.join(f.missing)})"
        elif f.decision in (Decision.ABSENT, Decision.DECLINED):
            instead = f"; {f.contradiction}" if f.contradiction else ""
            part = f"{f.text!r} not conveyed ({', '.join(f.missing)} not in the answer{instead})"
        elif f.contradiction:  # a note: what the words alone cannot settle
            part = f"{f.text!r} undecided ({f.contradiction})"
        else:
            lacking = f" (lacks {', '.join(f.missing)})" if f.missing else ""
            part = f"{f.text!r} undecided{lacking}"
        parts.append(f"{part} [rule: {', '.join(f.rules)}]" if f.rules else part)
    return f"{decision.value} by paraphrase matching: " + "; ".join(parts)
