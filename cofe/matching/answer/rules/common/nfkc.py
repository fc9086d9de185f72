"""nfkc: Unicode compatibility forms folded ("km²" = "km2", full-width digits)."""

import unicodedata

from cofe.matching.answer._rules import TextRule, register

NFKC = register(
    TextRule(
        "nfkc",
        "Unicode NFKC: compatibility characters as their plain forms (ASCII is skipped).",
        "common",
        lambda text: unicodedata.normalize("NFKC", text),
        lambda text: not text.isascii(),
        reaches=(("1,000 km²", "1,000 km2"), ("１９９８年", "1998年")),
        misses=("plain ASCII text 5 km",),
    )
)
