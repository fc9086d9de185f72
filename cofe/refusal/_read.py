"""Reading an answer for a decline, as a person reads it.

The answer is folded (NFKC, lower case, straight apostrophes, single spaces), quoted
speech is set aside ("He said: 'I don't know.'" reports a decline, it does not make one),
and it is cut into sentences. The first sentence that declines -- a ``decline`` rule at
its start once courtesies and attributions (``lead_in`` rules) are stripped, or an
``anywhere`` rule inside it -- is the decline. What follows decides what kind it is:

* **answered** -- after the decline the answer turns to an answer anyway: a contrast, a
  guess, outside knowledge or a computation (``turn`` rules) in the rest of that sentence
  or in a later sentence that does not itself decline or explain. "I don't know the
  exact year, but it was probably 1990" is an answer, judged by what it states.
* **whole** -- the decline is the first sentence and every later one declines again or
  explains (``explains`` rules: what the context covers instead, where to look, a request
  for more). Also a bare answer ("Unknown."). Declining is the answer's gist.
* **partial** -- a decline among other sentences ("Paris. I don't know the population.",
  or a preamble restating the question first). Words alone cannot tell a partial refusal
  from a refusal with a preamble: the answer step decides with the points (a point the
  answer conveys is conveyed; one it lacks and does not contradict is declined; an answer
  that conveys no point and states no figure of its own is a refusal whole).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from enum import StrEnum

from cofe._citations import CITATION as _CITATION
from cofe._script import simplified
from cofe.refusal._rules import Kind, RefusalRule, may_decline, of_kind


class Extent(StrEnum):
    WHOLE = "whole"  # declining is the answer's gist
    PARTIAL = "partial"  # a decline among other sentences: the points decide
    ANSWERED = "answered"  # declines, then answers anyway: not a refusal


@dataclass(frozen=True, slots=True)
class Decline:
    """The first decline of an answer, the rule that found it and what kind it is."""

    rule: str
    phrase: str  # the words the rule matched, folded
    sentence: str  # the sentence that declines, folded
    extent: Extent
    turn: str = ""  # the turn rule that made it an answer after all (extent ANSWERED)
    lead_ins: tuple[str, ...] = ()  # the lead-in rules stripped before the decline
    # the sentences that neither decline nor explain (a partial decline's other content)
    others: tuple[str, ...] = ()
    # nothing but declines and explanations follow it: the answer concludes by declining
    # (working shown before it -- figures read from the context -- does not answer)
    concludes: bool = False
    # the decline is the answer's first sentence (after lead-ins): what follows it is read
    # against the points, as explanation unless it conveys or contradicts one
    opens: bool = False

    @property
    def reason(self) -> str:
        """Evidence a person can check: the rule and the words."""
        return f'{self.rule}: "{self.phrase}"'


_BARE_LONGEST = 40  # characters: a bare decline is a few words ("cannot be determined")
_FOLD = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
_STRIP = " \t\r\n\"'`*_#>-—–()[]「」『』“”‘’《》.!?;:,。！？；：，、"
# markdown that carries no words: emphasis, headings, list markers, table rules
_MARKDOWN = re.compile(r"\*\*|__|^#{1,6}\s+|^\s*(?:[-*+•]|\d+[.)])\s+|\|", re.MULTILINE)
# quoted speech: a decline inside it is reported, not made (straight quotes only when they
# pair on one line, so an apostrophe never opens a quote)
_MARKS = frozenset("*_#|•-+\n")  # a text without them has no markdown to drop
_QUOTED = re.compile(r"“[^”]{0,400}”|「[^」]{0,400}」|『[^』]{0,400}』|\"[^\"\n]{0,400}\"")
# not the dots in "u.s." or "3.5", nor those of "vs.", "e.g.", "i.e.", which end no sentence
_SENTENCE_END = re.compile(r"(?<!\bvs)(?<!\be\.g)(?<!\bi\.e)[.!?;]+(?=\s|$)|[。！？；\n]+")


def fold(answer: str) -> str:
    """The answer as the rules read it: NFKC (ASCII already is), straight apostrophes, lower
    case, markdown marks dropped, spaces single."""
    text = _folded(answer)
    if _MARKS.intersection(text):
        text = _MARKDOWN.sub(" ", text)
    return " ".join(text.split())


def _folded(answer: str) -> str:
    """NFKC (skipped where the text already is), straight apostrophes, lower case, Chinese
    in simplified script (the rules are written in it)."""
    if not answer.isascii():
        if not unicodedata.is_normalized("NFKC", answer):
            answer = unicodedata.normalize("NFKC", answer)
        answer = simplified(answer)
    return answer.translate(_FOLD).lower()


def sentences(text: str) -> list[str]:
    parts = (p.strip(_STRIP) for p in _SENTENCE_END.split(text))
    return [p for p in parts if p]


def _lines(answer: str) -> str:
    """The answer folded, quoted speech and citation marks set aside, line breaks kept as
    sentence ends, a list item's marker kept as ``_ITEM`` at its start."""
    text = simplified(unicodedata.normalize("NFKC", answer)).translate(_FOLD).lower()
    text = _QUOTED.sub(" ", _MARKDOWN.sub(" ", _LIST_ITEM.sub(_ITEM, text)))
    return "\n".join(" ".join(_CITATION.sub(" ", line).split()) for line in text.splitlines())


