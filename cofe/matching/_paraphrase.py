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
* units of measure by one name ("720 ft" = "720 feet", "1142 MW" = "1,142
  megawatts"; a symbol that is also a word, such as "in" or "m", only right after
  a number); British and American spellings alike ("armour", "programme",
  "centre", "organise"); dates in figures with their month named ("23/11/1963");
  short year ranges with their century ("1861-67" = "1861-1867"); acronyms for the
  capitalised names they abbreviate, either way ("UK", "FCC", "MSPs");
* multiples of a unit read in the base unit ("1.142 gigawatts" = "1,142 megawatts",
  "six decades" = "60 years"); a bracket that restates a figure in another unit or a
  name's acronym read with and without it ("9.54 inches (242.3 mm)");
* English synonyms: a word sharing a WordNet synset among its first senses
  (``_synonyms``), never for a name, a count or a unit;
* Chinese cut into words (jieba), function characters dropped; numerals as
  digits, decimals before a scale included ("十九点五亿"), digits before a scale
  ("1.2万"); counting words for people alike after a figure ("836名" = "836人");
  bounds by direction ("不到" = "少于"); a word written in its longer form, its
  characters in order close together ("招生" in "招收学生", "证交所" in "证券交易所").

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

import contextlib
import math
import re
import unicodedata
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from enum import StrEnum
from functools import lru_cache
from typing import Any

from cofe.matching import _synonyms
from cofe.matching._labels import STOPWORDS
from cofe.matching._normalize import is_cjk, strict_tokens


