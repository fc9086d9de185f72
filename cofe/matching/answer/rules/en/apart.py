"""apart: a name a reading shortened must be a name of its own in the answer."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._reading import Fragment
from cofe.matching.answer._rules import Case, Decider, register

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading

_POSSESSIVE = re.compile(r"['’]s\b")
_NAME_WORD = re.compile(r"[A-Za-z](?:[\w'’&-]|\.(?=\w))*")  # "U.S." but not "Apple."


def _apart(m: AnswerMatcher, names: tuple[str, ...]) -> str:
    """A shortened name the answer does not write as a name of its own: not at all
    ("Kenya Power" in "the Kenya Electricity Board ... power generation"), or inside a
    longer name ("Salt Lake" in "the Great Salt Lake", "Apple" in "Apple Music")."""
    if m._words is None:
        m._words = [
            (w[0], _POSSESSIVE.sub("", w[0]).casefold(), w.start(), w.end())
            for w in _NAME_WORD.finditer(m._answer_text)
        ]
    text, words = m._answer_text, m._words
    for name in names:
        wanted = [_POSSESSIVE.sub("", w).casefold() for w in name.split()]
        width = len(wanted)
        for i in range(len(words) - width + 1):
            if [w[1] for w in words[i : i + width]] != wanted:
                continue
            before = words[i - 1] if i else None
            after = words[i + width] if i + width < len(words) else None
            # a capitalised word right beside it (only spaces between) makes it part of
            # another name; a sentence's first word does not count
            joined_before = (
                before is not None
                and before[0][0].isupper()
                and not text[before[3] : words[i][2]].strip()
                and text[: before[2]].rstrip()[-1:] not in ("", ".", "!", "?", "\n")
            )
            joined_after = (
                after is not None
                and after[0][0].isupper()
                and not text[words[i + width - 1][3] : after[2]].strip()
            )
            if not joined_before and not joined_after:
                break
        else:
            return name
    return ""


def _decide(m: AnswerMatcher, r: Reading) -> Fragment | None:
    if r.missing or not r.whole_names:
        return None
    apart = _apart(m, r.whole_names)
    if not apart:
        return None
    return Fragment(Decision.UNDECIDED, r.text, (), f"{apart!r} not a name of its own")


APART = register(
    Decider(
        "apart",
        "A name a reading shortened (New York City -> New York) not written as a name of its own.",
        "en",
        _decide,
        reaches=(
            Case("He streams on Apple Music.", "Apple", Decision.UNDECIDED, whole_names=("Apple",)),
        ),
        misses=(Case("It was made by Apple.", "Apple", whole_names=("Apple",)),),
    )
)
