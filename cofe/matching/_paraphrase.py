"""Does an answer convey an information point it does not copy word for word?

Chunks copy their document, so a keyword is looked for verbatim in them. An
answer is written: "current annual salary is $155,756" comes back as "the
current annual salary ... is 155,756 dollars", "can't replicate" as "cannot
replicate", "5 years" as "five years". This module decides, fragment by
fragment, on *content units* that survive such rewriting:

* English words stemmed (Snowball, through PyStemmer: C speed on the scorer's
  hot path), contractions expanded, stopwords dropped;
* numbers as digits: number words ("five", "twenty-five", "a million") through
  text2num, Chinese numerals, dates and percentages ("一九九八年", "百分之五十")
  through cn2an, scales ("1.2 million" = 1200000), thousands separators and
  leading zeros dropped, ordinals as numbers, "%" as "percent";
* Chinese, Japanese and Korean text character by character, function
  characters dropped.

Evidence is what the answer adds to the question: a unit the question already
holds proves nothing (every answer repeats its question), so it is set aside.
Numbers and names must be found exactly. A fragment is then

* **present** -- every number and name, and most content units, are in the answer;
* **absent** -- a number it states is not in the answer, or almost none of its
  content is;
* **undecided** -- partial overlap a word count cannot settle (a synonym, a
  reworded phrase): never blamed on the generator; ``cofe judge`` settles it.

A point is present when all its fragments are, absent when all are absent,
partial when some are present and others absent, and undecided otherwise.
"""

from __future__ import annotations

import re
import unicodedata
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from itertools import pairwise
from typing import Any

from cofe.matching._labels import STOPWORDS
from cofe.matching._normalize import is_cjk, strict_tokens


class Decision(StrEnum):
    """Whether an answer conveys an information point (or one of its fragments)."""

    PRESENT = "present"
    PARTIAL = "partial"  # some fragments conveyed, others established absent
    ABSENT = "absent"
    UNDECIDED = "undecided"  # partial overlap the offline matcher cannot settle

    @property
    def conveyed(self) -> bool | None:
        """True / False when settled (a partial point is not conveyed whole); None undecided."""
        if self is Decision.UNDECIDED:
            return None
        return self is Decision.PRESENT


class Rule(StrEnum):
    """What decided: the words themselves, the paraphrase matcher, or the LLM judge."""

    VERBATIM = "verbatim"
    PARAPHRASE = "paraphrase"
    JUDGE = "judge"


@dataclass(frozen=True, slots=True)
class PointDecision:
    decision: Decision
    rule: Rule
    why: str = ""  # evidence a person can check: what was (not) found


# At or above this share of a fragment's content units found, it is present; at or below
# ABSENT_AT, absent; in between, undecided. Chosen on the shipped dev set
# (benchmarks/data/answer_points) with blame precision first: an undecided point costs a
# judge call, a wrong "absent" blames the generator for a correct answer.
PRESENT_AT = 2 / 3

# Function words of the languages the matcher reads: nltk's English list (cofe's STOPWORDS
# holds the same words and a few Chinese ones) plus the words contractions expand to.
_EXTRA_STOPWORDS = frozenset(
    "would could shall might must may also yes none n't one ones there's".split()
)
# Chinese function characters: particles, copulas, pronouns, measure words, conjunctions.
_CJK_STOP = frozenset("的了是在和与或及也都就而之其这那个为以于被把将有着过等们他她它我你该此并")

