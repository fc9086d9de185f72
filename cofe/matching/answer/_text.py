"""Shared helpers of the rules: scripts, stems, acronyms, tokens (Chinese cut by jieba)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from cofe.matching._normalize import is_cjk, strict_tokens

HAS_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
ANY_DIGIT = re.compile(r"\d")
NOT_DIGIT = re.compile(r"\D")
PREFIX = 4  # letters two words must share to count as a trace of one another

# a word's stem, a number, any other unit, a function word (kept only for its acronym)
STEM, FIGURE, PLAIN, FUNCTION = "stem", "figure", "plain", "function"


def cjk_unit(unit: str) -> bool:
    return not unit.isascii() and is_cjk(unit[0])  # most units are ASCII: no regex for them


def acronym(raw: str) -> str:
    """The acronym a token writes ("UK"; "MSPs" -> "MSP"), else ""."""
    if not raw.isascii() or len(raw) < 2:
        return ""
    if raw.isupper():
        return raw if len(raw) <= 7 else ""
    if raw[-1] == "s" and len(raw) >= 3 and raw[:-1].isupper():
        return raw[:-1]
    return ""


@lru_cache(maxsize=1)
def _stemmer() -> Any:  # Stemmer.Stemmer: PyStemmer ships no types
    import Stemmer

    return Stemmer.Stemmer("english")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    return str(_stemmer().stemWord(word))


def tokens(text: str) -> list[str]:
    """Strict tokens, with each run of Chinese characters as its words (jieba) instead of
    character by character: "多伦多国际机场" is 多伦多 / 国际 / 机场, so a name or a word
    the answer replaced counts whole, not as characters scattered over the answer."""
    found = strict_tokens(text, fold=False)
    if text.isascii() or not HAS_CJK.search(text):
        return found
    out: list[str] = []
    run: list[str] = []
    for token in [*found, ""]:
        if token and is_cjk(token):
            run.append(token)
            continue
        if run:
            out.extend(_segment("".join(run)))
            run = []
        if token:
            out.append(token)
    return out


@lru_cache(maxsize=100_000)
def _segment(run: str) -> list[str]:
    return list(_jieba().lcut(run, HMM=True))


@lru_cache(maxsize=1)
def _jieba() -> Any:  # the jieba module: it ships no types
    import logging

    import jieba  # deferred: builds its prefix dictionary (~0.4 s) on first use

    jieba.setLogLevel(logging.WARNING)
    return jieba


_LATIN_WORD = re.compile(r"[A-Za-z]+")


def names_in(text: str) -> frozenset[str]:
    """The words a text writes as names: capitalised, and not because a sentence starts."""
    names = set()
    for match in _LATIN_WORD.finditer(text):
        word = match[0]
        if word[0].isupper():
            at = match.start() - 1
            while at >= 0 and text[at] in " \t":
                at -= 1
            # inside a sentence: after a word, a figure or a comma on the same line (not
            # after a list's dash or number, a line break or a full stop)
            if at >= 0 and (text[at].isalnum() or text[at] == ","):
                names.add(word.lower())
    return frozenset(names)