class Decision(StrEnum):
    """Whether an answer conveys an information point (or one of its fragments)."""

    PRESENT = "present"
    PARTIAL = "partial"  # some fragments conveyed, others established absent
    ABSENT = "absent"
    UNDECIDED = "undecided"  # partial overlap the offline matcher cannot settle
    DECLINED = "declined"  # the answer says it cannot give this point (cofe.refusal)

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
    REFUSAL = "refusal"  # the answer declines the point (cofe.refusal's rules)


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
    # a company's legal form: "Visa Inc." and "Visa" name the same company
    + "inc ltd llc plc corp gmbh".split()
    # comparatives of a quantity: nltk's list already holds their siblings (more, most,
    # over, under, above, below), so "less than 200,000" and "under 200,000" read alike
    + "less fewer least fewest".split()
)
# Chinese function characters: particles, copulas, pronouns, measure words, conjunctions.
_CJK_STOP = frozenset("的了是在和与或及也都就而之其这那个为以于被把将有着过等们他她它我你该此并")
# Chinese words that bound a quantity, read as one direction each so that "少于十分钟" and
# "不到十分钟" read alike and "高于" never passes for "低于"; a fragment's direction is
# required as a name is (an answer without it is undecided, never present)
_CJK_LESS = frozenset("少于 小于 低于 不到 不足 以下 未满 至多 最多".split())
_CJK_MORE = frozenset("多于 大于 高于 超过 超出 以上 逾 至少".split())
# "以上"/"以下" bound a figure only right after it ("3分以下"); elsewhere they are "the
# above" / "the following" ("以上措施"), words like any other
_CJK_BOUND_AFTER_FIGURE = frozenset(("以上", "以下"))
# words that only hedge a quantity or carry a verb: function words, as English's "about"
_CJK_FUNCTION_WORDS = frozenset("左右 上下 大约 约为 将近 接近 进行 更为 更加".split())
# after a figure, the counting words for people are one ("836人" = "836名" = "836位"), and
# "more than" before a counting word or a unit says nothing the figure does not ("70多种")
_CJK_PEOPLE = frozenset("人名位员")
_CJK_ABOUT = "多余"
# the half of the day before a Chinese time ("上午9点", "晚上9点"): required like a bound
_CJK_HALF_DAY = {
    **dict.fromkeys(("上午", "早上", "早晨", "凌晨", "清晨"), "上午"),
    **dict.fromkeys(("下午", "晚上", "傍晚", "夜里", "夜间"), "下午"),
}
_DIRECTIONS = frozenset(("<", ">", "上午", "下午"))
_CJK_MEASURES = {
    **dict.fromkeys(("公里", "千米"), "km"),
    **dict.fromkeys(("平方公里", "平方千米"), "km2"),
    **dict.fromkeys(("米", "公尺"), "metre"),
    **dict.fromkeys(("厘米", "公分"), "cm"),
    **dict.fromkeys(("毫米",), "mm"),
    **dict.fromkeys(("公斤", "千克"), "kg"),
    **dict.fromkeys(("吨", "公吨", "公顿"), "ton"),
    **dict.fromkeys(("公顷",), "hectare"),
    **dict.fromkeys(("平方米", "平方公尺"), "metre2"),
    **dict.fromkeys(("亩",), "mu"),
    **dict.fromkeys(("平方英里",), "mile2"),
    **dict.fromkeys(("平方英尺", "平方呎"), "ft2"),
    **dict.fromkeys(("英亩",), "acre"),
    **dict.fromkeys(("英里",), "mile"),
    **dict.fromkeys(("英尺", "呎"), "ft"),
    **dict.fromkeys(("英寸", "吋"), "inch"),
    **dict.fromkeys(("美元", "美金"), "usd"),
    **dict.fromkeys(("分钟",), "minute"),
    **dict.fromkeys(("小时", "钟头"), "hour"),
}

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
# a figure's thousands separators belong to it: "1,200 million" is 1,200,000,000
_FIGURE_BEFORE_SCALE = r"((?<![\d.,])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)"
_SCALE = re.compile(_FIGURE_BEFORE_SCALE + r"\s*(thousand|million|billion|trillion)\b", re.I)
_MONEY_SCALE = re.compile(r"[$£€¥]\s?(\d+(?:\.\d+)?)\s?(k|m|bn|b)\b", re.I)
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
# a figure in digits with a Chinese scale: "1.2万" = 12000, "10.2亿" (cn2an leaves them)
# ("2000多万": the "more than" goes, as English's "over" does)
_CJK_SCALE = re.compile(_FIGURE_BEFORE_SCALE + r"\s*[多余]?\s*(万亿|万|亿)")
_CJK_SCALES = {"万": 10**4, "亿": 10**8, "万亿": 10**12}
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
_CJK_DECIMAL = re.compile(r"[零〇一二三四五六七八九十百千两]+点[零〇一二三四五六七八九]+")
# a numeral that starts with a digit or ten and holds a place (十 百 千): "一百一十", not "万一"
_CJK_NUMERAL_RUN = re.compile(
    r"[一二三四五六七八九十两][零〇一二三四五六七八九]*[十百千]"
    r"[零〇一二三四五六七八九十百千万亿两]*"
)
_MONTHS = {
    "jan": "january",
    "feb": "february",
    "mar": "march",
    "apr": "april",
    "jun": "june",
    "jul": "july",
    "aug": "august",
    "sep": "september",
    "sept": "september",
    "oct": "october",
    "nov": "november",
    "dec": "december",
}
# Units of measure: an answer writes "720 ft" for "720 feet", "1142 MW" for "1,142
# megawatts". Full names and unambiguous symbols map everywhere; a one- or two-letter
# symbol that is also a word ("in", "m", "c") only right after a number.
_MEASURES = {
    **dict.fromkeys(("foot", "feet", "ft"), "ft"),
    **dict.fromkeys(("inch", "inches"), "inch"),
    **dict.fromkeys(("mile", "miles"), "mile"),
    **dict.fromkeys(("yard", "yards", "yd", "yds"), "yard"),
    **dict.fromkeys(("kilometre", "kilometres", "kilometer", "kilometers", "km", "kms"), "km"),
    **dict.fromkeys(("km2", "sqkm"), "km2"),
    **dict.fromkeys(("mi2", "sqmile"), "mile2"),
    **dict.fromkeys(("sqmetre",), "metre2"),
    **dict.fromkeys(("ft2", "sqft"), "ft2"),
    **dict.fromkeys(("acre", "acres"), "acre"),
    **dict.fromkeys(("metre", "metres", "meter", "meters"), "metre"),
    **dict.fromkeys(("centimetre", "centimetres", "centimeter", "centimeters", "cm"), "cm"),
    **dict.fromkeys(("millimetre", "millimetres", "millimeter", "millimeters", "mm"), "mm"),
    **dict.fromkeys(("kilogram", "kilograms", "kilogramme", "kilogrammes", "kg", "kgs"), "kg"),
    **dict.fromkeys(("tonne", "tonnes", "ton", "tons"), "ton"),
    **dict.fromkeys(("megaton", "megatons", "megatonne", "megatonnes"), "megaton"),
    **dict.fromkeys(("gigaton", "gigatons", "gigatonne", "gigatonnes"), "gigaton"),
    **dict.fromkeys(("pound", "pounds", "lb", "lbs"), "lb"),
    **dict.fromkeys(("ounce", "ounces", "oz"), "oz"),
    **dict.fromkeys(("hectare", "hectares"), "hectare"),
    **dict.fromkeys(("litre", "litres", "liter", "liters"), "litre"),
    **dict.fromkeys(("kilowatt", "kilowatts", "kw"), "kw"),
    **dict.fromkeys(("megawatt", "megawatts", "mw"), "mw"),
    **dict.fromkeys(("gigawatt", "gigawatts", "gw"), "gw"),
    **dict.fromkeys(("watt", "watts"), "watt"),
    **dict.fromkeys(("decade", "decades"), "decade"),
    **dict.fromkeys(("fahrenheit",), "fahrenheit"),
    **dict.fromkeys(("celsius", "centigrade"), "celsius"),
    **dict.fromkeys(("year", "years", "yr", "yrs"), "year"),
    **dict.fromkeys(("hour", "hours", "hr", "hrs"), "hour"),
    **dict.fromkeys(("minute", "minutes", "mins"), "minute"),
}
# a unit that is a multiple of another: the figure before it is read in the base unit, so
# "1.142 gigawatts" = "1,142 megawatts" and "six decades" = "60 years"; with no figure, a
# power is still a power ("a gigawatt" touches "megawatts"), but "a decade" is not "years"
_MULTIPLES = {
    "kw": ("watt", 10**3, True),
    "mw": ("watt", 10**6, True),
    "gw": ("watt", 10**9, True),
    "decade": ("year", 10, False),
    "megaton": ("ton", 10**6, True),
    "gigaton": ("ton", 10**9, True),
}
_MEASURES_AFTER_NUMBER = {
    "mi": "mile",
    "m": "metre",
    "g": "gram",
    "l": "litre",
    "t": "ton",
    "f": "fahrenheit",
    "c": "celsius",
    "h": "hour",
    "min": "minute",
    "m2": "metre2",
    "ha": "hectare",
}
# British and American spellings of one word ("armour"/"armor", "programme"/"program",
# "centre"/"center", "organise"/"organize"): both sides are respelt the same way, so a
# respelling that makes a non-word ("flour" -> "flor") changes nothing.
_SPELLING = (
    (re.compile(r"(?<=[a-z]{3})our(s?)$"), r"or\1"),
    (re.compile(r"(?<=[a-z]{2})is(e|ed|es|ing|ation|ations)$"), r"iz\1"),
    (re.compile(r"(?<=[a-z]{2})ys(e|ed|es|ing)$"), r"yz\1"),
    (re.compile(r"(?<=[a-z]{2})(t|b)re(s?)$"), r"\1er\2"),
    (re.compile(r"(?<=[a-z]{3})amme(s?)$"), r"am\1"),
    (re.compile(r"(?<=[a-z]{3})ogue(s?)$"), r"og\1"),
    (re.compile(r"^(defen|licen|offen|preten)ce(s?)$"), r"\1se\2"),
)
_SPELLING_ENDINGS = (
    "our",
    "ours",
    "ise",
    "ised",
    "ises",
    "ising",
    "isation",
    "isations",
    "yse",
    "ysed",
    "yses",
    "ysing",
    "tre",
    "tres",
    "bre",
    "bres",
    "amme",
    "ammes",
    "ogue",
    "ogues",
    "ce",
    "ces",
)
# "23/11/1963", "11.23.1963", "1963-11-23": a date written in figures, with its month named
_NUMERIC_DATE = re.compile(r"\b(\d{1,2})([/.])(\d{1,2})\2(\d{4})\b")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_MONTH_NAMES = (
    "january february march april may june july august september october november december"
).split()
# "1861-67", "2008/09", "1982–83": the second year of a range written with its century
_INITIALISM = re.compile(r"\b(?:[A-Z]\.){2,}")
_YEAR_RANGE = re.compile(r"\b(1\d|20)(\d\d)(\s*[-–—/]\s*)(\d\d)\b(?![-–—/.:]?\d)")
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
        """The unit as a person reads it: the word, not its stem; a figure as written."""
        shown = self.surface.get(unit) or self.written.get(unit, unit)
        clock = _CLOCK_CODE.fullmatch(shown)
        if clock:  # "t0900" -> "09:00"
            return f"{clock[1]}:{clock[2]}"
        return _SQUARE_SHOWN.get(shown, shown)

    all: frozenset[str] = frozenset()  # words and numbers together (set by ``units``)
    acronyms: frozenset[str] = frozenset()  # words written in capitals: "UK", "FCC", "MSP"
    # a figure read in a base unit -> as written ("1,142 MW": 1142000000 -> 1142): shown as
    # written, and its digits a trace of the figure however the other text scales it
    written: dict[str, str] = field(default_factory=dict)
    source: str = ""  # the text as given (fragments only): what the units lose, as signs
    # (the content unit before a number, number): "Hangzhou in 1276" -> ("hangzhou",
    # "1276"); with ``measured``, what each figure is bound to
    preceding: frozenset[tuple[str, str]] = frozenset()