_CONTRACTIONS = (
    (re.compile(r"\bcan['’]t\b", re.I), "can not"),
    (re.compile(r"\bwon['’]t\b", re.I), "will not"),
    (re.compile(r"\bshan['’]t\b", re.I), "shall not"),
    (re.compile(r"\bcannot\b", re.I), "can not"),
    (re.compile(r"n['’]t\b", re.I), " not"),
    (re.compile(r"['’](re|ve|ll|d|m)\b", re.I), " "),
    (re.compile(r"['’]s\b", re.I), ""),  # possessive or "is": a function word either way
)
_PERCENT = re.compile(r"%|\bper ?cent\b|\bpct\b", re.I)
_SCALE = re.compile(r"(\d+(?:\.\d+)?)\s*(thousand|million|billion|trillion)\b", re.I)
_MONEY_SCALE = re.compile(r"[$£€¥]\s?(\d+(?:\.\d+)?)\s?(k|m|bn|b)\b", re.I)
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_ORDINAL = re.compile(r"^(\d+)(?:st|nd|rd|th)$")
_DECIMAL = re.compile(r"(?<=\d)\.(?=\d)")
_NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy "
    "eighty ninety hundred thousand million billion first second third fourth fifth sixth "
    "seventh eighth ninth tenth half dozen".split()
)
_WORD = re.compile(r"[a-z]+")
_CJK_NUMERAL = re.compile(r"[零〇一二三四五六七八九十百千万亿两]")
_MONTHS = {
    "jan": "january", "feb": "february", "mar": "march", "apr": "april", "jun": "june",
    "jul": "july", "aug": "august", "sep": "september", "sept": "september",
    "oct": "october", "nov": "november", "dec": "december",
}  # fmt: skip
_HAS_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD_HYPHEN = re.compile(r"(?<=[A-Za-z])-(?=[A-Za-z])")
_SPACED_THOUSANDS = re.compile(r"(?<=\d)[ \u00a0\u202f](?=\d{3}(?!\d))")


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
        """The unit as a person reads it: the word, not its stem."""
        return self.surface.get(unit, unit)

    all: frozenset[str] = frozenset()  # words and numbers together (set by ``units``)


def _digits(text: str) -> str:
    """Number words, Chinese numerals and scales as digits; percent signs as a word."""
    # each rule only where its trigger can be (most answers hold none: a hot path)
    if not text.isascii() and _CJK_NUMERAL.search(text):
        text = _cn2an(text.replace("两", "二"))  # cn2an reads 两 only inside a larger numeral
    digits = _ANY_DIGIT.search(text) is not None
    if digits and _MONEY_SCALE.search(text):  # "£304m" = 304 million ("100m" alone: metres)
        text = _MONEY_SCALE.sub(_money_scaled, text)
    if digits and _SCALE.search(text):  # before text2num: it reads "1.2 million" as 1.2, 1e6
        text = _SCALE.sub(_scaled, text)
    if _has_number_word(text):
        text = _alpha2digit(text)
    if "%" in text or "pc" in text or "per" in text.lower():
        text = _PERCENT.sub(" percent ", text)
    return text


_STEM, _FIGURE, _PLAIN = "stem", "figure", "plain"  # a word's stem, a number, any other unit


@lru_cache(maxsize=300_000)  # a corpus's words repeat (Zipf): each token is read once
def _unit(raw: str) -> tuple[str, str, str] | None:
    """A token's content unit, its kind and the word it came from; None for a function word."""
    token = raw.casefold()
    if not token.isascii() and is_cjk(token[0]):
        return None if _CJK_STOP.issuperset(token) else (token, _PLAIN, token)
    if not token.isalpha():  # a word skips every number rule: the common case
        if token[0].isdigit() and "dot" in token:
            return (token.replace("dot", "."), _FIGURE, token)
        ordinal = _ORDINAL.match(token)
        token = ordinal[1] if ordinal else token
        if not token.isalpha():  # a figure, or a code ("5a", "b737")
            token = token.lstrip("0") or "0"
            # "one" is mostly an article ("one of the largest"): a content word, not a figure
            return (token, _PLAIN if token == "1" else _FIGURE, token)
    if token in STOPWORDS or token in _EXTRA_STOPWORDS:
        return None
    token = _MONTHS.get(token, token)
    stem = _stem(token) if token.isascii() else token  # Snowball English: ASCII words
    return (stem, _STEM, token)


def _has_number_word(text: str) -> bool:
    # a set look-up per word is several times faster than the alternation's scan
    return not _NUMBER_WORDS.isdisjoint(_WORD.findall(text.lower()))


def _scaled(match: re.Match[str]) -> str:
    value = float(match[1]) * _SCALES[match[2].lower()]
    return str(int(value)) if value.is_integer() else str(value)