_ITEM = "\ue000"  # stands for a list item's marker once markdown is dropped (private use)
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+•]|\d+[.)])[ \t]+", re.MULTILINE)


def _parts(answer: str) -> list[tuple[str, bool, bool]]:
    """The answer's sentences, each with whether it is a list item and whether it ends
    with a colon (it introduces what follows: "What the passages do contain:")."""
    out = []
    for line in _lines(answer).split("\n"):
        item = line.startswith(_ITEM)  # each sentence of an item's line belongs to it
        for piece in _SENTENCE_END.split(line):
            sentence = piece.strip(_STRIP + _ITEM)
            if sentence:
                out.append((sentence, item, _ends_colon(piece)))
    return out


def _strip_lead_ins(sentence: str) -> tuple[str, tuple[str, ...]]:
    rest, used = sentence, []
    for _ in range(3):  # "Sorry, but based on the context, I ..." has two
        for rule in of_kind(Kind.LEAD_IN):
            lead = rule.regex.match(rest)
            if lead is not None and lead.group(0):
                rest = rest[lead.end() :].lstrip(_STRIP)
                used.append(rule.name)
                break
        else:
            break
    return rest, tuple(used)


def _declines(
    sentence: str, candidates: frozenset[str] | None = None
) -> tuple[RefusalRule, re.Match[str], str, tuple[str, ...]] | None:
    """The decline rule a sentence opens with (after lead-ins), else one found anywhere in
    it; with the match, the text it matched in and the lead-ins stripped. ``candidates``:
    the rules worth trying (``may_decline`` of the sentence when not given)."""
    if candidates is None:
        candidates = may_decline(sentence)
    rules = [rule for rule in of_kind(Kind.DECLINE) if rule.name in candidates]
    if not rules:
        return None
    rest, leads = _strip_lead_ins(sentence)
    for rule in rules:
        if not rule.anywhere:
            found = rule.regex.match(rest)
            if found is not None:
                return rule, found, rest, leads
    for rule in rules:
        if rule.anywhere:
            found = rule.regex.search(sentence)
            if found is not None:
                return rule, found, sentence, leads
    return None


def _first(kind: Kind, text: str) -> str:
    """The first rule of a kind found in the text (its name), or ""."""
    return next((rule.name for rule in of_kind(kind) if rule.regex.search(text)), "")


