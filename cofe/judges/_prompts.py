"""The judge's prompts, versioned: a change of wording is a new version (and a new cache key).

Two calls per sample cover Faithfulness, SourceFaithfulness and the claim-level
correctness measures (RAGAS asks two for faithfulness alone, and two to four
for factual correctness):

1. **claims**: the answer's claims and the reference answer's claims, each a
   short self-contained statement (pronouns resolved with the question); and,
   for AnswerRelevancy (RAGAS's definition), three questions the answer
   answers and whether it is noncommittal;
2. **checks**: each answer claim against the context, the source passage and
   the reference; each reference claim against the answer and the context
   (RAGAS's context recall); which context chunks help reach the reference
   answer (RAGAS's context precision); and a 1-5 correctness score of the
   answer against the reference (LlamaIndex's correctness evaluator scale); and, for each of
   the sample's information points (its ``fine_keywords``), whether the answer and the context
   convey it: "support", "partial" or "not_support" (TREC 2024 RAG's nugget assignment).

English or Chinese by the question's script; a worked example in each.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from cofe.matching import is_cjk

Points = Sequence[Sequence[Sequence[str]]]
"""A sample's information points: each a list of fragments, each fragment its alternatives."""

PROMPT_VERSION = "judge-5"

_CLAIMS_EN = """You split texts into claims for fact checking.
A claim is one short, self-contained statement of fact taken from the text: resolve pronouns
with the question, keep numbers and names exactly, and add nothing the text does not say.
A refusal or "I don't know" states no claim. Also write three questions the answer answers,
and say whether the answer is noncommittal (evasive, vague or a refusal).

Example
Question: Who won Super Bowl 50 and where?
Answer: The Denver Broncos won it. It was played at Levi's Stadium.
Reference: Denver Broncos
Reply: {"answer_claims": ["The Denver Broncos won Super Bowl 50.", "Super Bowl 50 was played at Levi's Stadium."], "reference_claims": ["The Denver Broncos won Super Bowl 50."], "questions": ["Who won Super Bowl 50?", "Where was Super Bowl 50 played?", "Which team won the game at Levi's Stadium?"], "noncommittal": false}

Reply with only a JSON object {"answer_claims": [...], "reference_claims": [...], "questions": [...], "noncommittal": ...}."""

_CLAIMS_ZH = """你把文本拆成用于事实核查的断言。
每条断言是一句简短、独立的事实陈述：用问题补全代词，数字和名称保持原样，不添加原文没有的内容。
拒答或"我不知道"不包含断言。另写出该回答所回答的三个问题，并判断回答是否含糊其辞（回避、模糊或拒答）。

示例
问题：第50届超级碗的冠军是谁，在哪里举行？
回答：丹佛野马队赢了。比赛在李维斯体育场举行。
参考答案：丹佛野马队
回复：{"answer_claims": ["丹佛野马队赢得了第50届超级碗。", "第50届超级碗在李维斯体育场举行。"], "reference_claims": ["丹佛野马队赢得了第50届超级碗。"], "questions": ["谁赢得了第50届超级碗？", "第50届超级碗在哪里举行？", "哪支球队在李维斯体育场获胜？"], "noncommittal": false}

只回复一个 JSON 对象 {"answer_claims": [...], "reference_claims": [...], "questions": [...], "noncommittal": ...}。"""

# The checks prompt, with and without the information points: [[...]] marks what a sample
# with points adds (a sample without fine keywords is asked nothing about points).
_CHECKS_EN_TEMPLATE = """You check claims against passages. A claim is supported by a passage only when
the passage states it or it follows directly from the passage; general knowledge does not count.

Example
Context: [1] The Broncos beat the Panthers 24-10. [2] Tickets cost $5,000.
Source: Super Bowl 50 was played at Levi's Stadium. The Broncos beat the Panthers 24-10.
Reference: Denver Broncos
Answer: The Broncos won. It was played in Miami.
Answer claims: 0. The Broncos won Super Bowl 50. 1. Super Bowl 50 was played in Miami.
Reference claims: 0. The Denver Broncos won Super Bowl 50.[[points]]
Reply: {"answer_claims": [{"claim": 0, "context": true, "source": true, "reference": true}, {"claim": 1, "context": false, "source": false, "reference": false}], "reference_claims": [{"claim": 0, "answer": true, "context": true}],[[reply]] "useful_chunks": [1], "correctness": 3}

Label every claim, by its number. Leave out "source" or "reference" when that passage is
absent. "useful_chunks": the numbers of the context chunks that help reach the reference.
"correctness" (only with a reference): 1 the answer is irrelevant to the question; 2-3 relevant
but with mistakes; 4-5 relevant and correct (5: complete).[[rules]]
Reply with only the JSON object."""

