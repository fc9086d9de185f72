"""zh-contracted: a Chinese word the answer writes longer ("招生" in "招收学生")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._rules import Binder, Case, register
from cofe.matching.answer._text import cjk_unit

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading


def contracted(word: str, text: str) -> bool:
    """A Chinese word the text writes longer, its characters in order within a short span:
    "招生" in "招收学生", "证交所" in "证券交易所" (Chinese abbreviates by keeping
    characters of the full form)."""
    span = 2 * len(word)
    start = text.find(word[0])
    while start != -1:
        at = start
        for char in word[1:]:
            at = text.find(char, at + 1, start + span)
            if at == -1:
                break
        else:
            return True
        start = text.find(word[0], start + 1)
    return False


def _bind(m: AnswerMatcher, r: Reading) -> frozenset[str]:
    text = m._text
    return frozenset(u for u in r.missing if len(u) >= 2 and cjk_unit(u) and contracted(u, text))


CONTRACTED = register(
    Binder(
        "zh-contracted",
        "A Chinese word whose characters the answer writes in order within twice its length.",
        "zh",
        _bind,
        reaches=(
            Case("该校区从二〇〇七年起开始招收学生。", "2007年开始招生"),
            Case("2008年在深圳证券交易所挂牌上市", "深圳证交所上市"),
        ),
        misses=(Case("学校开始招收了很多新的学生。", "开始招生", Decision.UNDECIDED),),
        applies=lambda m, r: bool(m._text) and bool(r.missing),
    )
)
