"""contractions: "can't" = "cannot" = "can not"; "'s", "'re", "'ve" dropped."""

import re

from cofe.matching.answer._rules import TextRule, register

_CONTRACTIONS = (
    (re.compile(r"\bcan['’]t\b", re.I), "can not"),
    (re.compile(r"\bwon['’]t\b", re.I), "will not"),
    (re.compile(r"\bshan['’]t\b", re.I), "shall not"),
    (re.compile(r"\bcannot\b", re.I), "can not"),
    (re.compile(r"n['’]t\b", re.I), " not"),
    (re.compile(r"['’](re|ve|ll|d|m)\b", re.I), " "),
    (re.compile(r"['’]s\b", re.I), ""),  # possessive or "is": a function word either way
)


def _expand(text: str) -> str:
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    return text


CONTRACTIONS = register(
    TextRule(
        "contractions",
        "English contractions expanded (can't, won't, -n't), 's 're 've 'll 'd 'm dropped.",
        "en",
        _expand,
        lambda text: "'" in text or "’" in text or "annot" in text,
        reaches=(
            ("machines can't replicate", "machines can not replicate"),
            ("They won’t return", "They will not return"),
            ("the MSP's offices", "the MSP offices"),
        ),
        misses=("machines do not replicate",),
    )
)