def _digits(text: str) -> str:
    """Number words, Chinese numerals and scales as digits; percent signs as a word."""
    # each rule only where its trigger can be (most answers hold none: a hot path)
    if not text.isascii() and _CJK_NUMERAL.search(text):
        text = _cn2an(text.replace("两", "二"))  # cn2an reads 两 only inside a larger numeral
        if _CJK_SCALE.search(text):
            text = _CJK_SCALE.sub(_cjk_scaled, text)
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


# a word's stem, a number, any other unit, a function word (kept only for its acronym)
_STEM, _FIGURE, _PLAIN, _FUNCTION = "stem", "figure", "plain", "function"


@lru_cache(maxsize=300_000)  # a corpus's words repeat (Zipf): each token is read once
def _unit(raw: str) -> tuple[str, str, str, str] | None:
    """A token's content unit, its kind, the word it came from, and the acronym it writes
    ("UK", "MSPs" -> "MSP"; else ""); None for a function word."""
    token = raw.casefold()
    if not token.isascii() and is_cjk(token[0]):
        if _CJK_STOP.issuperset(token) or token in _CJK_FUNCTION_WORDS:
            return None
        if token in _CJK_LESS or token in _CJK_MORE:
            return ("<" if token in _CJK_LESS else ">", _PLAIN, token, "")
        if token in _CJK_HALF_DAY:
            return (_CJK_HALF_DAY[token], _PLAIN, token, "")
        return (_CJK_MEASURES.get(token, token), _PLAIN, token, "")
    if not token.isalpha():  # a word skips every number rule: the common case
        if token in _MEASURES:  # "km2" (NFKC's "km²")
            return (_MEASURES[token], _STEM, token, "")
        if token[0].isdigit() and "dot" in token:
            figure = token.replace("dot", ".")
            if figure[-1] == "0" and figure.replace(".", "").isdigit():
                figure = figure.rstrip("0").rstrip(".")  # "30.0" is 30, "2.50" is 2.5
            return (figure, _FIGURE, token, "")
        ordinal = _ORDINAL.match(token)
        token = ordinal[1] if ordinal else token
        if not token.isalpha():  # a figure, or a code ("5a", "b737")
            token = token.lstrip("0") or "0"
            # "one" is mostly an article ("one of the largest"): a content word, not a figure
            return (token, _PLAIN if token == "1" else _FIGURE, token, "")
    acronym = _acronym(raw)
    if token in STOPWORDS or token in _EXTRA_STOPWORDS:
        # "US" and "IT" in capitals name something; as content they stay function words
        return ("", _FUNCTION, token, acronym) if acronym else None
    measure = _MEASURES.get(token)
    if measure is not None:
        return (measure, _STEM, token, acronym)
    if acronym and acronym != raw:  # "MSPs": the plural of the acronym "MSP"
        token = acronym.casefold()
    token = _MONTHS.get(token, token)
    if not token.isascii():
        return (token, _STEM, token, acronym)
    spelt = _american(token) if len(token) >= 5 else token
    return (_stem(spelt), _STEM, token, acronym)  # Snowball English: ASCII words


def _acronym(raw: str) -> str:
    if not raw.isascii() or len(raw) < 2:
        return ""
    if raw.isupper():
        return raw if len(raw) <= 7 else ""
    if raw[-1] == "s" and len(raw) >= 3 and raw[:-1].isupper():
        return raw[:-1]
    return ""


def _american(word: str) -> str:
    if not word.endswith(_SPELLING_ENDINGS):  # most words: one C call, no regex
        return word
    for pattern, replacement in _SPELLING:
        if pattern.search(word):
            return pattern.sub(replacement, word)
    return word


def _has_number_word(text: str) -> bool:
    # a set look-up per word is several times faster than the alternation's scan
    return not _NUMBER_WORDS.isdisjoint(_WORD.findall(text.lower()))


def _scaled(match: re.Match[str]) -> str:
    value = float(match[1].replace(",", "")) * _SCALES[match[2].lower()]
    return str(int(value)) if value.is_integer() else str(value)


def _cjk_scaled(match: re.Match[str]) -> str:
    return _times(match[1], _CJK_SCALES[match[2]]) or match[0]


def _times(number: str, times: int) -> str | None:
    """The figure times a power of ten, written as the matcher writes figures; None for a
    figure that is not a plain number ("1960s", "2x")."""
    try:
        value = Decimal(number.replace(",", "")) * times  # exact: 1.2 * 10**4 is 12000
    except InvalidOperation:
        return None
    return str(int(value)) if value == value.to_integral_value() else str(value.normalize())


def _money_scaled(match: re.Match[str]) -> str:
    word = {"k": "thousand", "m": "million", "bn": "billion", "b": "billion"}[match[2].lower()]
    return f"{match[0][0]} {match[1]} {word}"


def _cn2an(text: str) -> str:
    import cn2an  # deferred: loads its tables on first use

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # it warns about every numeral-like word it leaves
        if "点" in text:  # "十九点五亿": transform leaves a decimal before a scale as words
            text = _CJK_DECIMAL.sub(lambda m: _numeral(m[0], cn2an) or m[0], text)
        with contextlib.suppress(ValueError, KeyError, IndexError):  # unreadable: keep it
            text = str(cn2an.transform(text, "cn2an"))
        if _CJK_NUMERAL_RUN.search(text):  # what transform left: "一百一十千米" (110 km)
            text = _CJK_NUMERAL_RUN.sub(lambda m: _leftover(m[0], cn2an), text)
    return text


def _numeral(run: str, cn2an: Any) -> str | None:
    try:
        value = cn2an.cn2an(run, "smart")
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    return str(int(value)) if float(value).is_integer() else str(value)


def _leftover(run: str, cn2an: Any) -> str:
    """A numeral run transform did not read: whole, or without a last 千 that begins the
    next word ("一百一十千米": 110, then 千米; 千克 and 千瓦 alike)."""
    whole = _numeral(run, cn2an)
    if whole is not None:
        return whole
    head = _numeral(run[:-1], cn2an) if len(run) > 2 and run[-1] == "千" else None
    return run if head is None else head + run[-1]


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


@lru_cache(maxsize=1)
def _no_synonyms() -> frozenset[str]:
    """Words no synonym stands in for: a count or a unit is a fact ("three days" is not
    "three years", "millions" not "billions", though WordNet joins them)."""
    words = (
        *_NUMBER_WORDS,
        *_SCALES,
        *_MEASURES,
        *_MEASURES.values(),
        *_MEASURES_AFTER_NUMBER.values(),
        *"second day week month year decade century millennium dozen".split(),
        *"hundreds thousands millions billions dozens".split(),
    )
    return frozenset(_stem(word) for word in words)


