"""The judge's prompts, versioned: a change of wording is a new version (and a new cache key).

Two calls per sample cover Faithfulness, SourceFaithfulness and the claim-level
correctness measures (RAGAS asks two for faithfulness alone, and two to four
for factual correctness):

1. **claims**: the answer's claims, each a short self-contained statement
   (pronouns resolved with the question), from the question and the answer
   only -- shown the reference, a small model wrote the reference's facts as
   the answer's claims; and, for AnswerRelevancy (RAGAS's definition), three
   questions the answer answers and whether it is noncommittal. The reference
   answer's claims are its sentences, taken verbatim with no call
   (``reference_claims``): a reference is short, and written to be checked;
2. **checks**: each answer claim against the context, the source passage and
   the reference; each reference claim against the answer and the context
   (RAGAS's context recall); which context chunks help reach the reference
   answer (RAGAS's context precision); and a 1-5 correctness score of the
   answer against the reference (LlamaIndex's correctness evaluator scale); and, for each of
   the sample's information points (its ``fine_keywords``), whether the answer and the context
   convey it: "support", "partial" or "not_support" (TREC 2024 RAG's nugget assignment).

English or Chinese by the question's script; a worked example in each, about an invented
bridge (``EXAMPLE_MARKERS``), so that what a reply copies from it is recognisable.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from cofe.matching import is_cjk

Points = Sequence[Sequence[Sequence[str]]]
"""A sample's information points: each a list of fragments, each fragment its alternatives."""

PROMPT_VERSION = "judge-7"

# The worked examples are about an invented bridge, so a claim, a question or a label copied
# from them into a reply is recognisable (an example about a real article -- judge-5's Super
# Bowl 50 -- was copied as if it were the sample's own facts). What a copy looks like:
EXAMPLE_MARKERS = ("quillon", "ostrel", "奎隆", "奥斯特尔")
EXAMPLE_CORRECTNESS = 2  # the examples' correctness value (an echo is counted across samples)
# the examples' answer-claim labels: (claim, context, source, reference) per claim
EXAMPLE_CLAIM_LABELS = ((0, False, False, False), (1, True, True, True), (2, False, False, False))

_CLAIMS_EN = """You split an answer into claims for fact checking.
Read only the answer. Do not answer the question yourself and add nothing the answer does not
say: a wrong or strange statement in the answer is still one of its claims.
A claim is one short, self-contained statement from the answer: resolve pronouns with the
question, keep numbers and names exactly. A refusal or "I don't know" states no claim.
Also write three questions the answer answers, and say whether the answer is noncommittal
(evasive, vague or a refusal). The example below is invented: never copy its claims.

Example
Question: When did the Quillon Bridge open, and who designed it?
Answer: The Quillon Bridge opened in 1732. Marta Ostrel designed it, and it is made of iron.
Reply: {"answer_claims": ["The Quillon Bridge opened in 1732.", "Marta Ostrel designed the Quillon Bridge.", "The Quillon Bridge is made of iron."], "questions": ["When did the Quillon Bridge open?", "Who designed the Quillon Bridge?", "What is the Quillon Bridge made of?"], "noncommittal": false}

Reply with only a JSON object {"answer_claims": [...], "questions": [...], "noncommittal": ...}."""

_CLAIMS_ZH = """你把回答拆成用于事实核查的断言。
只读回答本身。不要自己回答问题，也不要添加回答没有说的内容：回答中错误或奇怪的陈述也是它的断言。
每条断言是回答中一句简短、独立的陈述：用问题补全代词，数字和名称保持原样。拒答或"我不知道"不包含断言。
另写出该回答所回答的三个问题，并判断回答是否含糊其辞（回避、模糊或拒答）。下面的示例是虚构的：不要照抄其中的断言。

示例
问题：奎隆桥何时通车，由谁设计？
回答：奎隆桥于1732年通车。它由玛塔·奥斯特尔设计，是铁制的。
回复：{"answer_claims": ["奎隆桥于1732年通车。", "奎隆桥由玛塔·奥斯特尔设计。", "奎隆桥是铁制的。"], "questions": ["奎隆桥何时通车？", "奎隆桥由谁设计？", "奎隆桥是用什么材料建造的？"], "noncommittal": false}

只回复一个 JSON 对象 {"answer_claims": [...], "questions": [...], "noncommittal": ...}。"""

