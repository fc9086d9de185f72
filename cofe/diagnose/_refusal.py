"""Answers that decline: a rule, in English and Chinese, precise before it is complete.

An answer is a refusal when declining is its gist, not when it hedges on the
way to an answer. The rule, on the answer with full-width punctuation folded
(NFKC), lower-cased, curly apostrophes straightened:

1. The whole answer is a bare decline ("Unknown.", "N/A", "未知"), or
2. its first sentence *opens* with a decline phrase ("I don't know", "I am
   unable to answer", "The context does not provide", "无法回答", "没有提供相关
   信息", "不知道"), after at most a courtesy ("Sorry,", "Unfortunately,",
   "抱歉，") and an attribution ("Based on the provided context,", "根据提供
   的资料，"), and
3. nothing after the decline turns towards an answer: no contrast or guess
   ("but", "however", "probably", "但是", "不过", "可能"), and every later
   sentence is itself a decline or an explanation of one (what the context
   only covers, a request for more context).

So "I don't know the exact year, but it was probably 1990." and "Paris. I
don't know the population." are answers; "I don't know. The context only
covers his early life." is a refusal. A decline phrase in the middle of an
answer never counts. Misses are the price of precision: a refusal worded in
a way the phrases below do not know is counted as an answer. A judge's
``noncommittal`` label, when there is one, is a separate signal.
"""

from __future__ import annotations

import re
import unicodedata

# Courtesies and attributions a decline often opens with; stripped (repeatedly) before the
# decline phrase must match.
_SOURCE_EN = (
    r"(?:provided |given |above |supplied |available |retrieved |following |reference )*"
    r"(?:context|passage|passages|text|texts|document|documents|information|sources?|"
    r"excerpts?|paragraphs?|materials?|articles?|snippets?|data)"
)
_SOURCE_ZH = (
    r"(?:所|您)?(?:提供|给出|给定|上述|以上|现有|已有)?的?"
    r"(?:上下文|信息|资料|材料|文本|内容|段落|文章|参考资料|背景信息|文档|文段|原文|文)"
)
_LEAD_INS = re.compile(
    r"^(?:"
    r"(?:i am |i'm |we are |we're )?(?:very |so |really |truly )?sorry|unfortunately|"
    r"regrettably|apologies|i apologi[sz]e|(?:i am|i'm) afraid|"
    rf"(?:based (?:solely |only )?on|according to|from|given|in|with) (?:the |this |these )?{_SOURCE_EN}|"
    r"很?抱歉|对不起|不好意思|很遗憾|遗憾的是|"
    rf"(?:根据|基于|依据|按照|从|就){_SOURCE_ZH}(?:来看|中|里|而言|来说)?"
    r")[\s,.:;!-]*(?:but |however,? |我们?)?"
)
# What a decline opens with (matched at the start, after the lead-ins).
_DECLINE_EN = (
    r"i (?:really )?(?:do not|don't|dont|did not|didn't) (?:know|have (?:enough |the |any |that )?"
    r"(?:information|answer|details?|context|data))|"
    r"i(?: am|'m) not (?:sure|certain|able to)|"
    r"i(?: cannot| can't| cant| can not| could not| couldn't| am unable to|'m unable to|"
    r" was unable to| am not able to|'m not able to| was not able to| have no way to) (?:\w+ )?"
    r"(?:answer|determine|find|provide|say|tell|locate|identify|confirm|verify|give|know|infer|"
    r"extract|see|help)|"
    r"(?:unable|impossible|not possible) to (?:answer|determine|say|tell|know|find|infer|"
    r"identify|provide)|"
    r"(?:it is|it's|it was) (?:not possible|impossible|not clear|unclear) (?:to |from |based on |"
    r"(?:in|given) the )|"
    r"(?:this|that|the|your) (?:question|answer|information) (?:cannot|can't|can not|could not|"
    r"couldn't) be (?:answered|determined|found|provided|identified)|"
    r"(?:the )?(?:answer|information) (?:to (?:this|that|the|your) question )?(?:is|was) not "
    r"(?:in|provided|given|mentioned|found|available|contained|present|specified|stated|known)|"
    rf"(?:the |this |these )?{_SOURCE_EN} (?:does not|doesn't|do not|don't|did not|didn't|"
    r"fails? to|provides? no|gives? no|contains? no|has no|have no|offers? no|makes? no|"
    r"says? nothing|is silent|are silent|lacks?)|"
    r"there (?:is|are|was|were) no (?:relevant |specific |such |explicit |direct |clear |"
    r"sufficient )?(?:information|mention|data|details?|answer|context)|"
    r"no (?:relevant |specific |such |explicit |sufficient )?(?:information|answer|details?|"
    r"mention|data)(?: (?:is|was|are|were|has been))? ?(?:provided|available|given|found|"
    r"mentioned|contained|present|in|about|on|regarding|$)|"
    r"(?:insufficient|not enough) (?:information|context|data|details)|"
    r"not (?:mentioned|provided|stated|specified|found|given|covered|answered|available|"
    r"discussed) (?:in|by) (?:the |this )"
)
_DECLINE_ZH = (
    r"(?:无法|不能|没法|没有办法|难以|未能|不可能)(?:从\S{0,12}?)?(?:回答|确定|判断|得知|知道|"
    r"找到|提供|给出|得出|推断|获知|查到|确认|识别|告诉)|"
    r"不(?:知道|清楚|确定|了解)|"
    rf"{_SOURCE_ZH}(?:中|里|内)?(?:并)?(?:没有|未|没|无)(?:有)?(?:提供|提及|提到|包含|说明|给出|"
    r"涉及|记载|相关|关于|明确|指出|描述)|"
    r"(?:并)?(?:没有|未|并未|并没有|无|暂无)(?:提供|提及|提到|找到|给出|查到)?(?:任何)?(?:相关|有关)?"
    r"(?:的)?(?:信息|内容|资料|答案|数据)|"
    rf"{_SOURCE_ZH}(?:中|里)?(?:信息)?不足|信息不足"
)
_DECLINE = re.compile(rf"(?:{_DECLINE_EN}|{_DECLINE_ZH})")
# Whole answers that decline with nothing else (trailing punctuation ignored).
_BARE = frozenset(
    {
        "unknown",
        "not known",
        "n/a",
        "na",
        "no answer",
        "not answerable",
        "unanswerable",
        "cannot answer",
        "can't answer",
        "cannot be determined",
        "no information",
        "未知",
        "不详",
        "无答案",
        "无可奉告",
        "不知道",
        "无法回答",
        "无法确定",
    }
)
# A turn towards an answer after the decline: a contrast, or a guess.
_TURN = re.compile(
    r"\b(?:but|however|though|although|nevertheless|nonetheless|that said|except|instead|"
    r"probably|likely|possibly|perhaps|maybe|presumably|my guess|i think|i believe|i'd guess|"
    r"it (?:might|may|could) be|it seems|appears to be)\b|"
    r"但|不过|然而|可是|只是|尽管|虽然|可能|也许|大概|或许|估计|应该是|推测|猜测"
)
# A later sentence that explains the decline rather than answering.
_EXPLAINS = re.compile(
    rf"{_DECLINE.pattern}|"
    r"\b(?:only|merely|just|mainly|mostly) (?:discuss|mention|talk|cover|describe|contain|"
    r"provide|focus|deal|refer|concern|address)|"
    r"\b(?:it|they|this|these) (?:does not|doesn't|do not|don't) (?:mention|say|provide|"
    r"specify|contain|include|cover|address|discuss)|"
    r"\b(?:please|could you|can you|you may|you might|you could|if you) (?:\w+ ){0,3}"
    r"(?:provide|share|give|check|consult|clarify|rephrase)|more (?:context|information|details)|"
    r"(?:只|仅|仅仅|主要)(?:是)?(?:提到|讨论|涉及|介绍|包含|描述|说明|讲述|关于)|请(?:提供|补充|查阅|说明)|"
    r"更多(?:的)?(?:信息|上下文|资料)"
)
_SENTENCE_END = re.compile(r"[.!?;]+(?=\s|$)|[。！？\n]+")  # not the dots inside "u.s."
_STRIP = " \t\r\n\"'`*_-—–()[]「」『』“”‘’《》.!?;:,。！？；：，、"
_FOLD = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})