def _money_scaled(match: re.Match[str]) -> str:
    word = {"k": "thousand", "m": "million", "bn": "billion", "b": "billion"}[match[2].lower()]
    return f"{match[0][0]} {match[1]} {word}"


def _cn2an(text: str) -> str:
    import cn2an  # deferred: loads its tables on first use

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # it warns about every numeral-like word it leaves
        try:
            return str(cn2an.transform(text, "cn2an"))
        except (ValueError, KeyError, IndexError):  # a numeral it cannot parse: keep the text
            return text


def _alpha2digit(text: str) -> str:
    from text_to_num import alpha2digit

    try:
        return str(alpha2digit(text, "en", threshold=0))  # "two sons" = "2 sons"
    except (ValueError, TypeError):
        return text


@lru_cache(maxsize=1)
def _stemmer() -> Any:  # Stemmer.Stemmer: PyStemmer ships no types
    import Stemmer

    return Stemmer.Stemmer("english")


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return str(_stemmer().stemWord(word))


def units(text: str, *, names: bool = False) -> Units:
    """The content units of a text (``names``: also note its capitalised words)."""
    if not text.isascii():  # ASCII is already NFKC (the scorer's hot path: skip the call)
        text = unicodedata.normalize("NFKC", text)
    if "'" in text or "’" in text or "annot" in text:
        for pattern, replacement in _CONTRACTIONS:
            text = pattern.sub(replacement, text)
    if "-" in text:
        text = _WORD_HYPHEN.sub(" ", text)  # "four-week" -> "four week" (text2num reads it)
    if _ANY_DIGIT.search(text):
        text = _SPACED_THOUSANDS.sub("", text)  # "13 000" = "13,000" = "13000"
    text = _digits(text)  # number words and numerals become digits here
    if "." in text:
        text = _DECIMAL.sub("_", text)  # "3.5" stays one number, not "3" and "5"
    words: set[str] = set()
    numbers: set[str] = set()
    capitals: set[str] = set()
    surface: dict[str, str] = {}
    sequence: list[tuple[str, bool]] = []  # content units in order: (unit, is a number)
    for raw in _tokens(text.replace("_", "dot") if "_" in text else text):
        found = _unit(raw)
        if found is None:
            continue
        unit, kind, word = found
        if kind is _FIGURE:
            numbers.add(unit)
            sequence.append((unit, True))
            continue
        words.add(unit)
        sequence.append((unit, False))
        if kind is _STEM:
            if unit != word:
                surface.setdefault(unit, word)
            if names and raw[0].isupper():
                capitals.add(unit)
    return Units(
        frozenset(words),
        frozenset(numbers),
        frozenset(capitals),
        _measured(sequence) if numbers else frozenset(),
        text.casefold() if not text.isascii() and _HAS_CJK.search(text) else "",
        surface,
        frozenset(words | numbers),
    )


def _cjk_unit(unit: str) -> bool:
    return not unit.isascii() and is_cjk(unit[0])  # most units are ASCII: no regex for them


def _tokens(text: str) -> list[str]:
    """Strict tokens, with each run of Chinese characters as its words (jieba) instead of
    character by character: "多伦多国际机场" is 多伦多 / 国际 / 机场, so a name or a word
    the answer replaced counts whole, not as characters scattered over the answer."""
    tokens = strict_tokens(text, fold=False)
    if text.isascii() or not _HAS_CJK.search(text):
        return tokens
    out: list[str] = []
    run: list[str] = []
    for token in [*tokens, ""]:
        if token and is_cjk(token):
            run.append(token)
            continue
        if run:
            out.extend(_segment("".join(run)))
            run = []
        if token:
            out.append(token)
    return out


@lru_cache(maxsize=100_000)
def _segment(run: str) -> list[str]:
    return list(_jieba().lcut(run, HMM=True))


@lru_cache(maxsize=1)
def _jieba() -> Any:  # the jieba module: it ships no types
    import logging

    import jieba  # deferred: builds its prefix dictionary (~0.4 s) on first use

    jieba.setLogLevel(logging.WARNING)
    return jieba