_POINTS_EN = {
    "points": """
Information points:
0. Denver Broncos
1. Carolina Panthers; 24-10
2. Levi's Stadium / Levi's""",
    "reply": """ "points": [{"point": 0, "answer": "support", "context": "support"}, {"point": 1, "answer": "not_support", "context": "support"}, {"point": 2, "answer": "not_support", "context": "not_support"}],""",
    "rules": """
"points": label every information point, by its number. A point is one piece of information,
shown as text fragments copied from a document ("; " between fragments, " / " between other
wordings of one fragment). "answer": does the answer convey this information? "support": all
of it, in any wording; "partial": only some of it; "not_support": none of it, or a different
value (Miami is not Levi's Stadium). "context": the same question for the context.""",
}

_CHECKS_ZH_TEMPLATE = """你根据文段核查断言。只有文段明确陈述或可直接推出时，断言才算被支持；常识不算。

示例
上下文：[1] 野马队以24比10击败黑豹队。 [2] 门票售价5000美元。
来源：第50届超级碗在李维斯体育场举行。野马队以24比10击败黑豹队。
参考答案：丹佛野马队
回答：野马队赢了。比赛在迈阿密举行。
回答断言：0. 野马队赢得了第50届超级碗。 1. 第50届超级碗在迈阿密举行。
参考断言：0. 丹佛野马队赢得了第50届超级碗。[[points]]
回复：{"answer_claims": [{"claim": 0, "context": true, "source": true, "reference": true}, {"claim": 1, "context": false, "source": false, "reference": false}], "reference_claims": [{"claim": 0, "answer": true, "context": true}],[[reply]] "useful_chunks": [1], "correctness": 3}

按编号标注每条断言。没有来源或参考答案时省略 "source" 或 "reference"。"useful_chunks"：有助于得出参考答案的上下文片段编号。
"correctness"（仅当有参考答案）：1 回答与问题无关；2-3 相关但有错误；4-5 相关且正确（5 为完整）。[[rules]]
只回复 JSON 对象。"""

_POINTS_ZH = {
    "points": """
信息点：
0. 丹佛野马队
1. 黑豹队；24比10
2. 李维斯体育场 / 李维斯""",
    "reply": """ "points": [{"point": 0, "answer": "support", "context": "support"}, {"point": 1, "answer": "not_support", "context": "support"}, {"point": 2, "answer": "not_support", "context": "not_support"}],""",
    "rules": """
"points"：按编号标注每个信息点。信息点是一条信息，以从文档摘取的文本片段表示（片段之间用"；"分隔，同一片段的不同说法用" / "分隔）。"answer"：回答是否传达了这条信息？"support"：全部传达，措辞不限；"partial"：只传达了一部分；"not_support"：没有传达，或给出了不同的值（迈阿密不是李维斯体育场）。"context"：对上下文作同样的判断。""",
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


def claims_messages(question: str, answer: str, reference: str | None) -> list[dict[str, str]]:
    zh = language(question) == "zh"
    labels = ("问题", "回答", "参考答案") if zh else ("Question", "Answer", "Reference")
    user = f"{labels[0]}: {question}\n{labels[1]}: {answer}\n"
    user += f"{labels[2]}: {reference}" if reference else f"{labels[2]}: (none)"
    return [
        {"role": "system", "content": _CLAIMS_ZH if zh else _CLAIMS_EN},
        {"role": "user", "content": user},
    ]


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
        else ("Context", "Source", "Reference", "Answer", "Answer claims", "Reference claims",
              "Information points")
    )  # fmt: skip
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
        parts += [f"{i}. " + joint.join(" / ".join(" ".join(a.split()) for a in alternatives)
                                        for alternatives in point)
                  for i, point in enumerate(points)]  # fmt: skip
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
