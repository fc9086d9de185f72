"""vulgar-fractions: a fraction written as one character read as its decimal ("11½ years"
is "11.5 years").

Before ``nfkc``, which would otherwise fold "11½" into "111⁄2" -- the digits of the
whole number and the numerator run together and the figure read is 111. Thirds and
sixths have no exact decimal: they are written to two places, the precision a grader
reads "a third" at ("⅓" is 0.33, as "33%" is a third)."""

import re

from cofe.matching.answer._rules import substitution

_DECIMAL = {
    "½": "5",
    "¼": "25",
    "¾": "75",
    "⅛": "125",
    "⅜": "375",
    "⅝": "625",
    "⅞": "875",
    "⅕": "2",
    "⅖": "4",
    "⅗": "6",
    "⅘": "8",
    "⅓": "33",
    "⅔": "67",
    "⅙": "17",
    "⅚": "83",
}
# a whole number may stand before it, joined or with one space ("3 ½")
_FRACTION = re.compile(r"(?:(\d+) ?)?([" + "".join(_DECIMAL) + "])")


def _decimal(match: re.Match[str]) -> str:
    return f"{match.group(1) or '0'}.{_DECIMAL[match.group(2)]}"


VULGAR_FRACTIONS = substitution(
    "vulgar-fractions",
    "A one-character fraction is its decimal: '11½' is '11.5', '¾' is '0.75'.",
    "common",
    _FRACTION,
    _decimal,
    lambda text: not text.isascii() and any(c in _DECIMAL for c in text),
    reaches=(
        ("a tenure of roughly 11½ years", "a tenure of roughly 11.5 years"),
        ("about 3 ½ hours", "about 3.5 hours"),
        ("¾ of the votes", "0.75 of the votes"),
        ("a ⅓ stake", "a 0.33 stake"),
    ),
    misses=("11 years and a half", "1/2 of the votes", "the 50% share"),
)
