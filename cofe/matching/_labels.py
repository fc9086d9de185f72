"""Keywords that cannot mean anything: reported as bad labels, never matched."""

from __future__ import annotations

from cofe.matching._normalize import MatchMode, is_cjk

# Function words: a keyword made only of these matches nearly every chunk.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "of",
        "at",
        "by",
        "for",
        "with",
        "about",
        "against",
        "between",
        "into",
        "through",
        "during",
        "before",
        "after",
        "above",
        "below",
        "to",
        "from",
        "up",
        "down",
        "in",
        "out",
        "on",
        "off",
        "over",
        "under",
        "again",
        "further",
        "then",
        "once",
        "here",
        "there",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "no",
        "nor",
        "not",
        "only",
        "own",
        "same",
        "so",
        "than",
        "too",
        "very",
        "s",
        "t",
        "can",
        "will",
        "just",
        "don",
        "should",
        "now",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "have",
        "has",
        "had",
        "having",
        "do",
        "does",
        "did",
        "doing",
        "i",
        "me",
        "my",
        "we",
        "our",
        "you",
        "your",
        "he",
        "him",
        "his",
        "she",
        "her",
        "it",
        "its",
        "they",
        "them",
        "their",
        "what",
        "which",
        "who",
        "whom",
        "this",
        "that",
        "these",
        "those",
        "am",
        "as",
        "until",
        "while",
        "的",
        "了",
        "是",
        "在",
        "和",
        "与",
        "或",
        "及",
        "也",
        "都",
        "就",
        "而",
        "之",
        "其",
        "这",
        "那",
        "有",
        "个",
        "么",
        "吗",
        "呢",
        "吧",
        "啊",
    ]
)


def label_problem(normalized: str, mode: MatchMode) -> str | None:
    """Why a normalised keyword is unusable, or ``None`` when it is fine."""
    if mode is MatchMode.STRICT:
        tokens = normalized.split()
        if not tokens:
            return "normalises to nothing (only punctuation or spaces)"
        if len(tokens) == 1:
            token = tokens[0]
            if token.isdigit():
                return None  # a number means something however short it is
            if is_cjk(token):
                return "a single CJK character is too short to mean anything"
            if len(token) < 2:
                return "a single letter is too short to mean anything"
        if all(token in STOPWORDS for token in tokens):
            return "only stopwords"
        return None
    if not normalized:
        return "normalises to nothing (only non-word characters)"
    if normalized.isdigit():
        return None
    if len(normalized) < 2:
        return "one character is too short to mean anything"
    if normalized in STOPWORDS:
        return "only a stopword"
    return None