def read_decline(answer: str) -> Decline | None:
    """The answer's first decline and its extent, or None when it declines nothing."""
    quick = _folded(answer)
    if len(quick) <= 2 * _BARE_LONGEST:  # a bare decline is short: read it folded
        bare = fold(answer).strip(_STRIP)
        if not bare:
            return None  # nothing was generated to decline with
        for rule in of_kind(Kind.BARE):
            if rule.regex.fullmatch(bare):
                return Decline(rule.name, bare, bare, Extent.WHOLE)
    # the words a decline rule needs hold across markdown and spaces (none span them)
    candidates = may_decline(" ".join(quick.split()))
    if not candidates:
        return None  # no word any decline rule needs: the common case, one pass
    laid_out = _parts(answer)
    parts = [sentence for sentence, _, _ in laid_out]
    first = next(
        (
            (at, s, found)
            for at, s in enumerate(parts)
            if (found := _declines(s, candidates)) is not None
        ),
        None,
    )
    if first is None:
        return None
    at, sentence, (rule, match, within, leads) = first
    later = parts[at + 1 :]
    own = [(_explains(part), item, colon) for part, item, colon in laid_out[at + 1 :]]
    # an item of a list the explanation introduces ("What the passages do contain:") is read
    # as explanation -- no turn, and the answer still concludes by declining -- but stays
    # among the other sentences: whether it conveys a point, the points decide
    listed = _introduced_items(own)
    explaining = [explains or item for (explains, _, _), item in zip(own, listed, strict=True)]
    # after an answer, a decline of anything further ("The context does not provide any
    # other information") declines what goes beyond it: the answer stands
    # (not when all before it only explains: "只提到它是菊科植物。至于外观，资料中并没有进一步
    # 说明"); such a decline still opens what the answer says ("The excerpt gives only the
    # 2020 ratio, 1.52%. So I cannot give the change.")
    opens = all(_explains(s) for s in parts[:at])
    beyond = _first(Kind.BEYOND, within[match.end() :]) if at > 0 and not opens else ""
    turn = (
        beyond
        or _first(Kind.TURN, within[match.end() :])
        or next(
            (
                name
                for s, explains in zip(later, explaining, strict=True)
                if not explains and (name := _first(Kind.TURN, s))
            ),
            "",
        )
    )
    others = tuple(
        s
        for s, explains, item in zip(later, explaining, listed, strict=True)
        if item or not explains
    )
    if turn:
        extent = Extent.ANSWERED
    elif not others and all(_HEADING.fullmatch(s) for s in parts[:at]):
        extent = Extent.WHOLE  # the first sentence, or after headings only
    else:
        extent = Extent.PARTIAL
    return Decline(
        rule.name,
        match.group(0).strip(),
        sentence,
        extent,
        turn,
        leads,
        (*parts[:at], *others),
        concludes=all(explaining),
        opens=opens,
    )


# a heading or label an answer lays itself out with ("## Conclusion", "**原因**"): no content
_HEADING = re.compile(
    r"(?:short |brief |final )?(?:answer|summary|conclusion|explanation|reasons?|details|notes?|"
    r"analysis|why|what's missing|what is missing|context)|"
    r"结论|原因|说明|分析|解释|备注|注|简答|答案|回答|总结|理由"
)


def _explains(sentence: str) -> bool:
    """A sentence that declines again, explains a decline, or is only a heading."""
    return bool(
        _HEADING.fullmatch(sentence) or _declines(sentence) or _first(Kind.EXPLAINS, sentence)
    )


def _introduced_items(flags: list[tuple[bool, bool, bool]]) -> list[bool]:
    """For sentences given as (explains, list item, ends with a colon): whether each is an
    item of a list that an explaining sentence introduced with a colon ("What the passages
    do contain:" and the items under it)."""
    out, introduced = [], False
    for explains, item, colon in flags:
        out.append(item and introduced and not explains)
        introduced = ((explains or out[-1]) and colon) or (introduced and item)
    return out


def _ends_colon(part: str) -> bool:
    return part.rstrip(" *_").endswith((":", "："))


def undeclined(answer: str) -> str:
    """The answer without its sentences that decline or explain a decline, as written (case
    kept): what it says besides declining, read to tell a point it declines from one it
    conveys ("The context does not say how long episodes ran" names the point it declines).
    The items of a list an explanation introduces ("What the passages do contain:") go with
    it: what the context holds instead is no answer to the point."""
    parts = [
        (part, folded, _LIST_ITEM.match(line) is not None)
        for line in unicodedata.normalize("NFKC", answer).splitlines()
        for part in _SENTENCE_END.split(line)
        if (folded := fold(_CITATION.sub(" ", part)).strip(_STRIP))
    ]
    flags = [(_explains(folded), item, _ends_colon(part)) for part, folded, item in parts]
    listed = _introduced_items(flags)
    kept = [
        part.strip()
        for (part, _, _), (explains, _, _), item in zip(parts, flags, listed, strict=True)
        if not (explains or item)
    ]
    return ". ".join(kept)


def refusal_reason(answer: str) -> str | None:
    """Why ``answer`` is a refusal whole (naming the rule and the words), or None.

    Only a decline that is the answer's gist counts here (``Extent.WHOLE``); a partial one
    is settled by the answer step against the points (``read_decline``)."""
    found = read_decline(answer)
    if found is None or found.extent is not Extent.WHOLE:
        return None
    return found.reason


def is_refusal(answer: str) -> bool:
    """Whether ``answer`` declines as a whole (see :func:`refusal_reason`)."""
    return refusal_reason(answer) is not None
