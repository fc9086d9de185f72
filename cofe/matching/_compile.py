"""Turn a sample's keywords into ids of a shared KeywordIndex, flagging bad labels."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cofe._parallel import fork_map
from cofe.evalset import EvalSample, keyword_alternatives
from cofe.matching._index import KeywordIndex
from cofe.matching._labels import label_problem
from cofe.matching._normalize import MatchMode, normalizer


@dataclass(frozen=True, slots=True)
class BadLabel:
    field: str  # e.g. "fine_keywords[0][1]"
    keyword: str
    reason: str
    used: bool = False  # cofe-rag mode matches it anyway, as the reference evaluator does

    def __str__(self) -> str:
        return f"{self.field} {self.keyword!r}: {self.reason}"


@dataclass(frozen=True, slots=True)
class CompiledPoint:
    """An information point: every slot must be found; a slot is a set of alternatives."""

    index: int  # position in the sample's fine_keywords
    keywords: tuple[str, ...]  # for people: "a | b" for alternatives
    slots: tuple[tuple[int, ...], ...]
    label: str  # the whole point for people: "a & b | c"
    texts: tuple[tuple[str, ...], ...] = ()  # per slot: its usable alternatives as written


@dataclass(frozen=True, slots=True)
class CompiledSample:
    coarse: tuple[int, ...]  # ids of the coarse keywords and (strict mode) their inflections
    coarse_keywords: tuple[str, ...]
    points: tuple[CompiledPoint, ...]
    bad_labels: tuple[BadLabel, ...]
    unscorable: str | None  # why no stage can be scored, or None


KeywordCache = dict[str, tuple[int | None, str | None]]
"""Keyword text -> (keyword id or None, bad-label reason or None). Strict mode gives a bad
label no id; cofe-rag mode gives it an id and a reason (used, but reported)."""

REFERENCE_MATCHES_IT = "matched as a plain substring anyway, as the reference evaluator does"
EMPTY = ""  # the normal form of a keyword of only non-word characters: found in every text


def keyword_texts(sample: EvalSample) -> list[str]:
    """Every keyword string of a sample: coarse ones and every alternative of fine ones."""
    texts = list(sample.coarse_keywords)
    for point in sample.fine_keywords:
        for keyword in point:
            texts.extend(keyword_alternatives(keyword))
    return texts


def inflections(normalized: str) -> list[str]:
    """Number inflections of a strict-normalised entity name: its last word +/- s, es, ies.

    An entity is named "Teachers" in one sentence and "Teacher" in the next;
    a coarse keyword only anchors the text to the entity, so these count as the
    same name. CJK and short or non-alphabetic last words are left as they are.
    """
    tokens = normalized.split()
    if not tokens:
        return []
    last = tokens[-1]
    if not (last.isascii() and last.isalpha() and len(last) >= 3):
        return []
    forms = {last + "s", last + "es"}
    if last.endswith("y"):
        forms.add(last[:-1] + "ies")
    if last.endswith("ies") and len(last) > 4:
        forms.add(last[:-3] + "y")
    if last.endswith("es") and len(last) > 4:
        forms.add(last[:-2])
    if last.endswith("s") and len(last) > 3:
        forms.add(last[:-1])
    forms.discard(last)
    head = " ".join(tokens[:-1])
    return [" " + (f"{head} " if head else "") + form + " " for form in sorted(forms)]


def _normalize_slice(state: tuple[list[str], MatchMode], bounds: tuple[int, int]) -> list[str]:
    texts, mode = state
    normalize = normalizer(mode)
    return [normalize(text) for text in texts[bounds[0] : bounds[1]]]


def register_keywords(
    samples: list[EvalSample], index: KeywordIndex, mode: MatchMode, workers: int = 1
) -> KeywordCache:
    """Normalise every distinct keyword once (in parallel when large) and give it an id; in
    strict mode, the inflections of the coarse keywords too (``inflections``), in the order
    ``compile_sample`` meets them: the index then holds every keyword the samples will
    compile to, so the corpus can be scanned while they compile."""
    distinct = list(dict.fromkeys(text for sample in samples for text in keyword_texts(sample)))
    parts = fork_map(
        _normalize_slice, (distinct, mode), len(distinct), slice_size=20_000, workers=workers
    )
    normalized = (n for part in parts for n in part)
    cache = {text: _register(n, index, mode) for text, n in zip(distinct, normalized, strict=True)}
    if mode is MatchMode.STRICT:
        for sample in samples:
            for keyword in sample.coarse_keywords:
                ident = cache[keyword][0]
                if ident is not None:
                    for variant in inflections(index.keywords[ident]):
                        if label_problem(variant, mode) is None:
                            index.add(variant)
    return cache


def _register(
    normalized: str, index: KeywordIndex, mode: MatchMode
) -> tuple[int | None, str | None]:
    """A usable keyword gets an id; a bad label gets the reason instead (strict mode) or
    both (cofe-rag mode: the reference matches one letter, a stopword, even nothing)."""
    reason = label_problem(normalized, mode)
    if mode is MatchMode.COFE_RAG:
        return index.add(normalized), (f"{reason}; {REFERENCE_MATCHES_IT}" if reason else None)
    return (None if reason else index.add(normalized), reason)


def compile_sample(
    sample: EvalSample,
    index: KeywordIndex,
    mode: MatchMode,
    cache: KeywordCache | None = None,
) -> CompiledSample:
    """``cache`` (keyword text -> id or bad-label reason) may be shared across samples."""
    normalize = normalizer(mode)
    bad: list[BadLabel] = []
    known = {} if cache is None else cache

    def usable(text: str, field: Callable[[], str]) -> int | None:
        entry = known.get(text)
        if entry is None:
            entry = known[text] = _register(normalize(text), index, mode)
        if entry[1] is not None:
            bad.append(BadLabel(field(), text, entry[1], used=entry[0] is not None))
        return entry[0]

    coarse_ids: list[int] = []
    coarse_text: list[str] = []
    for position, keyword in enumerate(sample.coarse_keywords):
        ident = usable(keyword, lambda: f"coarse_keywords[{position}]")  # noqa: B023 (called at once)
        if ident is not None and ident not in coarse_ids:
            coarse_ids.append(ident)
            coarse_text.append(keyword)
            if mode is MatchMode.STRICT:
                for variant in inflections(index.keywords[ident]):
                    if label_problem(variant, mode) is None:
                        coarse_ids.append(index.add(variant))

    points: list[CompiledPoint] = []
    for p, point in enumerate(sample.fine_keywords):
        slots: list[tuple[int, ...]] = []
        texts: list[tuple[str, ...]] = []
        shown: list[str] = []
        for k, fine_keyword in enumerate(point):
            alternatives = keyword_alternatives(fine_keyword)
            ids = []
            written = []
            for a, text in enumerate(alternatives):
                suffix = "" if isinstance(fine_keyword, str) else f".any_of[{a}]"
                ident = usable(text, lambda: f"fine_keywords[{p}][{k}]{suffix}")  # noqa: B023
                if ident is not None and ident not in ids:
                    ids.append(ident)
                    written.append(text)
            if not ids:
                # a keyword with no usable alternative (a lone "Other" row label, a single
                # letter) says nothing: the point is scored with its other keywords, if any
                continue
            slots.append(tuple(ids))
            texts.append(tuple(written))
            shown.append(" | ".join(alternatives))
        if not point and mode is MatchMode.COFE_RAG:
            # the reference counts a point with no keyword as found: reproduce, and report it
            reason = "empty information point; counted as found, as the reference evaluator does"
            bad.append(BadLabel(f"fine_keywords[{p}]", "", reason, used=True))
            points.append(CompiledPoint(p, ("",), ((index.add(EMPTY),),), "(empty point)"))
        elif not point:
            bad.append(BadLabel(f"fine_keywords[{p}]", "", "empty information point"))
        elif slots:  # unusable keywords are left out and reported; the rest must be found
            points.append(
                CompiledPoint(p, tuple(shown), tuple(slots), " & ".join(shown), tuple(texts))
            )

    unscorable = None
    if not sample.fine_keywords:
        unscorable = "no fine keywords"
    elif not points:
        unscorable = "no usable information point: " + "; ".join(str(b) for b in bad)
    elif mode is MatchMode.COFE_RAG and not coarse_ids:
        unscorable = (
            "no coarse keyword (cofe-rag mode skips such samples, as the reference evaluator "
            "does; the reference still counts them in its percentages)"
        )
    return CompiledSample(
        tuple(coarse_ids), tuple(coarse_text), tuple(points), tuple(bad), unscorable
    )
