"""The scorer's fast text paths give what the plain regular expressions give.

Normalising and tokenising run on every chunk, document, keyword and reference of a run, so
they take short cuts (ASCII-only patterns, ``bytes.translate`` for the ASCII non-word
characters, a thousands separator searched from the separator). These tests hold each
short cut to the one-line rule it replaces, on random texts mixing ASCII, punctuation,
grouped digits, accented letters, CJK, a doubled 一, underscores and lone surrogates."""

import random
import re

import ahocorasick
import pytest

from cofe.matching._index import scan
from cofe.matching._normalize import _CJK, normalize_cofe_rag, strict_tokens

# the rules as they read before the short cuts (and as the module docstring states them)
_TOKEN = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")
_THOUSANDS = re.compile(r"(?<=\d)[,'](?=\d{3}(?!\d))")
_NON_WORD = re.compile(r"\W+")

_PIECES = [
    "the", "Cat", "CONCATENATE", " ", "  ", "\n", "\t", ",", "'", ".", "-", "_", "/", "(", ")",
    "1", "12", "123", "1234", "8,700", "1'000", "12,34", "3,5000", ",123", "x,123",
    "é", "École", "Straße", "İ", "ﬁ", "①", "Ⅻ", "２０", "—", "“", "”", "…", "\u00a0",
    "北京", "大学", "一", "一一", "一一一", "对应", "カタカナ", "\ud800", "\udfff", "😀",
]  # fmt: skip


def _texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    texts = ["", " ", ",", "1,000", "a_b", "一一", "\ud800"]
    for _ in range(n):
        texts.append("".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 30))))
    # an ASCII-only share, which takes the ASCII paths
    texts += [
        "".join(rng.choice(_PIECES[:25]) for _ in range(rng.randint(1, 30))) for _ in range(n)
    ]
    return texts


def _strict_by_rule(text: str, fold: bool) -> list[str]:
    import unicodedata

    text = unicodedata.normalize("NFKC", text)
    if fold:
        text = text.casefold()
    return _TOKEN.findall(_THOUSANDS.sub("", text))


@pytest.mark.parametrize("fold", [True, False])
def test_strict_tokens_are_the_rules_tokens(fold):
    for text in _texts(400, seed=1):
        assert strict_tokens(text, fold=fold) == _strict_by_rule(text, fold), repr(text)


def test_cofe_rag_normal_form_is_the_references_clean_text():
    for text in _texts(400, seed=2):
        expected = _NON_WORD.sub("", text).replace("一一", "一").lower()
        assert normalize_cofe_rag(text) == expected, repr(text)


def test_a_scan_finds_every_keyword_id_the_automaton_reports():
    rng = random.Random(3)
    keywords = sorted({normalize_cofe_rag(t) for t in _texts(200, seed=4)} - {""})
    automaton = ahocorasick.Automaton()
    for ident, keyword in enumerate(keywords):
        automaton.add_word(keyword, ident)
    automaton.make_automaton()
    for _ in range(300):
        text = "".join(rng.choice(keywords) for _ in range(rng.randint(0, 8)))
        expected = {ident for _, ident in automaton.iter(text)}
        assert scan(automaton, text) == expected
        assert all(keywords[i] in text for i in expected)
