"""fiscal-years: "FY2022", "FY 22", "FY'22", "fiscal 2022" and "fiscal year 2022" are one
fiscal year, written "fiscal 2022" (filings and the answers about them use every form; a
two-digit year is read in 1950-2049)."""

import re

from cofe.matching.answer._rules import substitution

_FISCAL = re.compile(r"\bFY\s?['’-]?\s?(\d{4}|\d{2})\b|\bfiscal(?:\s+year)?\s+(\d{4})\b", re.I)


def _year(match: re.Match[str]) -> str:
    year = match[1] or match[2]
    if len(year) == 2:
        year = ("20" if int(year) < 50 else "19") + year
    return f"fiscal {year}"


FISCAL_YEARS = substitution(
    "fiscal-years",
    'A fiscal year in any of its forms ("FY22", "fiscal year 2022") as "fiscal 2022".',
    "en",
    _FISCAL,
    _year,
    lambda text: "fy" in text.lower() or "fiscal" in text.lower(),
    reaches=(
        ("Revenue in FY2022 rose.", "Revenue in fiscal 2022 rose."),
        ("FY22 capex", "fiscal 2022 capex"),
        ("in FY '98", "in fiscal 1998"),
        ("for fiscal year 2021", "for fiscal 2021"),
    ),
    misses=("fiscal policy in 2021", "FYI: 2022", "the fy of 1,000"),
)
