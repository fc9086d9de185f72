"""The Chinese word tables the zh rules share (cofe/_data/matching/zh.json)."""

from functools import lru_cache

from cofe.matching.answer._tables import inverted, table


@lru_cache(maxsize=1)
def stop_characters() -> frozenset[str]:
    """Particles, copulas, pronouns, measure words, conjunctions."""
    return frozenset(table("zh")["stop_characters"])


@lru_cache(maxsize=1)
def measures() -> dict[str, str]:
    return inverted(table("zh")["measures"])
