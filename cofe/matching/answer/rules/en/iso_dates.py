"""iso-dates: "1963-11-23" as "23 november 1963"."""

import re

from cofe.matching.answer._rules import substitution
from cofe.matching.answer.rules.en._dates import has_date_signs, month_names


def _named(match: re.Match[str]) -> str:
    month = int(match[2])
    if not 1 <= month <= 12:
        return match[0]
    return f"{int(match[3])} {month_names()[month - 1]} {match[1]}"


ISO_DATES = substitution(
    "iso-dates",
    "An ISO date (year-month-day) read with its month named.",
    "en",
    re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"),
    _named,
    has_date_signs,
    reaches=(("opened on 1963-11-23.", "opened on 23 november 1963."),),
    misses=("1963-13-23", "1861-1867"),
)