def _measured(sequence: list[tuple[str, bool]]) -> frozenset[tuple[str, str]]:
    """Each number with the content unit right after it (its unit: "720 feet", "1998 年")."""
    return frozenset(
        (unit, following)
        for (unit, number), (following, other) in pairwise(sequence)
        if number and not other
    )


@lru_cache(maxsize=100_000)
def _fragment_units(fragment: str) -> Units:
    return units(fragment, names=True)


@lru_cache(maxsize=10_000)  # canary and monitoring sets ask the same questions every round
def _question_units(question: str) -> Units:
    return units(question)


@dataclass(frozen=True, slots=True)
class _Fragment:
    decision: Decision
    text: str
    missing: tuple[str, ...] = ()  # units not in the answer, for evidence
    contradiction: str = ""  # another value the answer states instead


class AnswerMatcher:
    """Decides, per information point, whether one answer conveys it (one sample)."""

    __slots__ = (
        "_answer",
        "_asked_about",
        "_asked_text",
        "_digits",
        "_measured",
        "_prefixes",
        "_question",
        "_surface",
        "_text",
    )

    def __init__(self, answer: str, question: str) -> None:
        said = units(answer)
        self._answer = said.all
        self._digits = {_DIGITS.sub("", n) for n in said.numbers}
        self._prefixes = {w[:_PREFIX] for w in said.words if len(w) >= _PREFIX}
        self._measured = said.measured
        self._surface = said.surface
        self._text = said.text
        self._asked_about = question  # read on first need: most fragments never need it
        self._question: frozenset[str] | None = None
        self._asked_text = ""

    def _said(self, unit: str) -> bool:
        if unit in self._answer:
            return True
        if not _cjk_unit(unit):
            return False
        # a Chinese word counts wherever the answer writes it, however jieba cut the answer;
        # a longer one also without its last character, as a stem ("浙江省" said as "浙江")
        text = self._text
        return unit in text or (len(unit) >= 3 and unit[:-1] in text)

    def _touched(self, unit: str, frag: Units) -> bool:
        """Any trace of the unit in the answer: a Chinese word, any of its characters; a
        number, its digits however written ("1,142" and "1.142"); a word, a word of the
        answer starting alike ("herbal" and "herbs"; a name only as itself: "France" is
        not "Franciscan")."""
        if _cjk_unit(unit):
            return any(char in self._text for char in unit if char not in _CJK_STOP)
        if self._said(unit):
            return True
        if unit[0].isdigit():
            return _DIGITS.sub("", unit) in self._digits
        if unit in frag.names:
            return False
        return len(unit) >= _PREFIX and unit[:_PREFIX] in self._prefixes

    def _asked(self, unit: str) -> bool:
        if self._question is None:
            asked = _question_units(self._asked_about)
            self._question, self._asked_text = asked.all, asked.text
        return unit in self._question or (_cjk_unit(unit) and unit in self._asked_text)

    def fragment(self, text: str) -> _Fragment:
        frag = _fragment_units(text)
        everything = frag.all
        if not everything:
            return _Fragment(Decision.UNDECIDED, text)
        if frag.numbers or any(self._said(u) for u in everything):
            evidence = frozenset(u for u in everything if not self._asked(u))
            if not evidence:  # the fragment only repeats the question: judge it on all of it
                evidence = everything
            missing = frozenset(u for u in evidence if not self._said(u))
        else:  # none of it in the answer: the question, read or not, changes nothing
            evidence = missing = everything
        if not missing:
            return _Fragment(Decision.PRESENT, text)
        shown = tuple(sorted(frag.shown(unit) for unit in missing))
        numbers = frag.numbers & missing
        other = self._other_value(frag, numbers)
        if other:
            return _Fragment(Decision.ABSENT, text, shown, other)
        if not any(self._touched(u, frag) for u in everything):  # no trace, even in the question
            return _Fragment(Decision.ABSENT, text, shown)
        found = 1.0 - len(missing) / len(evidence)
        names = frag.names & missing
        swapped = _swapped(frag.text, self._text, missing) if frag.text else ""
        if found >= PRESENT_AT and not swapped and not names and not numbers:
            return _Fragment(Decision.PRESENT, text, shown)
        if swapped:
            shown = (*shown, f"{swapped} in the answer")
        return _Fragment(Decision.UNDECIDED, text, shown)

    def _other_value(self, frag: Units, missing_numbers: frozenset[str]) -> str:
        """A figure of the fragment the answer states otherwise: another number beside the
        same unit ("720 feet" against "220 feet")."""
        if not missing_numbers or len(frag.numbers) > 1:
            return ""  # with several figures, another one beside the same unit may be apart
        for number, unit in frag.measured:
            if number in missing_numbers:
                for said, beside in self._measured:
                    # another value of the same kind: "220 feet" for "720 feet", not "4 年"
                    # (a duration) for "2000 年" (a year)
                    if beside == unit and said != number and len(said) == len(number):
                        return f"the answer says {said} {self._surface.get(unit, unit)}"
        return ""

    def point(self, slots: Sequence[Iterable[str]]) -> PointDecision:
        """One point: per slot the best of its alternatives; then the slots together."""
        decided: list[_Fragment] = []
        for alternatives in slots:
            best: _Fragment | None = None
            for text in alternatives:
                found = self.fragment(text)
                if best is None or _RANK[found.decision] < _RANK[best.decision]:
                    best = found
            if best is not None:
                decided.append(best)
        kinds = {f.decision for f in decided}
        if kinds <= {Decision.PRESENT}:
            decision = Decision.PRESENT
        elif kinds == {Decision.ABSENT}:
            decision = Decision.ABSENT
        elif kinds == {Decision.ABSENT, Decision.PRESENT}:
            decision = Decision.PARTIAL
        else:  # something it could not settle: the point may yet be conveyed
            decision = Decision.UNDECIDED
        return PointDecision(decision, Rule.PARAPHRASE, _why(decision, decided))


