"""clock-times: "9:00 a.m." = "9 am" (read "t0900 9"); "17:30"; noon and midnight."""

import re

from cofe.matching.answer._rules import substitution
from cofe.matching.answer._text import ANY_DIGIT

# on a 12-hour clock ("9:00 a.m.", "9am", "6 p.m.") or past noon on a 24-hour one
# ("17:30"), read as a code ("t0900", "t1730": required exactly, as figures are) and its
# hour (and minutes): "9 a.m." is "t0900 9", so "9:00" alone, "nine in the morning" or the
# other half of the day leave a trace, never an absence
_CLOCK = re.compile(
    r"\b(\d{1,2})(?:[:.](\d\d))?\s*([ap])\.?\s?m\b\.?|\b(00|1[2-9]|2[0-3]):([0-5]\d)\b(?!:\d)"
    r"|\b(noon|midday|midnight)\b",
    re.IGNORECASE,
)
CLOCK_CODE = re.compile(r"t(\d\d)(\d\d)")


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


CLOCK_TIMES = substitution(
    "clock-times",
    "A time of day read as a code (t0900) and its hour, on either clock; noon, midnight.",
    "en",
    _CLOCK,
    _clock,
    lambda text: (
        ANY_DIGIT.search(text) is not None
        or "noon" in text
        or "midnight" in text
        or "midday" in text
    ),
    reaches=(
        ("at 9 a.m.", "at  t0900 9 "),
        ("at 17:30", "at  t1730 5:30 "),
        ("noon", " t1200 12 "),
    ),
    misses=("in 1990", "I am here"),
)
