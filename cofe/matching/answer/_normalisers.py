"""The normalisers in the order they run (``units`` walks these lists).

TEXT rewrites the whole text, in this order -- where it matters, because:

* ``citations`` first: "[1]" after a fact is no figure for any rule to read;
* ``vulgar-fractions`` before ``nfkc``: "11½" is 11.5, not the "111⁄2" NFKC makes;
* ``zh-simplified`` after ``nfkc`` and before every Chinese rule: they are written in
  simplified script;
* ``nfkc`` before ``accents`` and every regex: "km²" and full-width digits become ASCII;
* ``fiscal-years`` before the date, range and number rules: "FY22" is "fiscal 2022" first;
* ``contractions`` and ``hyphens`` before ``number-words``: text2num reads "twenty five"
  and "four week", not "twenty-five";
* ``spaced-thousands`` before the date, range and scale rules: "13 000" is one figure;
* ``numeric-dates`` before ``iso-dates`` and ``year-ranges``: "23/11/1963" is no range;
* ``square-units`` and ``initialisms`` before the number rules: "sq. mi", "U.S." lose
  their full stops before ``decimals`` reads full stops;
* ``zh-numerals`` before ``zh-scales``: "一点二万" becomes "1.2万" first;
* ``money-scales`` before ``scales`` before ``number-words``: "£304m" is "£ 304 million",
  then 304000000; text2num would read "1.2 million" as 1.2 and a million;
* ``currencies`` after ``money-scales`` and before ``scales`` (the sign moves after the
  figure and its scale: "$25.9 billion" is "25.9 billion usd", then 25900000000 usd); ``times-suffix`` before
  ``number-words`` ("1.5x" is "1.5 times");
* ``percent``, ``clock-times``, ``inches``, ``hedges`` after ``number-words``: "nine a.m.",
  "five percent" have their digits by then;
* ``decimals`` last: it marks "3.5" as one figure, which the clock ("8.46am") and the
  date ("11.23.1963") rules read by its full stop.

TOKENS reads each token by its script ("cjk"; "figure": not all letters; "word"), the
rules of its script in order, the first unit found deciding (a figure-script token the
figure rules pass on is read as a word). Order that matters: ``stopwords`` before
``measures`` ("in" is a function word unless after a figure); ``acronym-plurals`` and
``months`` rewrite a word before ``british-spellings`` and ``stems`` read it.

CONTEXT rules read a token by the figure before it, inside ``units``' token loop, in this
order: the Chinese ones first (they rewrite the token the others read), then
``zh-bound-after-figure``, ``degrees``, ``one-before-unit``, ``measure-after-number``,
``multiples``.
"""

from __future__ import annotations

from cofe.matching.answer._rules import ContextRule, TextRule, TokenRule
from cofe.matching.answer.rules.common import (
    accents,
    citations,
    currencies,
    decimal_figures,
    decimals,
    figures,
    foreign_words,
    measures,
    nfkc,
    percent,
    spaced_thousands,
    times_suffix,
    vulgar_fractions,
)
from cofe.matching.answer.rules.en import (
    acronym_plurals,
    british_spellings,
    clock_times,
    contractions,
    degrees,
    fiscal_years,
    hedges,
    hyphens,
    inches,
    initialisms,
    iso_dates,
    measure_after_number,
    money_scales,
    months,
    multiples,
    number_words,
    numeric_dates,
    one_before_unit,
    one_multiple,
    ordinals,
    scales,
    square_units,
    stems,
    stopwords,
    year_ranges,
)
from cofe.matching.answer.rules.zh import (
    about,
    bound_after_figure,
    bounds,
    function_words,
    half_day,
    people,
)
from cofe.matching.answer.rules.zh import measures as zh_measures
from cofe.matching.answer.rules.zh import numerals as zh_numerals
from cofe.matching.answer.rules.zh import scales as zh_scales
from cofe.matching.answer.rules.zh import simplified as zh_simplified

TEXT: tuple[TextRule, ...] = (
    citations.CITATIONS,
    vulgar_fractions.VULGAR_FRACTIONS,
    nfkc.NFKC,
    zh_simplified.SIMPLIFIED,
    accents.ACCENTS,
    contractions.CONTRACTIONS,
    hyphens.HYPHENS,
    fiscal_years.FISCAL_YEARS,
    one_multiple.ONE_MULTIPLE,
    spaced_thousands.SPACED_THOUSANDS,
    numeric_dates.NUMERIC_DATES,
    iso_dates.ISO_DATES,
    year_ranges.YEAR_RANGES,
    square_units.SQUARE_UNITS,
    initialisms.INITIALISMS,
    zh_numerals.NUMERALS,
    zh_scales.SCALES,
    money_scales.MONEY_SCALES,
    currencies.CURRENCIES,
    scales.SCALES,
    times_suffix.TIMES_SUFFIX,
    number_words.NUMBER_WORDS,
    percent.PERCENT,
    clock_times.CLOCK_TIMES,
    inches.INCHES,
    hedges.HEDGES,
    decimals.DECIMALS,
)

TOKENS: dict[str, tuple[TokenRule, ...]] = {
    "cjk": (
        function_words.FUNCTION_WORDS,
        bounds.BOUNDS,
        half_day.HALF_DAY,
        zh_measures.MEASURES,
    ),
    "figure": (
        measures.MEASURES,
        decimal_figures.DECIMAL_FIGURES,
        ordinals.ORDINALS,
        figures.FIGURES,
    ),
    "word": (
        stopwords.STOPWORDS,
        measures.MEASURES,
        acronym_plurals.ACRONYM_PLURALS,
        months.MONTHS,
        foreign_words.FOREIGN_WORDS,
        british_spellings.BRITISH_SPELLINGS,
        stems.STEMS,
    ),
}

CONTEXT: tuple[ContextRule, ...] = (
    about.ABOUT,
    people.PEOPLE,
    bound_after_figure.BOUND_AFTER_FIGURE,
    degrees.DEGREES,
    one_before_unit.ONE_BEFORE_UNIT,
    measure_after_number.MEASURE_AFTER_NUMBER,
    multiples.MULTIPLES,
)
