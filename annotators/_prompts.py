"""Versioned few-shot prompts, English and Chinese. Change the text, change the version."""

from __future__ import annotations

import json
from typing import TypedDict

PROMPT_VERSION = "annotate-2026-11-22.1"


class _Example(TypedDict):
    """A worked example: the segment, and the reply the model should give for it."""

    title: str
    segment: str
    reply: dict[str, list[dict[str, object]]]  # the JSON the model should send


_EXAMPLE_EN: _Example = {
    "title": "Amazon rainforest",
    "segment": (
        "The Amazon rainforest covers most of the Amazon basin of South America. This basin "
        "encompasses 7,000,000 square kilometres, of which 5,500,000 square kilometres are "
        "covered by the rainforest. The majority of the forest is contained within Brazil, "
        "with 60% of the rainforest, followed by Peru with 13%."
    ),
    "reply": {
        "queries": [
            {
                "type": "factual",
                "query": "How large is the area covered by the Amazon rainforest?",
                "coarse_keywords": ["Amazon rainforest"],
                "fine_keywords": [["5,500,000 square kilometres"]],
                "answer": "About 5,500,000 square kilometres.",
            },
            {
                "type": "comparative",
                "query": "How do Brazil and Peru compare in their share of the Amazon rainforest?",
                "coarse_keywords": ["Amazon rainforest"],
                "fine_keywords": [["Brazil", "60%"], ["Peru", "13%"]],
                "answer": "Brazil holds 60% of the rainforest, far more than Peru with 13%.",
            },
        ]
    },
}

_EXAMPLE_ZH: _Example = {
    "title": "长江",
    "segment": (
        "长江是亚洲第一长河，全长6397公里，流经青海、西藏、四川等11个省级行政区，"
        "最终在上海注入东海。长江流域面积约180万平方公里。"
    ),
    "reply": {
        "queries": [
            {
                "type": "factual",
                "query": "长江全长多少公里？",
                "coarse_keywords": ["长江"],
                "fine_keywords": [["6397公里"]],
                "answer": "长江全长6397公里。",
            },
            {
                "type": "analytical",
                "query": "长江从哪里注入大海，流经多少个省级行政区？",
                "coarse_keywords": ["长江"],
                "fine_keywords": [["11个省级行政区"], ["上海", "东海"]],
                "answer": "长江流经11个省级行政区，在上海注入东海。",
            },
        ]
    },
}

SYSTEM_EN = """You write evaluation questions for a retrieval system from one passage of a document.
Write up to one question of each type, only where the passage supports it:
- factual: asks for a fact stated in the passage;
- analytical: asks why or how, combining statements of the passage;
- comparative: compares two things the passage describes;
- tutorial: asks how to do something the passage explains step by step.
Skip a type the passage cannot support. For every question give:
- coarse_keywords: the entity the question is about, copied exactly from the passage (1-2 items);
- fine_keywords: the information points the answer needs, each a list of short fragments
  copied EXACTLY, character for character, from the passage (never paraphrase);
- answer: a short reference answer using only the passage.
Reply with JSON only: {"queries": [{"type": ..., "query": ..., "coarse_keywords": [...],
"fine_keywords": [[...], ...], "answer": ...}]}"""

SYSTEM_ZH = """你为检索系统编写评测问题，依据是文档中的一段文字。
每种类型最多写一个问题，且只在该段落能支撑时才写：
- factual（事实类）：询问段落中陈述的事实；
- analytical（分析类）：询问原因或方式，需综合段落中的多处陈述；
- comparative（比较类）：比较段落描述的两个事物；
- tutorial（教程类）：询问段落逐步说明的操作方法。
段落无法支撑的类型请跳过。每个问题需给出：
- coarse_keywords：问题所关于的实体，必须从段落中原样复制（1-2个）；
- fine_keywords：答案所需的信息点，每个信息点是若干短片段，必须从段落中逐字原样复制（不得改写）；
- answer：仅依据该段落的简短参考答案。
只回复JSON：{"queries": [{"type": ..., "query": ..., "coarse_keywords": [...],
"fine_keywords": [[...], ...], "answer": ...}]}"""


def _user(title: str, segment: str, language: str) -> str:
    if language == "zh":
        return f"文档标题：{title}\n\n段落：\n{segment}"
    return f"Document title: {title}\n\nPassage:\n{segment}"


def build_messages(title: str, segment: str, language: str) -> list[dict[str, str]]:
    """System rules, one worked example (few-shot), then the segment to annotate."""
    system, example = (SYSTEM_ZH, _EXAMPLE_ZH) if language == "zh" else (SYSTEM_EN, _EXAMPLE_EN)
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": _user(example["title"], example["segment"], language)},
        {"role": "assistant", "content": json.dumps(example["reply"], ensure_ascii=False)},
        {"role": "user", "content": _user(title, segment, language)},
    ]


def detect_language(text: str) -> str:
    """``zh`` when CJK characters make up a fifth of the letters, else ``en``."""
    from cofe.matching import is_cjk

    letters = [ch for ch in text[:4000] if ch.isalpha()]
    if not letters:
        return "en"
    cjk = sum(1 for ch in letters if is_cjk(ch))
    return "zh" if cjk / len(letters) >= 0.2 else "en"