def units(text: str, *, names: bool = False) -> Units:
    """The content units of a text (``names``: a fragment's -- also note its capitalised
    words and keep the text)."""
    given = text if names else ""
    if not text.isascii():  # ASCII is already NFKC (the scorer's hot path: skip the call)
        text = unicodedata.normalize("NFKC", text)
        if _ACCENTED.search(text):
            text = _ACCENTED.sub(_unaccented, text)  # "Taihō" = "Taiho"
    if "'" in text or "’" in text or "annot" in text:
        for pattern, replacement in _CONTRACTIONS:
            text = pattern.sub(replacement, text)
    if "-" in text:
        text = _WORD_HYPHEN.sub(" ", text)  # "four-week" -> "four week" (text2num reads it)
    if _ANY_DIGIT.search(text):
        text = _SPACED_THOUSANDS.sub("", text)  # "13 000" = "13,000" = "13000"
        if "/" in text or "." in text or "-" in text:
            text = _ISO_DATE.sub(_iso_date, _NUMERIC_DATE.sub(_numeric_date, text))
        text = _YEAR_RANGE.sub(_year_range, text)
    if "sq" in text or "Sq" in text:
        text = _SQUARE.sub(_square, text)  # "square miles" is one unit: "sqmile"
    if "." in text:
        text = _INITIALISM.sub(_initialism, text)  # "U.S." = "US"
    text = _digits(text)  # number words and numerals become digits here
    if _ANY_DIGIT.search(text):  # the rules of figures, only where there is one
        text = _CLOCK.sub(_clock, text)  # "9:00 a.m." = "9 am" (= "t0900 9"), "17:30"
        if "in" in text:
            text = _INCH.sub(" inches", text)  # "2 in of rain", "9.54 in (242 mm)"
        text = _HEDGE.sub("", text)  # "roughly 3,000" and "close to 3,000": the figure counts
    elif "noon" in text or "midnight" in text or "midday" in text:
        text = _CLOCK.sub(_clock, text)
    if "." in text:
        text = _DECIMAL.sub("_", text)  # "3.5" stays one number, not "3" and "5"
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
    for raw in _tokens(text.replace("_", "dot") if "_" in text else text):
        if number and not raw.isascii() and is_cjk(raw[0]):
            rest = raw.lstrip(_CJK_ABOUT)
            if rest and rest != raw and (len(rest) == 1 or rest in _CJK_MEASURES):
                raw = rest  # "70多种" = "70种", "6万多吨" = "60000吨"
            if raw in _CJK_PEOPLE and not ordinal:
                raw = "人"
        ordinal, before = before.endswith("第"), raw  # read by the token after a figure
        since_figure += 1
        found: tuple[str, str, str, str] | None
        if raw in _CJK_BOUND_AFTER_FIGURE and since_figure > 3:
            found = (raw, _PLAIN, raw, "")  # not after a figure (and its unit): a word
        else:
            found = _unit(raw)
        if number and raw.casefold() in _DEGREES:  # "46 degrees Celsius": the scale after
            continue
        if found is not None and found[0] == "1" and found[1] is _PLAIN:
            one = True  # "1 km": a figure after all, when a unit of measure follows
        elif one and found is not None and found[0] in _DIMENSIONS:
            numbers.add("1")
            number, one = "1", False
        else:
            one = False
        if number and raw.casefold() in _MEASURES_AFTER_NUMBER:  # "5 m", "2 in"
            after = _MEASURES_AFTER_NUMBER[raw.casefold()]
            found = (after, _STEM, after, "")
        if found is None:
            continue
        unit, kind, word, acronym = found
        if acronym:
            acronyms.add(acronym)
            if kind is _FUNCTION:
                continue
        if kind is _FIGURE:
            numbers.add(unit)
            if previous:
                preceding.add((previous, unit))
            number, previous = unit, ""
            since_figure = 0
            continue
        if unit in _MULTIPLES:
            base, times, alone = _MULTIPLES[unit]
            # only right after its figure: "in 2010, a decade after" is no 20,100 years
            scaled = _times(number, times) if number and since_figure == 1 else None
            if scaled is not None:
                numbers.discard(number)
                numbers.add(scaled)
                written[scaled] = number  # a trace, and how the fragment wrote it
                number, unit = scaled, base
            elif alone:
                unit = base
        words.add(unit)
        previous = unit
        if number:
            measured.add((number, unit))
            number = ""
        if names and unit in _DIRECTIONS:
            capitals.add(unit)
            surface.setdefault(unit, word)  # "lacks 超过", not "lacks >"
        if names and kind is _STEM:  # a fragment: its words as written, for evidence
            if unit != word:
                surface.setdefault(unit, word)
            if raw[0].isupper():
                capitals.add(unit)
    return Units(
        frozenset(words),
        frozenset(numbers),
        frozenset(capitals),
        frozenset(measured),
        text.casefold() if not text.isascii() and _HAS_CJK.search(text) else "",
        surface,
        frozenset(words | numbers),
        frozenset(acronyms),
        written,
        given,
        frozenset(preceding),
    )


_SQUARE = re.compile(
    r"\b(?:square|sq\.?)\s*(kilomet(?:re|er)s?|km|miles?|mi|met(?:re|er)s?|m|feet|foot|ft)\b",
    re.IGNORECASE,
)
_SQUARED = {"k": "sqkm", "mi": "sqmile", "me": "sqmetre", "m": "sqmetre", "f": "sqft"}
_SQUARE_SHOWN = {
    "sqkm": "square kilometres",
    "sqmile": "square miles",
    "sqmetre": "square metres",
    "sqft": "square feet",
}


def _square(match: re.Match[str]) -> str:
    word = match[1].casefold()
    return _SQUARED.get(word[:2], _SQUARED[word[0]])


# Latin letters with diacritics, read without them: answers often drop macrons and accents
_ACCENTED = re.compile(r"[\u00c0-\u024f\u1e00-\u1eff]")


_LETTERS = {"ł": "l", "Ł": "L", "ı": "i", "ø": "o", "Ø": "O", "đ": "d", "Đ": "D", "ħ": "h"}
_LETTERS |= {"æ": "ae", "Æ": "Ae", "œ": "oe", "Œ": "Oe", "þ": "th", "Þ": "Th", "ß": "ss"}


@lru_cache(maxsize=1000)
def _unaccented_char(char: str) -> str:
    if char in _LETTERS:  # letters of their own, with no accent to take off
        return _LETTERS[char]
    plain = "".join(c for c in unicodedata.normalize("NFD", char) if not unicodedata.combining(c))
    return plain or char


