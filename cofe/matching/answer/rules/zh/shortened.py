"""zh-shortened: a longer Chinese word said without its last character ("浙江省" as "浙江")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._rules import Binder, Case, register
from cofe.matching.answer._text import cjk_unit

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading


def _bind(m: AnswerMatcher, r: Reading) -> frozenset[str]:
    text = m._text
    return frozenset(u for u in r.missing if len(u) >= 3 and cjk_unit(u) and u[:-1] in text)


SHORTENED = register(
    Binder(
        "zh-shortened",
        "A Chinese word of three characters or more, said without its last one, as a stem.",
        "zh",
        _bind,
        reaches=(Case("美特斯邦威1995年创立于浙江温州", "浙江省温州市"),),
        misses=(Case("他毕业于北京大学", "北京师范大学", Decision.UNDECIDED),),
        applies=lambda m, r: bool(m._text) and bool(r.missing),
    )
)
