"""What each stage judge finds for one sample, per information point."""

from __future__ import annotations

from dataclasses import dataclass

from cofe.diagnose import Verdict


@dataclass(frozen=True, slots=True)
class PointHits:
    """Found / not found per point in an unranked text (a document, an answer)."""

    hits: tuple[bool, ...]
    missing: tuple[tuple[str, ...], ...]  # per point: keywords not found

    @property
    def ranks(self) -> tuple[int | None, ...]:
        return tuple(1 if hit else None for hit in self.hits)


@dataclass(frozen=True, slots=True)
class CorpusHits:
    """Per point over the whole (filtered) chunk corpus."""

    hits: tuple[bool, ...]  # every keyword in some eligible chunk
    intact: tuple[bool, ...]  # every keyword in one single eligible chunk
    missing: tuple[tuple[str, ...], ...]
    why_missing: tuple[tuple[str, ...], ...]  # per point, per missing keyword: the reason
    example_chunk: tuple[str | None, ...]  # a chunk id holding the whole point, for evidence
    kinds: tuple[Verdict, ...]  # per point: the verdict if chunking lost it
    cut: tuple[tuple[str, ...], ...]  # per point: keywords cut by a chunk boundary
    dropped: tuple[tuple[str, ...], ...]  # per point: keywords in text no chunk covers
    anchored: tuple[bool | None, ...]  # per point: a chunk holding it whole names the entity


@dataclass(frozen=True, slots=True)
class RankedHits:
    """Per point over a ranked list: the first rank at which the point is complete."""

    point_ranks: tuple[int | None, ...]  # 1-based; None = never complete in this list
    passes: tuple[bool, ...]  # per position: passes the coarse/source filter
    mentions_coarse: tuple[bool, ...]  # per position: holds a coarse keyword
    doc_ids: tuple[str | frozenset[str] | None, ...]  # per position (a derived item: its sources')
    missing: tuple[tuple[str, ...], ...]  # per point: keywords absent from the whole list
    unknown_chunks: tuple[str, ...]  # ids the run log's chunk corpus does not hold
    # per point missing from the list: (a derived item in it, a leaf of it holding the point)
    # -- the sources held the point, the derived item's text dropped it
    derivation: tuple[tuple[str, str] | None, ...] = ()