def _swapped(fragment: str, answer: str, missing: frozenset[str]) -> str:
    """A Chinese character of the fragment that the answer replaced inside the same phrase:
    "南非东开普省" said as "南非西开普省", "捐献" as "捐赠". One character carries a word's
    meaning (a direction, a rank, a synonym): the swap cannot be settled by characters."""
    chars = {char for unit in missing if _cjk_unit(unit) for char in unit}
    for i, char in enumerate(fragment):
        if char not in chars or i == 0 or i + 1 >= len(fragment):
            continue
        before, after = fragment[i - 1], fragment[i + 1]
        if not (is_cjk(before) and is_cjk(after)):
            continue
        start = answer.find(before)
        while start != -1 and start + 2 < len(answer):
            if answer[start + 2] == after and answer[start + 1] != char:
                return answer[start : start + 3]
            start = answer.find(before, start + 1)
    return ""


_DIGITS = re.compile(r"\D")
_ANY_DIGIT = re.compile(r"\d")
_PREFIX = 4  # letters two words must share to count as a trace of one another


_RANK = {Decision.PRESENT: 0, Decision.UNDECIDED: 1, Decision.PARTIAL: 2, Decision.ABSENT: 3}


def _why(decision: Decision, fragments: list[_Fragment]) -> str:
    parts = []
    for f in fragments:
        if f.decision is Decision.PRESENT and not f.missing:
            parts.append(f"{f.text!r} conveyed")
        elif f.decision is Decision.PRESENT:
            parts.append(f"{f.text!r} conveyed (all but {', '.join(f.missing)})")
        elif f.decision is Decision.ABSENT:
            instead = f"; {f.contradiction}" if f.contradiction else ""
            parts.append(
                f"{f.text!r} not conveyed ({', '.join(f.missing)} not in the answer{instead})"
            )
        else:
            lacking = f" (lacks {', '.join(f.missing)})" if f.missing else ""
            parts.append(f"{f.text!r} undecided{lacking}")
    return f"{decision.value} by paraphrase matching: " + "; ".join(parts)
