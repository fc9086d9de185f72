"""Text normalisation for keyword matching.

Two modes:

``strict`` (default)
    NFKC, case folding, thousands separators dropped ("8,700" = "8700"), then
    the text becomes a sequence of tokens -- Latin/other words, and CJK
    characters one by one -- written as ``" tok tok tok "``. A keyword matches
    only on token boundaries, so "the cat" never equals "thecat" and "cat"
    never matches inside "concatenate", while "北京" matches inside "北京大学".

``cofe-rag``
    The CoFE-RAG reference: every non-word character removed, "一一" folded
    to "一", lower-cased, plain substring matching (so words glue together and matches may cross
    chunk boundaries, exactly as the reference evaluator does).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from enum import StrEnum
from functools import cache

# Han, kana, CJK compatibility and extension blocks: compared character-wise.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"


@cache
def _cjk_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The tokens of any text, and one CJK character: compiled when a text first needs them,
    as each pattern's class of some 92,000 CJK code points takes ~6 ms to compile -- time
    a run over ASCII text (which ``_ASCII_TOKEN`` splits) never needs to spend."""
    return re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+"), re.compile(rf"[{_CJK}]")


# ASCII text has no CJK character and its word characters are these: the same tokens as
# the general pattern's, found in about half the time (ROUGE tokenises every reference and chunk)
_ASCII_TOKEN = re.compile(r"[a-zA-Z0-9]+")
# A comma or apostrophe between digits followed by exactly three digits groups thousands.
# The separator comes first so the search skips to the next comma or apostrophe, instead of
# trying the look-behind at every character (three times faster on prose, the same matches).
_THOUSANDS = re.compile(r"[,'](?<=\d[,'])(?=\d{3}(?!\d))")
_NON_WORD = re.compile(r"\W+")
# the ASCII characters \W matches (all but letters, digits and "_"), as bytes: deleting them
# with bytes.translate is a C loop, several times faster than the regex, whose every match
# (each space) costs a step. In UTF-8 an ASCII byte is always that character, never part of
# another one's bytes, so a non-ASCII text can lose them the same way first.
_ASCII_NON_WORD = bytes(b for b in range(128) if not (chr(b).isalnum() or chr(b) == "_"))


class MatchMode(StrEnum):
    STRICT = "strict"
    COFE_RAG = "cofe-rag"


def strict_tokens(text: str, *, fold: bool = True) -> list[str]:
    """The strict-mode tokens of ``text`` (also used for BLEU and ROUGE-L).

    ``fold=False`` keeps the case, for callers that look at capitals.
    """
    if text.isascii():  # ASCII is already NFKC, and lower() is its case folding
        if fold:
            text = text.lower()
        tokens = _ASCII_TOKEN
    else:
        text = unicodedata.normalize("NFKC", text)
        if fold:
            text = text.casefold()
        tokens = _cjk_patterns()[0]
    if "," in text or "'" in text:
        text = _THOUSANDS.sub("", text)
    return tokens.findall(text)


def normalize_strict(text: str) -> str:
    tokens = strict_tokens(text)
    return " " + " ".join(tokens) + " " if tokens else ""


def normalize_cofe_rag(text: str) -> str:
    if text.isascii():
        return text.encode("ascii").translate(None, _ASCII_NON_WORD).decode("ascii").lower()
    # lone surrogates (a repaired record may hold one) pass through as they are
    kept = text.encode("utf-8", "surrogatepass").translate(None, _ASCII_NON_WORD)
    text = _NON_WORD.sub("", kept.decode("utf-8", "surrogatepass"))
    # the reference's clean_text also folds a doubled 一 (as in 一一对应) into one
    return text.replace("一一", "一").lower()


def normalizer(mode: MatchMode) -> Callable[[str], str]:
    """The text normaliser of a mode (keywords and texts use the same one)."""
    return normalize_strict if mode is MatchMode.STRICT else normalize_cofe_rag


def is_cjk(token: str) -> bool:
    return not token.isascii() and bool(_cjk_patterns()[1].fullmatch(token))


def surface(tokens: list[str]) -> str:
    """Write tokens back as readable text: no space between CJK characters."""
    out: list[str] = []
    for token in tokens:
        if out and not (is_cjk(token) and is_cjk(out[-1][-1])):
            out.append(" ")
        out.append(token)
    return "".join(out)