def _unaccented(match: re.Match[str]) -> str:
    return _unaccented_char(match[0])


# a time of day: on a 12-hour clock ("9:00 a.m.", "9am", "6 p.m.") or past noon on a 24-hour
# one ("17:30"), read as a code ("t0900", "t1730": required exactly, as figures are) and
# its hour (and minutes): "9 a.m." is "t0900 9", so "9:00" alone, "nine in the morning" or
# the other half of the day leave a trace, never an absence
_CLOCK = re.compile(
    r"\b(\d{1,2})(?:[:.](\d\d))?\s*([ap])\.?\s?m\b\.?|\b(00|1[2-9]|2[0-3]):([0-5]\d)\b(?!:\d)"
    r"|\b(noon|midday|midnight)\b",
    re.IGNORECASE,
)
_CLOCK_CODE = re.compile(r"t(\d\d)(\d\d)")


def _clock(match: re.Match[str]) -> str:
    if match[6]:
        hour, minute = (0 if match[6].lower() == "midnight" else 12), 0
    elif match[4]:
        hour, minute = int(match[4]), int(match[5])
    else:
        hour, minute = int(match[1]), int(match[2] or 0)
        if not 1 <= hour <= 12 or minute > 59:
            return match[0]
        hour = hour % 12 + (12 if match[3].lower() == "p" else 0)
    shown = f"{hour % 12 or 12}" + (f":{minute:02d}" if minute else "")
    return f" t{hour:02d}{minute:02d} {shown} "


# "in" after a figure is inches only where no noun phrase follows it: "5 in of rain", "9.54
# in (242 mm)", "6 in long", not "7.2 million in the United States" or "1990 in Paris"
_INCH = re.compile(
    r"(?<=\d)\s?in\b\.?(?=\s*(?:[^\sA-Za-z0-9]|$|(?:long|wide|high|tall|deep|thick|of|by|x)\b))"
)


_DEGREES = frozenset(("degree", "degrees", "deg"))
_NEGATIVE = re.compile(r"[−–-]\s?\d|\bminus\b|\bbelow (?:zero|freezing)\b", re.I)


# words that only say a figure is approximate, right before it
# (not "nearly" or "almost", which bound it from below: "more than 3,000" is not "nearly")
_HEDGE = re.compile(r"\b(?:approximately|approx\.?|roughly|circa|close to)\s+(?=[$£€¥]?\d)", re.I)


def _numeric_date(match: re.Match[str]) -> str:
    """ "23/11/1963" with its month named; both readings when day and month could swap."""
    first, second, year = int(match[1]), int(match[3]), match[4]
    months = [_MONTH_NAMES[m - 1] for m in (second, first) if 1 <= m <= 12]
    if not months:
        return match[0]
    return f"{first} {second} {year} {' '.join(dict.fromkeys(months))}"


def _iso_date(match: re.Match[str]) -> str:
    month = int(match[2])
    if not 1 <= month <= 12:
        return match[0]
    return f"{int(match[3])} {_MONTH_NAMES[month - 1]} {match[1]}"


def _year_range(match: re.Match[str]) -> str:
    """ "1861-67" -> "1861-1867": the second year with the first one's century."""
    century, first, between, last = match[1], match[2], match[3], match[4]
    if int(last) <= int(first):
        return match[0]  # "2008-05" is a year and a month, not a range
    return f"{century}{first}{between}{century}{last}"


def _initialism(match: re.Match[str]) -> str:
    return match[0].replace(".", "")


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


_JOINERS = frozenset("of the and for & de du la von van".split())


@lru_cache(maxsize=100_000)
def _initialisms(text: str) -> dict[str, frozenset[str]]:
    """What each run of capitalised words abbreviates to, with the units it covers:
    "Supreme Court of the United Kingdom" -> "UK": {united, kingdom}, "SC": {supreme,
    court}, "SCUK": all four (joiners such as "of the" give no letter)."""
    runs: list[list[tuple[str, str]]] = [[]]
    for raw in strict_tokens(text, fold=False):
        found = _unit(raw) if raw[0].isupper() and raw.isascii() else None
        if found is not None and found[1] is _STEM:
            runs[-1].append((found[0], raw[0]))
        elif not (runs[-1] and raw.casefold() in _JOINERS):
            runs.append([])
    out: dict[str, frozenset[str]] = {}
    for run in runs:
        for start in range(len(run)):
            for end in range(start + 2, min(len(run), start + 7) + 1):
                letters = "".join(initial for _, initial in run[start:end])
                out[letters] = out.get(letters, frozenset()) | {u for u, _ in run[start:end]}
    return out


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
    contradiction: str = ""  # another value the answer states instead (or a note)
    reading: str = ""  # how the fragment was read, when not as written ("New York")


