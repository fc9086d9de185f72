"""Generators: an OpenAI-compatible LLM, or an extractive stand-in that is not an LLM."""

from __future__ import annotations

import re
from typing import Any

from cofe._cache import Cache
from cofe.llm import Endpoint, LLMClient, Usage
from cofe.matching import STOPWORDS, strict_tokens
from cofe.runlog import Chunk

_CLOSERS = re.escape("\"'”’)]」』）")
# A sentence ends after a run of 。！？ (Chinese puts no space after them), after a
# run of . ! ? followed by a space or the end of the text (so "3.5" and "e.g.x" do
# not end one), either optionally followed by closing quotes or brackets, or at a
# line break.
_SENTENCE = re.compile(rf"[^\n]*?(?:[。！？]+[{_CLOSERS}]*|[.!?]+[{_CLOSERS}]*(?=\s|\Z)|(?=\n)|\Z)")

SYSTEM_PROMPT = (
    "You answer questions using only the numbered context passages. "
    "Answer briefly and copy names, numbers and dates exactly as they appear. "
    "If the passages do not contain the answer, say you do not know."
)


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, English or Chinese, stripped, empty ones left out.

    A sentence ends at a run of ``。！？``; at a run of ``. ! ?`` followed by
    whitespace or the end of the text; or at a line break. Closing quotes and
    brackets right after the punctuation belong to the sentence.
    """
    return [s for m in _SENTENCE.finditer(text) if (s := m.group().strip())]


class ExtractiveGenerator:
    """NOT an LLM: answers with the context sentence sharing most content words with the query.

    Sentences are cut by :func:`split_sentences`; the query's content words
    are its strict tokens minus stopwords (all its tokens when every one is a
    stopword); the first sentence with the largest overlap wins. It lets the
    whole chain run offline; its answers measure whether the information
    reached the context, not how well a model would use it.
    """

    name = "extractive (not an LLM)"

    def __call__(self, query: str, context: list[Chunk]) -> str:
        query_tokens = strict_tokens(query)
        wanted = {t for t in query_tokens if t not in STOPWORDS} or set(query_tokens)
        best, best_overlap = "", -1
        for chunk in context:
            for sentence in split_sentences(chunk.text):
                overlap = len(wanted & set(strict_tokens(sentence)))
                if overlap > best_overlap:
                    best, best_overlap = sentence, overlap
        return best

    def describe(self) -> dict[str, Any]:
        return {"generator": self.name}


class OpenAIGenerator:
    """Chat completion on any OpenAI-compatible endpoint, context passages numbered in the prompt.

    Every call goes through an :class:`~cofe.llm.LLMClient` (``client``: an
    endpoint, or a client shared with other stages), so replies are cached and
    ``usage`` counts calls, cache hits, failures, tokens and seconds. When the
    endpoint cannot be reached after the client's retries the error is raised
    and the run records it for that sample.
    """

    name = "openai"

    def __init__(
        self, client: Endpoint | LLMClient, *, max_tokens: int = 256, temperature: float = 0.0
    ) -> None:
        if isinstance(client, Endpoint):
            client = LLMClient(client, max_tokens=max_tokens, temperature=temperature)
        self.client = client
        self.endpoint = client.endpoint

    @property
    def max_tokens(self) -> int:
        return self.client.max_tokens

    @property
    def usage(self) -> Usage:
        return self.client.usage

    def prepare(self, chunks: list[Chunk], cache: Cache | None) -> None:
        self.client.use_cache(cache)

    @staticmethod
    def messages(query: str, context: list[Chunk]) -> list[dict[str, str]]:
        passages = "\n\n".join(f"[{i}] {c.text}" for i, c in enumerate(context, start=1))
        return [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": f"Context:\n{passages}\n\nQuestion: {query}\nAnswer:"},
        ]

    def __call__(self, query: str, context: list[Chunk]) -> str:
        return self.client.complete(self.messages(query, context)).strip()

    def describe(self) -> dict[str, Any]:
        return {"generator": self.name, **self.endpoint.describe(), "max_tokens": self.max_tokens}