# The checks prompt, with and without the information points: [[...]] marks what a sample
# with points adds (a sample without fine keywords is asked nothing about points).
_CHECKS_EN_TEMPLATE = """You check claims against passages. A claim is supported by a passage only when
the passage states it or it follows directly from the passage; general knowledge does not count.

Example (invented)
Context: [1] The Quillon Bridge was designed by Marta Ostrel. [2] Ferries crossed the river before 1700.
Source: The Quillon Bridge opened in 1734. The Quillon Bridge was designed by Marta Ostrel. It is built of stone. Ferries crossed the river before 1700.
Reference: It opened in 1734 and was designed by Marta Ostrel.
Answer: The Quillon Bridge opened in 1732. Marta Ostrel designed it, and it is made of iron.
Answer claims: 0. The Quillon Bridge opened in 1732. 1. Marta Ostrel designed the Quillon Bridge. 2. The Quillon Bridge is made of iron.
Reference claims: 0. It opened in 1734 and was designed by Marta Ostrel.[[points]]
Reply: {"answer_claims": [{"claim": 0, "context": false, "source": false, "reference": false}, {"claim": 1, "context": true, "source": true, "reference": true}, {"claim": 2, "context": false, "source": false, "reference": false}], "reference_claims": [{"claim": 0, "answer": false, "context": false}],[[reply]] "useful_chunks": [1], "correctness": 2}

Label every claim listed for THIS answer, by its number, and no other: the example's claims
are not this answer's. Leave out "source" or "reference" when that passage is absent.
"useful_chunks": the numbers of the context chunks that help reach the reference.
"correctness" (only with a reference): 1 the answer is irrelevant to the question; 2-3 relevant
but with mistakes; 4-5 relevant and correct (5: complete).[[rules]]
Reply with only the JSON object."""

_POINTS_EN = {
    "points": """
Information points:
0. 1734
1. Marta Ostrel
2. stone""",
    "reply": """ "points": [{"point": 0, "answer": "not_support", "context": "not_support"}, {"point": 1, "answer": "support", "context": "support"}, {"point": 2, "answer": "not_support", "context": "not_support"}],""",
    "rules": """
"points": label every information point, by its number. A point is one piece of information,
shown as text fragments copied from a document ("; " between fragments, " / " between other
wordings of one fragment). "answer": does the answer convey this information? "support": all
of it, in any wording; "partial": only some of it; "not_support": none of it, or a different
value (1732 is not 1734). "context": the same question for the context.""",
}

_CHECKS_ZH_TEMPLATE = """你根据文段核查断言。只有文段明确陈述或可直接推出时，断言才算被支持；常识不算。

示例（虚构）
上下文：[1] 奎隆桥由玛塔·奥斯特尔设计。 [2] 1700年以前人们乘渡船过河。
来源：奎隆桥于1734年通车。奎隆桥由玛塔·奥斯特尔设计。桥身为石制。1700年以前人们乘渡船过河。
参考答案：奎隆桥于1734年通车，由玛塔·奥斯特尔设计。
回答：奎隆桥于1732年通车。它由玛塔·奥斯特尔设计，是铁制的。
回答断言：0. 奎隆桥于1732年通车。 1. 奎隆桥由玛塔·奥斯特尔设计。 2. 奎隆桥是铁制的。
参考断言：0. 奎隆桥于1734年通车，由玛塔·奥斯特尔设计。[[points]]
回复：{"answer_claims": [{"claim": 0, "context": false, "source": false, "reference": false}, {"claim": 1, "context": true, "source": true, "reference": true}, {"claim": 2, "context": false, "source": false, "reference": false}], "reference_claims": [{"claim": 0, "answer": false, "context": false}],[[reply]] "useful_chunks": [1], "correctness": 2}

只按编号标注为本回答列出的断言，不要标注其他断言：示例中的断言不属于本回答。没有来源或参考答案时省略 "source" 或 "reference"。"useful_chunks"：有助于得出参考答案的上下文片段编号。
"correctness"（仅当有参考答案）：1 回答与问题无关；2-3 相关但有错误；4-5 相关且正确（5 为完整）。[[rules]]
只回复 JSON 对象。"""

_POINTS_ZH = {
    "points": """
信息点：
0. 1734年
1. 玛塔·奥斯特尔
2. 石制""",
    "reply": """ "points": [{"point": 0, "answer": "not_support", "context": "not_support"}, {"point": 1, "answer": "support", "context": "support"}, {"point": 2, "answer": "not_support", "context": "not_support"}],""",
    "rules": """
"points"：按编号标注每个信息点。信息点是一条信息，以从文档摘取的文本片段表示（片段之间用"；"分隔，同一片段的不同说法用" / "分隔）。"answer"：回答是否传达了这条信息？"support"：全部传达，措辞不限；"partial"：只传达了一部分；"not_support"：没有传达，或给出了不同的值（1732年不是1734年）。"context"：对上下文作同样的判断。""",
}


def _fill(template: str, parts: dict[str, str] | None) -> str:
    for name in ("points", "reply", "rules"):
        marker = f"[[{name}]]"
        if template.count(marker) != 1:
            raise RuntimeError(f"the checks prompt needs {marker} once")
        template = template.replace(marker, parts[name] if parts else "")
    return template