def refusal_reason(answer: str) -> str | None:
    """Why ``answer`` is a refusal (naming the decline phrase matched), or None when it is not.

    An empty answer is not a refusal: nothing was generated to decline with (the generation
    measures say so on their own)."""
    text = _normalise(answer)
    if not text:
        return None
    if text.strip(_STRIP) in _BARE:
        return f'the whole answer declines: "{text.strip(_STRIP)}"'
    rest = _strip_lead_ins(text)
    decline = _DECLINE.match(rest)
    if decline is None:
        return None
    after = rest[decline.end() :]
    if _TURN.search(after):
        return None  # a hedge on the way to an answer
    later = _SENTENCE_END.split(after, maxsplit=1)
    if len(later) == 2 and any(
        not _EXPLAINS.search(sentence)
        for sentence in _SENTENCE_END.split(later[1])
        if sentence.strip(_STRIP)
    ):
        return None  # goes on to say something that is not about the decline
    return f'opens with a decline: "{decline.group(0).strip()}"'


def is_refusal(answer: str) -> bool:
    """Whether ``answer`` declines to answer (see :func:`refusal_reason` for the rule)."""
    return refusal_reason(answer) is not None


def _normalise(answer: str) -> str:
    text = unicodedata.normalize("NFKC", answer).translate(_FOLD).lower()
    return " ".join(text.split())


def _strip_lead_ins(text: str) -> str:
    rest = text.lstrip(_STRIP)
    for _ in range(3):  # "Sorry, but based on the context, I ..." has two
        lead = _LEAD_INS.match(rest)
        if lead is None or not lead.group(0):
            break
        rest = rest[lead.end() :].lstrip(_STRIP)
    return rest