class AnswerMatcher:
    """Decides, per information point, whether one answer conveys it (one sample)."""

    __slots__ = (
        "_acronyms",
        "_answer",
        "_answer_text",
        "_asked_about",
        "_asked_text",
        "_digits",
        "_measured",
        "_numbers",
        "_preceding",
        "_prefixes",
        "_question",
        "_said_words",
        "_text",
        "_words",
    )

    def __init__(self, answer: str, question: str) -> None:
        said = units(answer)
        self._answer = said.all
        self._digits = {_DIGITS.sub("", n) for n in (*said.numbers, *said.written.values())}
        self._prefixes = {w[:_PREFIX] for w in said.words if len(w) >= _PREFIX}
        self._measured = said.measured
        self._numbers = said.numbers
        self._preceding = said.preceding
        self._text = said.text
        self._acronyms = said.acronyms
        self._answer_text = answer
        self._asked_about = question  # read on first need: most fragments never need it
        self._question: frozenset[str] | None = None
        self._asked_text = ""
        self._said_words: _synonyms.SaidWords | None = None  # read on first need
        # the answer's words with their places, for names a reading shortened (on first need)
        self._words: list[tuple[str, str, int, int]] | None = None

    def _said(self, unit: str) -> bool:
        if unit in self._answer:
            return True
        if not _cjk_unit(unit):
            return False
        # a Chinese word counts wherever the answer writes it, however jieba cut the answer;
        # a longer one also without its last character, as a stem ("浙江省" said as "浙江")
        text = self._text
        return (
            unit in text
            or (len(unit) >= 3 and unit[:-1] in text)
            or (len(unit) >= 2 and _contracted(unit, text))
        )

    def _touched(self, unit: str, frag: Units) -> bool:
        """Any trace of a unit the answer does not say: a Chinese word, any of its
        characters; a number, its digits however written ("1,142" and "1.142"); a word, a
        word of the answer starting alike ("herbal" and "herbs"; a name only as itself:
        "France" is not "Franciscan")."""
        if _cjk_unit(unit):
            return any(char in self._text for char in unit if char not in _CJK_STOP)
        clock = _CLOCK_CODE.fullmatch(unit)
        if clock:  # a time: its hour said on either clock
            hours = {str(int(clock[1]) % 12 or 12), str(int(clock[1]))}
            return any(n.partition(".")[0] in hours for n in self._numbers) or bool(
                hours & self._digits
            )
        if unit[0].isdigit():
            written = frag.written.get(unit, unit)
            return (
                _DIGITS.sub("", unit) in self._digits
                or _DIGITS.sub("", written) in self._digits
                or self._other_unit(frag, unit)
                or any(_rounds_to(unit, said) for said in self._numbers)  # "2.5" of "2.46"
            )
        if unit in frag.names:
            return False
        return len(unit) >= _PREFIX and unit[:_PREFIX] in self._prefixes

    def _synonym(self, unit: str, frag: Units) -> bool:
        """The answer says an English word sharing a WordNet synset with the unit. Never for
        a name ("Bush" is not "shrub"), a number word, a unit of measure or a word beside a
        figure ("three days" is not "three years", though WordNet has "day" for "year")."""
        word = frag.shown(unit)  # as the fragment wrote it: WordNet reads lemmas, not stems
        if (
            not unit.isascii()
            or not unit.isalpha()
            or unit in _no_synonyms()
            or unit in frag.names
            or any(unit == beside for _, beside in frag.measured)
            or not _synonyms.has_synonyms(word)
        ):
            return False
        if self._said_words is None:
            text = self._answer_text
            self._said_words = _synonyms.SaidWords.read(text, _stem, _names_in(text))
        return self._said_words.synonym(word, frag.all)

    def _asked(self, unit: str) -> bool:
        if self._question is None:
            asked = _question_units(self._asked_about)
            self._question, self._asked_text = asked.all, asked.text
        return unit in self._question or (_cjk_unit(unit) and unit in self._asked_text)

    def fragment(self, text: str, *, whole_names: tuple[str, ...] = ()) -> _Fragment:
        """One fragment (``whole_names``: names a reading shortened, "New York" of "New York
        City", which the answer must write as a name of their own)."""
        frag = _fragment_units(text)
        everything = frag.all
        if not everything:
            return _Fragment(Decision.UNDECIDED, text)
        written = frozenset(u for u in everything if self._said(u))
        if frag.measured and frag.numbers - written:
            written |= self._converted(frag)
        if frag.numbers - written:
            written |= self._rounded(frag, frag.numbers - written)
        reworded = frozenset(u for u in everything - written if self._synonym(u, frag))
        said = written | reworded
        if frag.numbers or said:
            evidence = frozenset(u for u in everything if not self._asked(u))
            if not evidence:  # the fragment only repeats the question: judge it on all of it
                evidence = everything
            missing = evidence - said
        else:  # none of it in the answer: the question, read or not, changes nothing
            evidence = missing = everything
        if missing and (frag.acronyms or (self._acronyms and frag.names & missing)):
            missing = missing - self._abbreviated(text, frag, missing)
        if not missing:
            apart = self._apart(whole_names)
            if apart:
                return _Fragment(Decision.UNDECIDED, text, (), f"{apart!r} not a name of its own")
            rebound = self._rebound(frag) if frag.numbers else ""
            if rebound:
                return _Fragment(Decision.UNDECIDED, text, (), rebound)
            return _Fragment(Decision.PRESENT, text)
        shown = tuple(sorted(frag.shown(unit) for unit in missing))
        numbers = frag.numbers & missing
        other = self._other_value(frag, numbers)
        if other:
            return _Fragment(Decision.ABSENT, text, shown, other)
        # no trace at all, even of the question's words (``written`` already read each unit)
        if (
            not reworded & evidence
            and not written
            and not any(self._touched(u, frag) for u in everything)
        ):
            return _Fragment(Decision.ABSENT, text, shown)
        found = 1.0 - len(missing) / len(evidence)
        names = frag.names & missing
        swapped = _swapped(frag.text, self._text, missing) if frag.text else ""
        if found >= PRESENT_AT and not swapped and not names and not numbers:
            return _Fragment(Decision.PRESENT, text, shown)
        if swapped:
            shown = (*shown, f"{swapped} in the answer")
        return _Fragment(Decision.UNDECIDED, text, shown)

    def _apart(self, names: tuple[str, ...]) -> str:
        """A shortened name the answer does not write as a name of its own: not at all
        ("Kenya Power" in "the Kenya Electricity Board ... power generation"), or inside a
        longer name ("Salt Lake" in "the Great Salt Lake", "Apple" in "Apple Music")."""
        if not names:
            return ""
        if self._words is None:
            self._words = [
                (m[0], _POSSESSIVE.sub("", m[0]).casefold(), m.start(), m.end())
                for m in _NAME_WORD.finditer(self._answer_text)
            ]
        text, words = self._answer_text, self._words
        for name in names:
            wanted = [_POSSESSIVE.sub("", w).casefold() for w in name.split()]
            width = len(wanted)
            for i in range(len(words) - width + 1):
                if [w[1] for w in words[i : i + width]] != wanted:
                    continue
                before = words[i - 1] if i else None
                after = words[i + width] if i + width < len(words) else None
                # a capitalised word right beside it (only spaces between) makes it part of
                # another name; a sentence's first word does not count
                joined_before = (
                    before is not None
                    and before[0][0].isupper()
                    and not text[before[3] : words[i][2]].strip()
                    and text[: before[2]].rstrip()[-1:] not in ("", ".", "!", "?", "\n")
                )
                joined_after = (
                    after is not None
                    and after[0][0].isupper()
                    and not text[words[i + width - 1][3] : after[2]].strip()
                )
                if not joined_before and not joined_after:
                    break
            else:
                return name
        return ""

    def _rebound(self, frag: Units) -> str:
        """A figure the answer says, but beside another figure's word: "Hangzhou in 1279
        ... Yamen in 1276" for "Hangzhou in 1276", "4.4 million in the United States" for
        "7.2 million in the United States" -- words and figures all there, bound otherwise."""
        # only beside a name: a common word ("investment", "年") recurs beside other figures,
        # across sentences the tokens do not mark
        for number, unit in frag.measured:
            if unit in frag.names and (number, unit) not in self._measured:
                said = self._another_figure(number, unit)
                if said:
                    return f"the answer gives {frag.shown(unit)!r} another figure, {said}"
        for unit, number in frag.preceding:
            if unit in frag.names and (unit, number) not in self._preceding:
                said = self._another_figure(number, unit, before=True)
                if said:
                    return f"the answer gives {frag.shown(unit)!r} another figure, {said}"
        return ""

    def _rounded(self, frag: Units, numbers: frozenset[str]) -> frozenset[str]:
        """Figures with decimals that the answer rounds, keeping two significant digits or
        more, beside the fragment's unit when it has one: "46.9%" as "47 percent" (not "47
        members"), "1133.87" as "1134". Never a whole number ("1994" is not "1990", nor
        "1,142" "1,100"): a figure written whole is exact."""
        out = set()
        for number in numbers:
            if "." not in number:
                continue
            units = {u for n, u in frag.measured if n == number}
            for said in self._numbers:
                if units and not any((said, u) in self._measured for u in units):
                    continue
                if "." in said and len(said.partition(".")[2]) >= len(number.partition(".")[2]):
                    continue
                if _rounds_to(number, said):
                    out.add(number)
        return frozenset(out)

    def _converted(self, frag: Units) -> frozenset[str]:
        """The fragment's figures (with their units) that the answer states in another unit
        of the same kind: "1,230 kilometres" as "764 miles"."""
        out: set[str] = set()
        for number, unit in frag.measured:
            kind = _kind(unit)
            if not kind:
                continue
            for said in self._measured:
                if (
                    said[1] != unit
                    and _kind(said[1]) == kind
                    and not (kind == "temperature" and self._signed(frag))
                    and _same_quantity((number, unit), said)
                ):
                    out |= {number, unit}
        return frozenset(out)

    def _signed(self, frag: Units) -> bool:
        """A minus sign by a figure, on either side: the units carry no sign, so "-10 °C"
        would convert as 10 °C (50 °F)."""
        return bool(_NEGATIVE.search(self._answer_text) or _NEGATIVE.search(frag.source))

    def _other_unit(self, frag: Units, number: str) -> bool:
        """The answer states a figure of the kind the fragment's figure measures, in another
        unit (a conversion it may have rounded otherwise): a trace, not an absence."""
        for figure, unit in frag.measured:
            kind = _kind(unit)
            if figure == number and kind:
                return any(u != unit and _kind(u) == kind for _, u in self._measured)
        return False

    def _abbreviated(self, text: str, frag: Units, missing: frozenset[str]) -> frozenset[str]:
        """Missing units the answer writes as an acronym, or spells out: "United Kingdom"
        as "UK", "FCC" as "Federal Communications Commission"."""
        covered: set[str] = set()
        for letters, names in _initialisms(text).items():
            if letters in self._acronyms:
                covered |= names
        if frag.acronyms:
            spelt = _initialisms(self._answer_text)
            for acronym in frag.acronyms & spelt.keys():
                found = _unit(acronym)
                if found is not None:
                    covered.add(found[0])
        return frozenset(covered) & missing

    def _other_value(self, frag: Units, missing_numbers: frozenset[str]) -> str:
        """A figure of the fragment the answer states otherwise: another number beside the
        same unit ("720 feet" against "220 feet")."""
        if not missing_numbers or len(frag.numbers) > 1:
            return ""  # with several figures, another one beside the same unit may be apart
        for number, unit in frag.measured:
            said = self._another_figure(number, unit) if number in missing_numbers else ""
            if said and number in frag.written:  # read in a base unit: say it in that unit
                return f"the answer says {said} {unit}s where it asks {number}"
            if said:
                return f"the answer says {said} {frag.shown(unit)}"
        return ""

    def _another_figure(self, number: str, unit: str, *, before: bool = False) -> str:
        """A figure the answer puts beside ``unit`` (after it, or ``before`` it: "Hangzhou in
        1279") that is another value of ``number``'s kind ("220 feet" for "720 feet"; not
        "4 年", a duration, for "2000 年", a year; not a rounding, "2.5 billion" of "2.46
        billion"); "" if none."""
        pairs = ((n, w) for w, n in self._preceding) if before else self._measured
        for said, beside in pairs:
            if (
                beside == unit
                and said != number
                and len(said) == len(number)
                and not _rounds_to(number, said)
            ):
                return said
        return ""

    def point(self, slots: Sequence[Iterable[str]]) -> PointDecision:
        """One point: per slot the best of its alternatives; then the slots together."""
        decided: list[_Fragment] = []
        for alternatives in slots:
            best: _Fragment | None = None
            for written, text, shortened in _readings(alternatives):
                found = self.fragment(text, whole_names=shortened)
                if text != written:
                    found = replace(found, text=written, reading=text)
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


