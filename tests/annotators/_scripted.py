"""A scripted annotator model: drafts queries from the passage in the prompt, like a careful LLM."""

from __future__ import annotations

import json
import re

from annotators import TYPES

_OPENERS = (
    "What is stated about",
    "Why does the text mention",
    "How does the text compare",
    "How can one use",
)


def passage_of(messages) -> tuple[str, str]:
    # the last user turn that carries a passage (a repair turn carries none)
    user = next(
        m["content"]
        for m in reversed(messages)
        if m["role"] == "user" and m["content"].startswith(("文档标题：", "Document title: "))
    )
    if user.startswith("文档标题："):
        title, passage = user[len("文档标题：") :].split("\n\n段落：\n", 1)
    else:
        title, passage = user[len("Document title: ") :].split("\n\nPassage:\n", 1)
    return title.strip(), passage


def sentences(passage: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?。！？])\s*", passage) if len(s.strip()) > 8]


def draft(messages, request=None, *, fragment=None) -> str:
    """One query per type, each from its own sentence, keywords copied from the passage."""
    title, passage = passage_of(messages)
    queries = []
    if title not in passage:  # like a model would: name an entity the passage does mention
        names = re.findall(r"\b[A-Z][a-z]{3,}(?: [A-Z][a-z]+)*", passage)
        title = names[0] if names else title
    for i, (kind, sentence) in enumerate(zip(TYPES, sentences(passage), strict=False)):
        if re.search(r"[\u4e00-\u9fff]", sentence):
            piece = sentence[2:7]
            query = f"关于{title}，第{i + 1}句说了什么：{sentence[:4]}？"
        else:
            words = sentence.rstrip(".!?").split()
            piece = " ".join(words[1:4]) if len(words) > 3 else sentence.rstrip(".!?")
            # the sentence's opening words without the fragment asked for (a query holding its
            # own answer is rejected)
            query = f"{_OPENERS[i]} {title} in '{' '.join(words[:1] + words[4:8])}'?"
        queries.append(
            {
                "type": kind,
                "query": query,
                "coarse_keywords": [title],
                "fine_keywords": [[fragment or piece]],
                "answer": sentence,
            }
        )
    return json.dumps({"queries": queries}, ensure_ascii=False)
