"""percent: "%", "per cent", "pct" as the word "percent"."""

import re

from cofe.matching.answer._rules import substitution

PERCENT = substitution(
    "percent",
    'A percent sign, "per cent" and "pct" read as the word "percent".',
    "common",
    re.compile(r"%|\bper ?cent\b|\bpct\b", re.I),
    " percent ",
    lambda text: "%" in text or "pc" in text or "per" in text.lower(),
    reaches=(("50% of voters", "50 percent  of voters"), ("50 per cent", "50  percent ")),
    misses=("a person per day", "50 votes"),
)