def _contracted(word: str, text: str) -> bool:
    """A Chinese word the text writes longer, its characters in order within a short span:
    "招生" in "招收学生", "证交所" in "证券交易所" (Chinese abbreviates by keeping
    characters of the full form)."""
    span = 2 * len(word)
    start = text.find(word[0])
    while start != -1:
        at = start
        for char in word[1:]:
            at = text.find(char, at + 1, start + span)
            if at == -1:
                break
        else:
            return True
        start = text.find(word[0], start + 1)
    return False


_BRACKET = re.compile(r"\s*[(（]\s*([^()（）]*?)\s*[)）]")
# a figure and the unit after it, as a bracket's whole content or as the end of the text
# before the bracket: "9.54 inches (242.3 mm)", "115 °F (46.1 °C)"
_MEASURED = re.compile(r"(\d[\d,.]*)\s*(°?\s*[^\s\d()（）,;:]+)")
_MEASURED_END = re.compile(r"(?<![\d,.])(\d[\d,.]*)\s*(°?\s*[^\s\d()（）,;:]+)\s*$")
_ACRONYM_GLOSS = re.compile(r"[A-Z]{2,8}s?")


# per unit of measure: what it measures, and one of it in that dimension's base unit
# (metre, square metre, kilogram, litre, watt, second; None: no conversion -- a year is as
# often a date as a duration, and temperature scales have an offset, read by _in_base)
_DIMENSIONS: dict[str, tuple[str, float | None]] = {
    "mm": ("length", 0.001),
    "cm": ("length", 0.01),
    "metre": ("length", 1.0),
    "km": ("length", 1000.0),
    "inch": ("length", 0.0254),
    "ft": ("length", 0.3048),
    "yard": ("length", 0.9144),
    "mile": ("length", 1609.344),
    "metre2": ("area", 1.0),
    "ft2": ("area", 0.09290304),
    "acre": ("area", 4046.8564224),
    "mu": ("area", 10000 / 15),
    "hectare": ("area", 10000.0),
    "km2": ("area", 1e6),
    "mile2": ("area", 2589988.110336),
    "gram": ("mass", 0.001),
    "oz": ("mass", 0.028349523125),
    "lb": ("mass", 0.45359237),
    "kg": ("mass", 1.0),
    "ton": ("mass", 1000.0),
    "megaton": ("mass", 1e9),
    "gigaton": ("mass", 1e12),
    "litre": ("volume", 1.0),
    "watt": ("power", 1.0),
    "kw": ("power", 1e3),
    "mw": ("power", 1e6),
    "gw": ("power", 1e9),
    "celsius": ("temperature", None),
    "fahrenheit": ("temperature", None),
    "minute": ("time", 60.0),
    "hour": ("time", 3600.0),
    "year": ("time", None),
    "decade": ("time", None),
}


