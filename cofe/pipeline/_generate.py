"""Generators: an OpenAI-compatible LLM, or an extractive stand-in that is not an LLM."""

from __future__ import annotations

import re
from typing import Any

from cofe.llm import Endpoint
from cofe.matching import STOPWORDS, strict_tokens
from cofe.runlog import Chunk

_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]*")

SYSTEM_PROMPT = (
    "You answer questions using only the numbered context passages. "
    "Answer briefly and copy names, numbers and dates exactly as they appear. "
    "If the passages do not contain the answer, say you do not know."
)


class ExtractiveGenerator:
    """NOT an LLM: answers with the context sentence sharing most content words with the query.

    It lets the whole chain run offline; its answers measure whether the
    information reached the context, not how well a model would use it.
    """

    name = "extractive (not an LLM)"

    def __call__(self, query: str, context: list[Chunk]) -> str:
        query_tokens = strict_tokens(query)
        wanted = {t for t in query_tokens if t not in STOPWORDS} or set(query_tokens)
        best, best_overlap = "", -1
        for chunk in context:
            for match in _SENTENCE.finditer(chunk.text):
                sentence = match.group().strip()
                if not sentence:
                    continue
                overlap = len(wanted & set(strict_tokens(sentence)))
                if overlap > best_overlap:
                    best, best_overlap = sentence, overlap
        return best

    def describe(self) -> dict[str, Any]:
        return {"generator": self.name}


class OpenAIGenerator:
    """Chat completion on any OpenAI-compatible endpoint, context passages numbered in the prompt."""

    name = "openai"

    def __init__(self, endpoint: Endpoint, *, max_tokens: int = 256, temperature: float = 0.0):
        self.endpoint, self.max_tokens, self.temperature = endpoint, max_tokens, temperature

    @staticmethod
    def messages(query: str, context: list[Chunk]) -> list[dict[str, str]]:
        passages = "\n\n".join(f"[{i}] {c.text}" for i, c in enumerate(context, start=1))
        return [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": f"Context:\n{passages}\n\nQuestion: {query}\nAnswer:"},
        ]

    def __call__(self, query: str, context: list[Chunk]) -> str:
        return self.endpoint.chat(
            self.endpoint.client(),
            self.messages(query, context),
            max_tokens=self.max_tokens,
            temperature=self.temperature,
        ).strip()

    def describe(self) -> dict[str, Any]:
        return {"generator": self.name, **self.endpoint.describe(), "max_tokens": self.max_tokens}
