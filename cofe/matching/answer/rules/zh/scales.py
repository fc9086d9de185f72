"""zh-scales: a figure in digits before 万 / 亿 multiplied out ("1.2万" = 12000)."""

import re

from cofe.matching.answer._figures import times
from cofe.matching.answer._rules import substitution
from cofe.matching.answer._tables import table
from cofe.matching.answer.rules.common._figures import FIGURE_BEFORE_SCALE

# ("2000多万": the "more than" goes, as English's "over" does)
_CJK_SCALE = re.compile(FIGURE_BEFORE_SCALE + r"\s*[多余]?\s*(万亿|万|亿)")


def _scaled(match: re.Match[str]) -> str:
    return times(match[1], table("zh")["scales"][match[2]]) or match[0]


SCALES = substitution(
    "zh-scales",
    "Digits before a Chinese scale (万, 亿, 万亿) multiplied out; a 多 between them dropped.",
    "zh",
    _CJK_SCALE,
    _scaled,
    lambda text: not text.isascii() and _CJK_SCALE.search(text) is not None,
    reaches=(
        ("约1.2万人", "约12000人"),
        ("19.5亿美元", "1950000000美元"),
        ("2000多万", "20000000"),
    ),
    misses=("一万", "1998年"),
)