def _kind(unit: str) -> str:
    """What a unit of measure measures ("length", ...; "" for none)."""
    return _DIMENSIONS.get(unit, ("", None))[0]


def _dimension(word: str) -> str:
    """What a unit of measure measures ("" for no unit): a bracket restates a figure only
    in a unit of the same kind ("5 km (3 mi)", not "5 km (10 minutes)")."""
    word = unicodedata.normalize("NFKC", word).casefold().replace("°", "").strip()
    unit = _MEASURES.get(word) or _MEASURES_AFTER_NUMBER.get(word, "")
    if word in ("in", "in."):  # right before the bracket: "9.54 in (242.3 mm)"
        unit = "inch"
    return _kind(unit)


def _in_base(number: str, unit: str, *, rounded: bool) -> tuple[float, float] | None:
    """A figure in its dimension's base unit, and half the step of its last digit there: how
    far it may be from the value it stands for. ``rounded``: an answer's figure, whose
    trailing zeros are rounding ("1.9 million" +- 50,000), with two significant digits at
    least (a "2 hours" or "3000 m" says too little to convert); else a fragment's, copied
    from the source, whose every digit is written ("1,230" +- 0.5). None when the unit does
    not convert, or the figure is not a finite number."""
    dimension, factor = _DIMENSIONS.get(unit, ("", None))
    try:
        value = Decimal(number)
    except InvalidOperation:
        return None
    if not value.is_finite():
        return None
    if rounded:
        shape = value.normalize().as_tuple()
        if len(shape.digits) < 2 or not isinstance(shape.exponent, int):
            return None
        exponent = shape.exponent
    else:
        exponent = min(0, int(value.as_tuple().exponent))
    step = Decimal(1).scaleb(exponent) / 2
    if dimension == "temperature":  # in degrees Celsius
        if unit == "celsius":
            return float(value), float(step)
        return float((value - 32) * 5 / 9), float(step * 5 / 9)
    if factor is None:
        return None
    base = float(value) * factor
    return (base, float(step) * factor) if math.isfinite(base) else None


def _same_quantity(asked: tuple[str, str], said: tuple[str, str]) -> bool:
    """A fragment's figure in one unit is the answer's in another, once converted ("1,230
    km" and "764 miles", "1.5 metres" and "4.9 feet"): within what the two roundings allow."""
    a, b = _in_base(*asked, rounded=False), _in_base(*said, rounded=True)
    if a is None or b is None:
        return False
    return abs(a[0] - b[0]) <= a[1] + b[1]


def _rounds_to(number: str, said: str) -> bool:
    """``said`` is ``number`` rounded, keeping two significant digits or more: "47" of
    "46.9", "1500000" of "1460000" (the trailing zeros of ``said`` are its rounding). Only a
    figure with decimals or of five digits or more: "1990" is another year than "1986", and
    "700 feet" another height than "720 feet"."""
    if "." not in number and len(number) < 5:
        return False
    try:
        value, rounded = Decimal(number), Decimal(said)
    except InvalidOperation:
        return False
    if not (value.is_finite() and rounded.is_finite()) or value == rounded:
        return False
    shape = rounded.normalize().as_tuple()
    if len(shape.digits) < 2 or not isinstance(shape.exponent, int):
        return False
    step = Decimal(1).scaleb(shape.exponent)
    return value.quantize(step, rounding=ROUND_HALF_UP) == rounded


# a generic word after a name that only says what kind of thing the name is: an answer
# names the same thing without it ("Continental Edison Company" as "Continental Edison",
# "New York City" as "New York"). A company's legal form after any name; a city, river or
# lake only after a name of two words or more ("Mexico City" is not "Mexico", nor
# "Kansas City" "Kansas"); not after "a"/"an" ("a Dutch company" is no name); never
# "University", "College" or "State" ("Boston University" is not "Boston"). Only as the
# name's last word ("New York City Council" keeps its "City"), and the rest must be a name
# of its own in the answer (``AnswerMatcher._apart``).
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
            if was and now and _dimension(was[2]) and _dimension(was[2]) == _dimension(now[2]):
                plain.append(before)
                converted.append(before[: was.start()] + inner)
                restated = True
            elif _ACRONYM_GLOSS.fullmatch(inner) and inner.rstrip("s") in _initialisms(before):
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


_LATIN_WORD = re.compile(r"[A-Za-z]+")


def _names_in(text: str) -> frozenset[str]:
    """The words a text writes as names: capitalised, and not because a sentence starts."""
    names = set()
    for match in _LATIN_WORD.finditer(text):
        word = match[0]
        if word[0].isupper():
            at = match.start() - 1
            while at >= 0 and text[at] in " \t":
                at -= 1
            # inside a sentence: after a word, a figure or a comma on the same line (not
            # after a list's dash or number, a line break or a full stop)
            if at >= 0 and (text[at].isalnum() or text[at] == ","):
                names.add(word.lower())
    return frozenset(names)


_POSSESSIVE = re.compile(r"['’]s\b")
_NAME_WORD = re.compile(r"[A-Za-z](?:[\w'’&-]|\.(?=\w))*")  # "U.S." but not "Apple."


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


_RANK = {
    Decision.PRESENT: 0,
    Decision.UNDECIDED: 1,
    Decision.PARTIAL: 2,
    Decision.ABSENT: 3,
    Decision.DECLINED: 3,
}


def _why(decision: Decision, fragments: list[_Fragment]) -> str:
    parts = []
    for f in fragments:
        if f.decision is Decision.PRESENT and f.reading:
            parts.append(f"{f.text!r} conveyed, read as {f.reading!r}")
        elif f.decision is Decision.PRESENT and not f.missing:
            parts.append(f"{f.text!r} conveyed")
        elif f.decision is Decision.PRESENT:
            parts.append(f"{f.text!r} conveyed (all but {', '.join(f.missing)})")
        elif f.decision is Decision.ABSENT:
            instead = f"; {f.contradiction}" if f.contradiction else ""
            parts.append(
                f"{f.text!r} not conveyed ({', '.join(f.missing)} not in the answer{instead})"
            )
        elif f.contradiction:  # a note: what the words alone cannot settle
            parts.append(f"{f.text!r} undecided ({f.contradiction})")
        else:
            lacking = f" (lacks {', '.join(f.missing)})" if f.missing else ""
            parts.append(f"{f.text!r} undecided{lacking}")
    return f"{decision.value} by paraphrase matching: " + "; ".join(parts)
