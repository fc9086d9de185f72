"""conclusion: an answer that computes is read by its conclusion -- a figure of the
fragment found only in a working line, when the conclusion states another value, is not
conveyed. A figure the answer also states outside its working lines (a list item, a fact
before the computation) is said, and this rule leaves it alone."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._reading import Fragment
from cofe.matching.answer._rules import Case, Decider, register
from cofe.matching.answer.rules.common._tolerance import beside

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading

# a working line: an equation or an operation between figures ("(6.0 - 5.2) / 5.2 = 15.4%")
_WORKING = re.compile(r"\d[^\n=]*=|=\s*[-$€£¥]?\d|\d\s*[×÷*]\s*\(?\d|\d\s+/\s+\(?\d")
# where a conclusion begins, in English and Chinese
_CONCLUDES = re.compile(
    r"(?:^|[\n.!?。！？]\s*)(?:\**\s*)"
    r"(?:therefore|thus|hence|so,|so the|in conclusion|in summary|to summari[sz]e|overall|"
    r"the (?:final )?answer is|final answer|answer:|the result is|this means|"
    r"因此|所以|综上|最终|答案[是为:：])",
    re.IGNORECASE,
)
_PIECES = re.compile(r"(?<=[.!?。！？])(?!\d)\s*|\n")  # not the dot of "5.0"


def _conclusion(answer: str) -> tuple[str, str, str]:
    """The answer's conclusion, its last working line ("" when it does not compute) and
    what the answer says outside its working lines and its conclusion. The conclusion is
    what follows the last conclusion marker; without one, the last sentence after the
    working, or what the last working line finds after its last "="."""
    pieces = [p.strip() for p in _PIECES.split(answer) if p.strip()]
    working = [i for i, p in enumerate(pieces) if _WORKING.search(p)]
    if not working:
        return "", "", ""
    line = pieces[working[-1]]
    marks = list(_CONCLUDES.finditer(answer))
    if marks and marks[-1].start() >= answer.find(line):
        text = answer[marks[-1].start() :].lstrip(" \n.!?。！？*")
    elif working[-1] + 1 < len(pieces):
        text = pieces[-1]
    else:
        text = line
    told = [p for i, p in enumerate(pieces) if i not in working and p not in text]
    return text.rsplit("=", 1)[-1].strip(), line, "\n".join(told)


def _decide(m: AnswerMatcher, r: Reading) -> Fragment | None:
    """Only where every unit is accounted for and the fragment holds a figure: the
    conclusion, read alone, must not state another value of it (a conclusion that says
    nothing of it leaves the working's figure standing)."""
    if r.missing or not r.frag.numbers:
        return None
    conclusion, line, told = _conclusion(m._answer_text)
    if not conclusion or conclusion == m._answer_text.strip():
        return None
    concluded = type(m)(conclusion, m._asked_about)
    if concluded.fragment(r.text).decision is Decision.PRESENT:
        return None
    # a figure stated in a sentence that computes nothing (one item of a list, a fact
    # given before the working) is said, not worked: the rule is only about working lines
    if told and type(m)(told, m._asked_about).fragment(r.text).decision is Decision.PRESENT:
        return None
    others = sorted(
        {said for number in r.frag.numbers for said, _ in beside(concluded, r, number)}
        - r.frag.numbers
    )
    if not others:
        return None
    return Fragment(
        Decision.ABSENT,
        r.text,
        tuple(sorted(r.frag.shown(n) for n in r.frag.numbers)),
        f"only in the working ({line[:120]!r}); the conclusion ({conclusion[:120]!r}) says "
        f"{', '.join(others)}",
    )


CONCLUSION = register(
    Decider(
        "conclusion",
        "A figure only in a working line, when the answer's conclusion states another value.",
        "common",
        _decide,
        reaches=(
            Case(
                "Margin = 1.2 / 5.0 = 24%. Using operating income instead: 0.3 / 5.0 = 6%. "
                "Therefore, the margin is 6%.",
                "24%",
                Decision.ABSENT,
            ),
        ),
        misses=(
            Case("Growth = (6.0 - 5.2) / 5.2 = 15.4%. So revenue grew about 15%.", "15.4%"),
            # the figure is said in a list item of its own; the last item is no conclusion
            Case(
                "1. **50米自由泳纪录**：她打破了纪录。\n2. **4×100米自由泳接力**：以3分33秒62刷新纪录。",
                "50米自由泳",
            ),
            Case(
                "Gross margin was 24% in 2019. Net margin = 0.3 / 5.0 = 6%. Therefore, the net "
                "margin is 6%.",
                "24%",
            ),
            Case("Growth = (6.0 - 5.2) / 5.2 = 15.4%.", "15.4%"),
            Case("Revenue grew 15.4% in 2020, to $6 billion.", "15.4%"),
        ),
    )
)