_CHECKS_EN = _fill(_CHECKS_EN_TEMPLATE, _POINTS_EN)
_CHECKS_ZH = _fill(_CHECKS_ZH_TEMPLATE, _POINTS_ZH)
_CHECKS_EN_NO_POINTS = _fill(_CHECKS_EN_TEMPLATE, None)
_CHECKS_ZH_NO_POINTS = _fill(_CHECKS_ZH_TEMPLATE, None)
# The step-by-step mode (``cofe judge --steps``): after the claims call, one call per answer
# claim (that claim against each passage) and one per reference claim (against the answer and
# the context), then one call for what concerns the whole answer (useful chunks, correctness,
# points) -- more calls, each with one thing to decide and nothing to number. Its judgements
# carry PROMPT_VERSION + STEPWISE_SUFFIX.
STEPWISE_SUFFIX = "+steps"

_STEP_CLAIM_EN = """You check one claim against passages. The claim is supported by a passage only when
the passage states it or it follows directly from the passage; general knowledge does not count.
For each passage given, say true (supported) or false (not supported); leave out a passage
that is not given.

Example (invented)
Context: The Quillon Bridge was designed by Marta Ostrel.
Source: The Quillon Bridge opened in 1734. The Quillon Bridge was designed by Marta Ostrel.
Reference: It opened in 1734.
Claim: The Quillon Bridge opened in 1732.
Reply: {"context": false, "source": false, "reference": false}

Reply with only the JSON object."""

_STEP_CLAIM_ZH = """你根据文段核查一条断言。只有文段明确陈述或可直接推出时，断言才算被支持；常识不算。
对给出的每个文段回答 true（支持）或 false（不支持）；没有给出的文段省略。

示例（虚构）
上下文：奎隆桥由玛塔·奥斯特尔设计。
来源：奎隆桥于1734年通车。奎隆桥由玛塔·奥斯特尔设计。
参考答案：奎隆桥于1734年通车。
断言：奎隆桥于1732年通车。
回复：{"context": false, "source": false, "reference": false}

只回复 JSON 对象。"""

_STEP_REFERENCE_EN = """You check whether a statement is conveyed by an answer, and by a context. It is
conveyed only when the text states it, in any wording, or it follows directly; general
knowledge does not count. Say true or false for each.

Example (invented)
Answer: The Quillon Bridge opened in 1732.
Context: The Quillon Bridge was designed by Marta Ostrel.
Statement: The Quillon Bridge opened in 1734.
Reply: {"answer": false, "context": false}

Reply with only the JSON object."""

_STEP_REFERENCE_ZH = """你判断一条陈述是否由回答传达、是否由上下文传达。只有文本明确陈述（措辞不限）或可直接推出时才算传达；常识不算。分别回答 true 或 false。

示例（虚构）
回答：奎隆桥于1732年通车。
上下文：奎隆桥由玛塔·奥斯特尔设计。
陈述：奎隆桥于1734年通车。
回复：{"answer": false, "context": false}

只回复 JSON 对象。"""


def claim_messages(
    question: str, claim: str, context: str | list[str], source: str | None, reference: str | None
) -> list[dict[str, str]]:
    """A step: one answer claim against the context, the source and the reference."""
    zh = language(question) == "zh"
    names = (
        ("断言", "上下文", "来源", "参考答案")
        if zh
        else ("Claim", "Context", "Source", "Reference")
    )
    if isinstance(context, list):
        context = " ".join(f"[{i}] {c}" for i, c in enumerate(context, start=1))
    # the passages first and the claim last: a sample's step calls then share a prompt prefix,
    # which llama.cpp's server (and OpenAI's prompt cache) evaluates once
    parts = [f"{names[1]}: {context or '(empty)'}"]
    if source is not None:
        parts.append(f"{names[2]}: {source}")
    if reference:
        parts.append(f"{names[3]}: {reference}")
    parts.append(f"{names[0]}: {claim}")
    return [
        {"role": "system", "content": _STEP_CLAIM_ZH if zh else _STEP_CLAIM_EN},
        {"role": "user", "content": "\n".join(parts)},
    ]


def reference_claim_messages(
    question: str, statement: str, answer: str, context: str | list[str]
) -> list[dict[str, str]]:
    """A step: one reference claim against the answer and the context."""
    zh = language(question) == "zh"
    names = ("陈述", "回答", "上下文") if zh else ("Statement", "Answer", "Context")
    if isinstance(context, list):
        context = " ".join(f"[{i}] {c}" for i, c in enumerate(context, start=1))
    # the statement last, as in claim_messages: the calls share the answer and the context
    user = f"{names[1]}: {answer}\n{names[2]}: {context or '(empty)'}\n{names[0]}: {statement}"
    return [
        {"role": "system", "content": _STEP_REFERENCE_ZH if zh else _STEP_REFERENCE_EN},
        {"role": "user", "content": user},
    ]


