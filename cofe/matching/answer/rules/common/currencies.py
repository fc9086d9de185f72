"""currencies: a currency sign before a figure read as the currency's unit after it ("$25.9
billion" = "25.9 billion usd", "$(1,234)" = "1234 usd"), so a sign, a code and a name meet."""

import re

from cofe.matching.answer._rules import substitution

# the sign, then the figure (scales are multiplied out by now); accounting's brackets for a
# negative amount ("$(1,234)") hold the figure too -- the units carry no sign
_SIGNED = re.compile(
    r"(?:\bUS\s?)?([$€£])\s?\(?\s?(\d[\d,]*(?:\.\d+)?)(?:\s?\))?"
    r"(\s?(?:thousand|million|billion|trillion)\b)?",
    re.IGNORECASE,
)
_CODE = {"$": "usd", "€": "eur", "£": "gbp"}


def _unit_after(match: re.Match[str]) -> str:
    scale = f" {match[3].strip()}" if match[3] else ""
    return f"{match[2]}{scale} {_CODE[match[1]]}"


CURRENCIES = substitution(
    "currencies",
    "A currency sign before a figure becomes the currency's unit after it ($ usd, € eur, £ gbp).",
    "common",
    _SIGNED,
    _unit_after,
    lambda text: ("$" in text or "€" in text or "£" in text) and _SIGNED.search(text) is not None,
    reaches=(
        ("cost $25.9 billion in all", "cost 25.9 billion usd in all"),
        ("capex of $(1,234) million", "capex of 1,234 million usd"),
        ("US$ 5", "5 usd"),
        ("EPS was $2.10 per share", "EPS was 2.10 usd per share"),
        ("€3400000000", "3400000000 eur"),
    ),
    misses=("costs a lot of $", "the $ sign"),
)
