"""What a measure may read about one sample at one step of the chain.

The scorer fills a ``StepView`` per (sample, step); each measure declares the
steps it applies to (``Measure.STEPS``) and reads what it needs in
``Measure.evaluate``. Inputs a sample lacks are ``Unscored`` values carrying
the reason, so a measure passes the reason on instead of inventing a number.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from cofe.chain import Step as Step  # re-exported: the measures name their steps from here
from cofe.measures._unscored import Unscored

Docs = str | frozenset[str] | None
"""A ranked item's document: one id; the documents of a derived item's sources when they
are several (a summary of chunks from two documents); None when unknown."""


def from_relevant(docs: Docs, relevant: AbstractSet[str]) -> bool:
    """Whether a ranked item came from a relevant document (a derived item: any source did)."""
    if docs is None or docs.__class__ is str:
        return docs in relevant
    return not relevant.isdisjoint(docs)


def docs_of(items: Sequence[Docs]) -> set[str]:
    """Every document the ranked items came from."""
    found: set[str] = set()
    for docs in items:
        if docs is None:
            continue
        if docs.__class__ is str:
            found.add(docs)
        else:
            found.update(docs)
    return found


def _no_reference() -> list[str] | None:
    return None


def _no_tokens() -> list[str]:
    return []


NO_SOURCE = Unscored("the sample names no source document")  # immutable: safe as a default
NO_POOL = Unscored("the run records no pool")
NOT_JUDGED = Unscored("not judged: run `cofe judge` on this run")
# a judge's value that is missing and nobody said why
NO_RELEVANCY = Unscored("no answer relevancy was computed")
NO_SIMILARITY = Unscored("no answer similarity was computed")
NO_CORRECTNESS = Unscored("the judge gave no correctness score")


# the gated measures whose labels the unsupported-claims verdict reads (context, source)
_SUPPORT_LABELS = frozenset({"Faithfulness", "SourceFaithfulness"})


@dataclass(frozen=True, slots=True)
class ClaimLabels:
    """An LLM judge's labels of one answer's claims (from ``cofe judge``).

    Per answer claim: supported by the context the generator saw; by the
    sample's source document; by the reference answer (a label None: that claim was not
    checked). Per reference claim: stated by the answer. Labels missing as a whole -- no
    source, no reference -- are the ``Unscored`` saying why, as every missing value here is.
    """

    context: tuple[bool, ...]
    source: tuple[bool | None, ...] | Unscored
    reference: tuple[bool | None, ...] | Unscored
    reference_in_answer: tuple[bool, ...]
    texts: tuple[str, ...] = ()  # the answer's claims, for evidence
    # a value, or why it is missing (one field each: never a value and a reason to pair up)
    relevancy: float | Unscored = NO_RELEVANCY  # RAGAS answer relevancy (generated questions)
    similarity: float | Unscored = NO_SIMILARITY  # cosine of the answer and reference embeddings
    reference_in_context: tuple[bool | None, ...] = ()  # per reference claim: in the context
    useful: tuple[bool, ...] | None = None  # per context chunk: helps reach the reference
    correctness: int | Unscored = NO_CORRECTNESS  # 1-5 against the reference (LlamaIndex's)
    noncommittal: bool | None = None  # the judge: evasive, vague or a refusal (None: not asked)
    # per information point (by its index in the sample's fine_keywords): does the answer
    # convey it -- "support", "partial", "not_support" -- or None (not labelled); and the
    # same against the context the generator saw (TREC RAG's nugget assignment)
    points: tuple[str | None, ...] = ()
    points_in_context: tuple[str | None, ...] = ()
    # judged measures the judge disagreed with itself on over `cofe judge --repeats`, with
    # why (cofe.judges' agreement gate): unscored for every sample, never a noisy number
    unreliable: tuple[tuple[str, str], ...] = ()
    # the judge's calls failed, and why: only the embedding measures above are real (cosines
    # need no call; relevancy only the claims call); every label measure is unscored
    failed: str | None = None

    def refusal(self) -> str | None:
        """Why the judge's labels make the answer a refusal: noncommittal and stating no claim
        (a vague answer with claims is an answer, judged on them)."""
        if self.noncommittal and not self.texts:
            return "the judge labelled it noncommittal, stating no claim"
        return None

    def unsupported(self) -> tuple[str, ...]:
        """Claims supported neither by the context nor by the source document. Without a
        source the judge cannot tell an invention from knowledge the context lacked: none;
        nor when the judge failed a gate on those labels (``unreliable``): no verdict rests on
        labels whose measure is unscored."""
        if any(name in _SUPPORT_LABELS for name, _ in self.unreliable):
            return ()
        if isinstance(self.source, Unscored):
            return ()
        return tuple(
            text
            for text, in_context, in_source in zip(
                self.texts, self.context, self.source, strict=True
            )
            if not in_context and in_source is False
        )


@dataclass(slots=True)
class StepView:
    """One sample at one step. Ranked steps fill the list fields; unranked ones leave them empty."""

    step: Step
    point_ranks: Sequence[int | None]  # per point: 1-based rank where complete (1 = found), or None
    intact: Sequence[bool] = ()  # corpus: per point, held whole by one chunk
    anchored: Sequence[
        bool | None
    ] = ()  # corpus: per point, held whole by a chunk naming the entity
    doc_ids: Sequence[Docs] = ()  # ranked: per position, the item's document(s)
    mentions_coarse: Sequence[bool] = ()  # ranked: per position, the chunk names the entity
    has_coarse: bool = True  # the sample has a usable coarse keyword
    relevant: frozenset[str] | Unscored = NO_SOURCE
    relevant_in_corpus: int = 0  # chunks of the relevant documents in the corpus
    pool_ranks: Sequence[int | None] | Unscored = NO_POOL
    # strict tokens of the reference answer (None: no reference), made when first read
    reference_tokens: Callable[[], list[str] | None] = field(default=_no_reference)
    tokens: Callable[[], list[str]] = field(default=_no_tokens)  # strict tokens of the output
    claims: ClaimLabels | Unscored = NOT_JUDGED  # answer: the judge's claim labels
    # answer: per point, conveyed whole (True), not (False: absent or partial), undecided (None)
    conveyed: Sequence[bool | None] = ()

    @property
    def reference(self) -> list[str] | None:
        """Strict tokens of the reference answer (None: no reference)."""
        return self.reference_tokens()
