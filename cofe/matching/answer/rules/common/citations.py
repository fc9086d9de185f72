"""citations: a passage cited by its number ("[1]", "[2][3]", "[1, 4]", "【2】") is no figure
of the answer. Answers that cite their passages put these marks after every fact; read as
figures they would state "1" and "2" beside the fact's own words ("2 years", "1 quarter")."""

from cofe._citations import CITATION as _CITATION
from cofe.matching.answer._rules import substitution

CITATIONS = substitution(
    "citations",
    "A passage's number in brackets after a fact is a citation, not a figure.",
    "common",
    _CITATION,
    " ",
    lambda text: ("[" in text or "【" in text) and _CITATION.search(text) is not None,
    reaches=(
        ("Revenue rose 2% [1][3] in 2019.", "Revenue rose 2%    in 2019."),
        ("净利润为5亿元【2】。", "净利润为5亿元 。"),
    ),
    misses=("the array a[i] holds it", "see note [a]", "a ratio of 1:2"),
)