# how a point's fragments are joined in a prompt (alternatives of one fragment: " / ")
_FRAGMENTS = {"en": "; ", "zh": "；"}


def language(question: str) -> str:
    return "zh" if any(is_cjk(ch) for ch in question) else "en"


def again(messages: list[dict[str, str]], repeat: int) -> list[dict[str, str]]:
    """Repeat ``repeat`` of a call: the same request, marked so no cache serves it twice."""
    if repeat == 0:
        return messages
    system = {
        **messages[0],
        "content": messages[0]["content"] + f"\n(independent judgement {repeat + 1})",
    }
    return [system, *messages[1:]]


def claims_messages(question: str, answer: str) -> list[dict[str, str]]:
    """The claims call: the question and the answer, nothing else to copy facts from."""
    zh = language(question) == "zh"
    labels = ("问题", "回答") if zh else ("Question", "Answer")
    user = f"{labels[0]}: {question}\n{labels[1]}: {answer}"
    return [
        {"role": "system", "content": _CLAIMS_ZH if zh else _CLAIMS_EN},
        {"role": "user", "content": user},
    ]


# a sentence ends at . ! ? followed by white space and a capital, digit or quote (not "U.S. "
# inside a name, "1.5", "Dr. Who"), or at a CJK full stop, question or exclamation mark
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'“‘(])|(?<=[。！？])")
_ABBREVIATION = re.compile(
    r"\b(?:[A-Z]|Mr|Mrs|Ms|Dr|St|Mt|Jr|Sr|No|vs|etc|e\.g|i\.e|Jan|Feb|Mar|Apr|Aug|Sept?|Oct|Nov|Dec)\.$"
)


def reference_claims(reference: str | None) -> list[str]:
    """The reference answer's claims, with no call: its sentences, verbatim (a short reference
    -- most are a phrase or one sentence -- is one claim, exactly as written)."""
    if not reference or not reference.strip():
        return []
    pieces: list[str] = []
    for piece in _SENTENCE_END.split(reference.strip()):
        piece = piece.strip()
        if not piece:
            continue
        if pieces and _ABBREVIATION.search(pieces[-1]):  # "Dr. Who" is one sentence
            pieces[-1] = f"{pieces[-1]} {piece}"
        else:
            pieces.append(piece)
    return pieces


def checks_messages(
    question: str,
    answer: str,
    context: str | list[str],
    source: str | None,
    reference: str | None,
    answer_claims: list[str],
    reference_claims: list[str],
    points: Points = (),
) -> list[dict[str, str]]:
    """The checks call; ``points`` (the sample's information points, numbered by their index in
    ``fine_keywords``) are listed for labelling when there are any."""
    zh = language(question) == "zh"
    names = (
        ("上下文", "来源", "参考答案", "回答", "回答断言", "参考断言", "信息点")
        if zh
        else (
            "Context",
            "Source",
            "Reference",
            "Answer",
            "Answer claims",
            "Reference claims",
            "Information points",
        )
    )
    if isinstance(context, list):
        context = " ".join(f"[{i}] {c}" for i, c in enumerate(context, start=1))
    parts = [f"{names[0]}: {context or '(empty)'}"]
    if source is not None:
        parts.append(f"{names[1]}: {source}")
    if reference:
        parts.append(f"{names[2]}: {reference}")
    parts.append(f"{names[3]}: {answer}")
    parts.append(f"{names[4]}: " + " ".join(f"{i}. {c}" for i, c in enumerate(answer_claims)))
    if reference_claims:
        parts.append(
            f"{names[5]}: " + " ".join(f"{i}. {c}" for i, c in enumerate(reference_claims))
        )
    if points:
        joint = _FRAGMENTS["zh" if zh else "en"]
        parts.append(f"{names[6]}:")
        # one line a point, whatever white space a keyword holds
        parts += [
            f"{i}. "
            + joint.join(
                " / ".join(" ".join(a.split()) for a in alternatives) for alternatives in point
            )
            for i, point in enumerate(points)
        ]
        system = _CHECKS_ZH if zh else _CHECKS_EN
    else:
        system = _CHECKS_ZH_NO_POINTS if zh else _CHECKS_EN_NO_POINTS
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": "\n".join(parts)},
    ]


def inputs_key(*texts: object) -> str:
    """What a judgement depends on, for resuming and caching (with the prompt version)."""
    from cofe._cache import content_key

    return content_key(PROMPT_VERSION, json.dumps(texts, ensure_ascii=False, default=str))
