"""numeric-dates: "23/11/1963" with its month named (both readings when they could swap)."""

import re

from cofe.matching.answer._rules import substitution
from cofe.matching.answer.rules.en._dates import has_date_signs, month_names


def _named(match: re.Match[str]) -> str:
    first, second, year = int(match[1]), int(match[3]), match[4]
    months = [month_names()[m - 1] for m in (second, first) if 1 <= m <= 12]
    if not months:
        return match[0]
    return f"{first} {second} {year} {' '.join(dict.fromkeys(months))}"


NUMERIC_DATES = substitution(
    "numeric-dates",
    "A date in figures (day/month/year or month/day/year) also read with its month named.",
    "en",
    re.compile(r"\b(\d{1,2})([/.])(\d{1,2})\2(\d{4})\b"),
    _named,
    has_date_signs,
    reaches=(
        ("on 23/11/1963.", "on 23 11 1963 november."),
        ("on 11.12.1963", "on 11 12 1963 december november"),
    ),
    misses=("on 23 November 1963", "33/44/1963"),
)
