"""Turn a sample's keywords into ids of a shared KeywordIndex, flagging bad labels."""

from __future__ import annotations

from dataclasses import dataclass

from cofe.evalset._sample import EvalSample, keyword_alternatives
from cofe.matching._index import KeywordIndex
from cofe.matching._labels import label_problem
from cofe.matching._normalize import MatchMode, normalizer


@dataclass(frozen=True, slots=True)
class BadLabel:
    field: str  # e.g. "fine_keywords[0][1]"
    keyword: str
    reason: str

    def __str__(self) -> str:
        return f"{self.field} {self.keyword!r}: {self.reason}"


@dataclass(frozen=True, slots=True)
class CompiledPoint:
    """An information point: every slot must be found; a slot is a set of alternatives."""

    index: int  # position in the sample's fine_keywords
    keywords: tuple[str, ...]  # for people: "a | b" for alternatives
    slots: tuple[tuple[int, ...], ...]


@dataclass(frozen=True, slots=True)
class CompiledSample:
    coarse: tuple[int, ...]
    coarse_keywords: tuple[str, ...]
    points: tuple[CompiledPoint, ...]
    bad_labels: tuple[BadLabel, ...]
    unscorable: str | None  # why no stage can be scored, or None


def compile_sample(sample: EvalSample, index: KeywordIndex, mode: MatchMode) -> CompiledSample:
    normalize = normalizer(mode)
    bad: list[BadLabel] = []

    def usable(text: str, field: str) -> int | None:
        normalized = normalize(text)
        reason = label_problem(normalized, mode)
        if reason is not None:
            bad.append(BadLabel(field, text, reason))
            return None
        return index.add(normalized)

    coarse_ids: list[int] = []
    coarse_text: list[str] = []
    for position, keyword in enumerate(sample.coarse_keywords):
        ident = usable(keyword, f"coarse_keywords[{position}]")
        if ident is not None and ident not in coarse_ids:
            coarse_ids.append(ident)
            coarse_text.append(keyword)

    points: list[CompiledPoint] = []
    for p, point in enumerate(sample.fine_keywords):
        slots: list[tuple[int, ...]] = []
        shown: list[str] = []
        broken = False
        for k, keyword in enumerate(point):
            alternatives = keyword_alternatives(keyword)
            ids = []
            for a, text in enumerate(alternatives):
                where = f"fine_keywords[{p}][{k}]" + (
                    "" if isinstance(keyword, str) else f".any_of[{a}]"
                )
                ident = usable(text, where)
                if ident is not None and ident not in ids:
                    ids.append(ident)
            if not ids:
                broken = True  # a keyword with no usable alternative makes the point unusable
                continue
            slots.append(tuple(ids))
            shown.append(" | ".join(alternatives))
        if not point:
            bad.append(BadLabel(f"fine_keywords[{p}]", "", "empty information point"))
        elif not broken:  # a point with an unusable keyword is dropped; that keyword is reported
            points.append(CompiledPoint(p, tuple(shown), tuple(slots)))

    unscorable = None
    if not sample.fine_keywords:
        unscorable = "no fine keywords"
    elif not points:
        unscorable = "no usable information point: " + "; ".join(str(b) for b in bad)
    elif mode is MatchMode.COFE_RAG and not coarse_ids:
        unscorable = (
            "no usable coarse keyword (cofe-rag mode skips such samples, as the reference does)"
        )
    return CompiledSample(
        tuple(coarse_ids), tuple(coarse_text), tuple(points), tuple(bad), unscorable
    )
