"""How often cofe's default scoring agrees with gold labels derived from answer offsets.

    python benchmarks/verdict_validity.py [--sets squad,cmrc] [--sizes 128,256,512,1024]
                                          [--pipeline default|langchain|haystack] [--limit N] [--workdir DIR] [--cache DIR]
                                          [--examples 3] [--explain ID,...] [--json [FILE]]

For each shipped set (SQuAD v1.1 dev part B, CMRC 2018 trial) and chunk size,
the articles are written as .txt documents (as the SQuAD importer exports
them), the questions imported with the SQuAD importer, and the built-in
default pipeline (BM25 pool of 30, top 4, no reranker, extractive generator;
``PipelineConfig`` defaults but the chunk size) run with ``run_pipeline``.
The run is scored with the default ``ScoreConfig()``, with
``coarse_scope="off"`` (``--coarse-scope off``) and in ``cofe-rag`` mode (the
reference semantics: a chunk must name the entity itself).

``--pipeline langchain`` or ``haystack`` runs the same pipeline written with that framework
instead (``benchmarks/_framework_pipelines.py``: the article files loaded one document each,
the framework's token splitter keeping offsets, its BM25 retriever as the pool of 30, the first
4 in the prompt, a chat model replying extractively from the prompt), recorded by cofe from its
OpenInference spans (``OpenInferencePipeline`` with ``corpus=`` the splits and ``documents=``
the loaded files) and scored and compared exactly as the built-in one. Its runs go to
``<set>/<pipeline>-chunk<size>``; the gold is laid over the texts the framework loaded.

Gold labels come from the answer *offsets* only -- never from cofe's keyword
matcher or scorer. Each gold answer span (paragraph + ``answer_start``) is
mapped into the parsed text of its document (the paragraph found exactly, or,
if the parser changed whitespace, by a whitespace-insensitive alignment that
keeps an offset map; whitespace and punctuation at the span's ends are left
out), and then:

* ``parse_ok``: the span maps into the parsed text;
* ``chunk_ok``: a chunk of that document covers the whole span;
* ``pool_ok``: a covering chunk is in the recorded pool;
* ``context_ok``: a covering chunk is in the context (the record's ``context``
  or, without a reranker, the pool's first ``top_k``);
* ``answer_ok``: the recorded answer contains a gold answer text as whole words
  (case-folded, whitespace collapsed, punctuation at the text's ends dropped;
  a Latin letter or digit may not touch the match from outside, CJK may).

A fact holds when it holds for any of the question's answers. The gold stage
is the first failing one of parse, chunking, retrieval (reranking when the run
has contexts), generation; none is a pass. cofe's side is read only from
``points`` (``pool_rank``, ``context_rank``) and ``verdicts`` (``verdict``,
``stage``); verdicts ``unscorable`` and ``pipeline_error`` are excluded.

``--fragments`` adds two scorings of the questions whose answer is one text of
at least four words (six characters in Chinese), each labelled as a point of
*two* keywords -- the text's first and second halves (``two fragments``) --
and, for comparison, the same questions with their usual one-keyword point
(``one keyword, same questions``): the gold is unchanged (the answer span),
so a point no chunk holds whole is a chunking loss on both sides.

Prints a Markdown table of agreement at the pool, at the context (@4) and on
the verdict's stage, then the confusion of stage disagreements with example
sample ids; ``--json`` prints everything as JSON instead (``--json FILE``
writes it to FILE as well as printing the Markdown); ``--explain ID,...``
prints both sides' evidence for those samples. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import bisect
import json
import re
import sys
import time
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import cofe  # noqa: E402

DATA = Path(cofe.__file__).parent / "_data"
SETS = {
    "squad": DATA / "squad" / "squad-v1.1-dev-part-b.json",
    "cmrc": DATA / "cmrc2018" / "cmrc2018-trial.json",
}
WORK = ROOT / "benchmarks" / "_work" / "verdict_validity"
EXCLUDED = ("unscorable", "pipeline_error")
PASS = "pass"  # the gold or cofe "stage" of a sample that lost nothing
CONFIGS = {
    "default": {},
    "coarse-scope off": {"coarse_scope": "off"},
    "cofe-rag mode": {"mode": "cofe-rag"},  # the paper's semantics: chunk-level coarse filter
}


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Gold labels from offsets (no cofe matching): alignment, spans, facts


def _squeeze(text: str) -> tuple[str, list[int]]:
    """``text`` without whitespace, and the offset in ``text`` of every character kept."""
    offsets = [i for i, c in enumerate(text) if not c.isspace()]
    return "".join(text[i] for i in offsets), offsets


class ParsedText:
    """A parsed document's text, squeezed once for whitespace-insensitive search."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._squeezed: tuple[str, list[int]] | None = None

    @property
    def squeezed(self) -> tuple[str, list[int]]:
        if self._squeezed is None:
            self._squeezed = _squeeze(self.text)
        return self._squeezed


@dataclass(frozen=True)
class Alignment:
    """Where a source paragraph sits in a parsed text: for every paragraph character, its
    offset in the parsed text (``None`` for whitespace the alignment skipped)."""

    how: str  # "exact" | "whitespace"
    offsets: tuple[int | None, ...]

    @property
    def end(self) -> int:
        return max((o for o in self.offsets if o is not None), default=-1) + 1

    def span(self, start: int, end: int) -> tuple[int, int] | None:
        """The parsed-text span of paragraph characters ``[start, end)``; None if unmapped."""
        if not 0 <= start < end <= len(self.offsets):
            return None
        mapped = [o for o in self.offsets[start:end] if o is not None]
        return (mapped[0], mapped[-1] + 1) if mapped else None


def align(paragraph: str, parsed: ParsedText | str, hint: int = 0) -> Alignment | None:
    """Find ``paragraph`` in the parsed text (at or after ``hint`` first, then anywhere):
    exactly, else ignoring whitespace. None when it is not there."""
    parsed = parsed if isinstance(parsed, ParsedText) else ParsedText(parsed)
    text = parsed.text
    if paragraph:
        for origin in (hint, 0):
            at = text.find(paragraph, origin)
            if at >= 0:
                return Alignment("exact", tuple(range(at, at + len(paragraph))))
    squeezed_par, par_offsets = _squeeze(paragraph)
    if not squeezed_par:
        return None
    squeezed_text, text_offsets = parsed.squeezed
    for origin in (bisect.bisect_left(text_offsets, hint), 0):
        at = squeezed_text.find(squeezed_par, origin)
        if at >= 0:
            offsets: list[int | None] = [None] * len(paragraph)
            for k, i in enumerate(par_offsets):
                offsets[i] = text_offsets[at + k]
            return Alignment("whitespace", tuple(offsets))
    return None


def _collapse(text: str) -> str:
    return " ".join(text.casefold().split())


def _trim_punctuation(text: str) -> str:
    """Without punctuation at either end: CMRC spans often take the sentence's "。" along."""
    start, end = 0, len(text)
    while start < end and unicodedata.category(text[start]).startswith("P"):
        start += 1
    while end > start and unicodedata.category(text[end - 1]).startswith("P"):
        end -= 1
    return text[start:end]


def _wordish(char: str) -> bool:
    """A Latin letter or a digit: what words are made of (CJK text has no word boundaries)."""
    if char.isascii():
        return char.isalnum()
    return char.isalpha() and unicodedata.name(char, "").startswith("LATIN")


def _contains_words(haystack: str, needle: str) -> bool:
    """``needle`` occurs in ``haystack`` without cutting a word at either end."""
    at = haystack.find(needle)
    while at >= 0:
        end = at + len(needle)
        cut_left = at > 0 and _wordish(haystack[at - 1]) and _wordish(needle[0])
        cut_right = end < len(haystack) and _wordish(haystack[end]) and _wordish(needle[-1])
        if not cut_left and not cut_right:
            return True
        at = haystack.find(needle, at + 1)
    return False


def answer_contains(answer: str | None, texts: Iterable[str]) -> bool:
    """The answer holds a gold text as whole words: case-folded, whitespace collapsed,
    punctuation at the text's ends ignored ("German" is not in "Germany")."""
    if not answer:
        return False
    folded = _collapse(answer)
    wanted = [_collapse(_trim_punctuation(t.strip())) or _collapse(t) for t in texts]
    return any(w and _contains_words(folded, w) for w in wanted)


@dataclass(frozen=True)
class ChunkSpan:
    chunk_id: str
    start: int | None
    end: int | None


@dataclass(frozen=True)
class GoldFacts:
    parse_ok: bool
    chunk_ok: bool
    pool_ok: bool | None  # None: the record has no pool
    context_ok: bool
    answer_ok: bool
    reranked: bool  # the record has its own context and the pipeline a reranker
    spans: tuple[tuple[int, int] | None, ...] = ()  # the answer spans in the parsed text
    covering: tuple[str, ...] = ()  # chunks holding a whole answer span, in corpus order

    @property
    def stage(self) -> str:
        if not self.parse_ok:
            return "parse"
        if not self.chunk_ok:
            return "chunking"
        if self.reranked and self.pool_ok is False:
            return "retrieval"
        if not self.context_ok:
            return "reranking" if self.reranked else "retrieval"
        if not self.answer_ok:
            return "generation"
        return PASS


def gold_facts(
    spans: Sequence[tuple[int, int] | None],
    doc_chunks: Sequence[ChunkSpan],
    pool: Sequence[str] | None,
    context: Sequence[str] | None,
    top_k: int,
    answer: str | None,
    texts: Sequence[str],
    reranker: bool = True,
) -> GoldFacts:
    """The gold facts of one question from its answer spans in the parsed text of its document,
    that document's chunks (with offsets), the recorded pool/context ids and answer."""
    mapped = [s for s in spans if s is not None]
    covering = {
        c.chunk_id: None
        for c in doc_chunks
        if c.start is not None
        and c.end is not None
        and any(c.start <= start and c.end >= end for start, end in mapped)
    }
    seen = list(context) if context is not None else list(pool or [])[:top_k]
    return GoldFacts(
        parse_ok=bool(mapped),
        chunk_ok=bool(covering),
        pool_ok=None if pool is None else any(c in covering for c in pool),
        context_ok=any(c in covering for c in seen[:top_k]),
        answer_ok=answer_contains(answer, texts),
        reranked=context is not None and reranker,
        spans=tuple(spans),
        covering=tuple(covering),
    )


@dataclass(frozen=True)
class GoldQuestion:
    sample_id: str
    article: int
    paragraph: int  # index among the article's paragraphs (those with text)
    spans: tuple[tuple[int, int], ...]  # answer spans in the paragraph whose text matches
    texts: tuple[str, ...]  # every distinct answer text
    bad_spans: int  # answers whose answer_start does not point at their text


@dataclass
class GoldSet:
    paragraphs: dict[int, list[str]]  # article index -> its paragraph texts
    questions: dict[str, GoldQuestion]


def _trimmed_span(text: str, start: int) -> tuple[int, int]:
    """The span of ``text`` at ``start`` without whitespace or punctuation at its ends (CMRC
    answers often carry the sentence's "。" or a trailing space: no information is in them)."""
    inner = _trim_punctuation(text.strip()).strip() or text.strip() or text
    lo = start + text.index(inner)
    return lo, lo + len(inner)


def load_gold(path: Path) -> GoldSet:
    """Paragraphs and answer spans straight from the SQuAD-format file."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    gold = GoldSet({}, {})
    for a, article in enumerate(raw.get("data", [])):
        paragraphs = gold.paragraphs.setdefault(a, [])
        for paragraph in article.get("paragraphs", []) if isinstance(article, dict) else []:
            context = paragraph.get("context") if isinstance(paragraph, dict) else None
            if not isinstance(context, str):
                continue
            p = len(paragraphs)
            paragraphs.append(context)
            for qa in paragraph.get("qas", []):
                if not isinstance(qa, dict) or qa.get("id") is None:
                    continue
                spans, texts, bad = [], [], 0
                for answer in qa.get("answers") or []:
                    text = str(answer.get("text", "")) if isinstance(answer, dict) else ""
                    if not text.strip():
                        continue
                    texts.append(text.strip())
                    s = answer.get("answer_start")
                    if isinstance(s, int) and s >= 0 and context[s : s + len(text)] == text:
                        spans.append(_trimmed_span(text, s))
                    else:
                        bad += 1
                gold.questions.setdefault(
                    str(qa["id"]),
                    GoldQuestion(
                        str(qa["id"]),
                        a,
                        p,
                        tuple(dict.fromkeys(spans)),
                        tuple(dict.fromkeys(texts)),
                        bad,
                    ),
                )
    return gold


def align_articles(
    gold: GoldSet, article_docs: dict[int, str], parsed: dict[str, str]
) -> tuple[dict[tuple[int, int], Alignment | None], Counter]:
    """Every paragraph of every article aligned into its parsed document, in order."""
    out: dict[tuple[int, int], Alignment | None] = {}
    how: Counter = Counter()
    for a, doc in article_docs.items():
        text = parsed.get(doc)
        cursor = 0
        holder = ParsedText(text) if text is not None else None
        for p, paragraph in enumerate(gold.paragraphs.get(a, [])):
            found = align(paragraph, holder, cursor) if holder is not None else None
            out[(a, p)] = found
            how["missing document" if holder is None else found.how if found else "not found"] += 1
            if found is not None:
                cursor = found.end
    return out, how


# --------------------------------------------------------------------------------------------
# One set x chunk size: run, score, compare


@dataclass
class Comparison:
    """cofe against gold for one scoring of one run."""

    config: str
    scored: int = 0
    excluded: Counter = field(default_factory=Counter)
    excluded_gold: Counter = field(default_factory=Counter)  # gold stage of excluded samples
    pool: Counter = field(default_factory=Counter)  # (gold, cofe) -> count
    at_k: Counter = field(default_factory=Counter)
    stage: Counter = field(default_factory=Counter)  # (gold stage, cofe stage) -> count
    cofe_verdicts: Counter = field(default_factory=Counter)
    examples: dict[tuple, list[str]] = field(default_factory=lambda: defaultdict(list))

    def agreement(self, counter: Counter) -> float | None:
        total = sum(counter.values())
        return sum(n for (g, c), n in counter.items() if g == c) / total if total else None

    def to_dict(self) -> dict[str, Any]:
        def cells(counter: Counter, label: str) -> list[dict]:
            return [
                {
                    "gold": g,
                    "cofe": c,
                    "count": n,
                    "examples": self.examples.get((label, g, c), []),
                }
                for (g, c), n in sorted(counter.items(), key=lambda kv: -kv[1])
            ]

        return {
            "config": self.config,
            "scored": self.scored,
            "excluded": dict(self.excluded),
            "excluded_gold_stages": dict(self.excluded_gold),
            "cofe_verdicts": dict(self.cofe_verdicts),
            "agreement": {
                "pool": self.agreement(self.pool),
                "at_k": self.agreement(self.at_k),
                "verdict": self.agreement(self.stage),
            },
            "pool": cells(self.pool, "pool"),
            "at_k": cells(self.at_k, "at_k"),
            "verdict": cells(self.stage, "verdict"),
        }


def _isnull(value: Any) -> bool:
    import pandas as pd

    return value is None or bool(pd.isna(value))


def cofe_side(result, top_k: int) -> tuple[dict[str, tuple[bool, bool]], dict[str, tuple]]:
    """Per sample: (pool hit, @k hit) from ``points``; (verdict, stage, explanation) from
    ``verdicts``. Only these columns are relied on."""
    points = result.points
    use_context = "context_rank" in points.columns and points["context_rank"].notna().any()
    hits: dict[str, tuple[bool, bool]] = {}
    for row in points.itertuples(index=False):
        pool_rank = getattr(row, "pool_rank", None)
        in_pool = not _isnull(pool_rank)
        in_k = not _isnull(row.context_rank) if use_context else in_pool and int(pool_rank) <= top_k
        old = hits.get(row.sample_id, (False, False))
        hits[row.sample_id] = (old[0] or in_pool, old[1] or in_k)
    verdicts = {}
    for row in result.verdicts.itertuples(index=False):
        stage = getattr(row, "stage", None)
        explanation = getattr(row, "explanation", None)
        verdicts[row.sample_id] = (
            str(row.verdict),
            None if _isnull(stage) else str(getattr(stage, "value", stage)),
            None if _isnull(explanation) else str(explanation),
        )
    return hits, verdicts


def compare(
    name: str,
    gold: dict[str, GoldFacts],
    result,
    top_k: int,
    examples: int,
) -> Comparison:
    out = Comparison(name)
    hits, verdicts = cofe_side(result, top_k)
    for sample_id, facts in gold.items():
        verdict, stage, explanation = verdicts.get(sample_id, ("(no verdict)", None, None))
        out.cofe_verdicts[verdict] += 1
        if verdict in EXCLUDED or verdict == "(no verdict)":
            reason = re.sub(r"'[^']*'", "'…'", explanation or "").split(" (")[0][:90]
            out.excluded[f"{verdict} ({reason})" if reason else verdict] += 1
            out.excluded_gold[facts.stage] += 1
            listed = out.examples[("excluded", facts.stage, verdict)]
            if len(listed) < examples:
                listed.append(sample_id)
            continue
        out.scored += 1
        in_pool, in_k = hits.get(sample_id, (False, False))
        cells = (
            ("pool", out.pool, bool(facts.pool_ok), in_pool),
            ("at_k", out.at_k, facts.context_ok, in_k),
            ("verdict", out.stage, facts.stage, stage or PASS),
        )
        for label, counter, g, c in cells:
            counter[(g, c)] += 1
            listed = out.examples[(label, g, c)]
            if g != c and len(listed) < examples:
                listed.append(sample_id)
    return out


@dataclass
class SizeReport:
    set: str
    size: int
    questions: int
    chunks: int
    gold_excluded: Counter
    spans: Counter  # answer spans: mapped / unmapped / bad in the source
    gold_stages: Counter
    comparisons: list[Comparison]
    seconds: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {
            "set": self.set,
            "size": self.size,
            "questions": self.questions,
            "chunks": self.chunks,
            "gold_excluded": dict(self.gold_excluded),
            "spans": dict(self.spans),
            "gold_stages": dict(self.gold_stages),
            "seconds": self.seconds,
            "configs": [c.to_dict() for c in self.comparisons],
        }


def gold_for_run(
    run_dir: Path, gold: GoldSet, sample_docs: dict[str, str], top_k: int
) -> tuple[dict[str, GoldFacts], Counter, Counter]:
    """Gold facts of every recorded sample of a run, the excluded ones and the span counts."""
    from cofe.runlog import read_run

    run = read_run(run_dir)
    parsed = {doc_id: d.text for doc_id, d in run.documents.items()}
    by_doc: dict[str, list[ChunkSpan]] = defaultdict(list)
    for chunk in run.chunks.values():
        by_doc[chunk.doc_id].append(ChunkSpan(chunk.chunk_id, chunk.start, chunk.end))
    article_docs: dict[int, str] = {}
    for sample_id, doc in sample_docs.items():
        question = gold.questions.get(sample_id)
        if question is not None:
            article_docs.setdefault(question.article, doc)
    alignments, _ = align_articles(gold, article_docs, parsed)
    # the pipeline's structure, as its records show it: a reranker when the manifest says so,
    # or (stages unknown) when some context is not its pool's first items -- a context that
    # is always the pool's top-K is a plain cut, and a point it leaves out is a retrieval loss
    from cofe.runlog import Stage

    stages = run.manifest.stages
    reranker = (
        Stage.RERANKING in stages
        if stages is not None
        else any(
            r.context is not None
            and r.pool is not None
            and [c.chunk_id for c in r.context] != [c.chunk_id for c in r.pool[: len(r.context)]]
            for r in run.records.values()
        )
    )
    facts: dict[str, GoldFacts] = {}
    excluded: Counter = Counter()
    spans: Counter = Counter()
    for sample_id in sample_docs:
        question = gold.questions.get(sample_id)
        record = run.records.get(sample_id)
        if question is None:
            excluded["not in the source file"] += 1
            continue
        spans["bad in the source file"] += question.bad_spans
        if not question.spans:
            excluded["no answer_start matches its text"] += 1
            continue
        if record is None:
            excluded["no record in the run"] += 1
            continue
        alignment = alignments.get((question.article, question.paragraph))
        mapped = []
        for start, end in question.spans:
            span = alignment.span(start, end) if alignment else None
            spans["mapped" if span else "unmapped"] += 1
            if span and alignment.how != "exact":
                spans["mapped ignoring whitespace"] += 1
            mapped.append(span)
        facts[sample_id] = gold_facts(
            mapped,
            by_doc.get(sample_docs[sample_id], []),
            None if record.pool is None else [r.chunk_id for r in record.pool],
            None if record.context is None else [r.chunk_id for r in record.context],
            top_k,
            record.answer,
            question.texts,
            reranker,
        )
    return facts, excluded, spans


def explain(
    sample_id: str, facts: GoldFacts | None, run_dir: Path, results: dict[str, Any], top_k: int
) -> str:
    """Everything both sides know about one sample, for debugging a disagreement."""
    from cofe.runlog import read_run

    run = read_run(run_dir)
    record = run.records.get(sample_id)
    lines = [f"== {sample_id} in {run_dir}"]
    if facts is None:
        lines.append("  gold: none (excluded)")
    else:
        lines.append(
            f"  gold stage {facts.stage}: parse {facts.parse_ok}, chunk {facts.chunk_ok}, "
            f"pool {facts.pool_ok}, context {facts.context_ok}, "
            f"answer {facts.answer_ok}"
        )
        lines.append(f"  gold spans {list(facts.spans)}; covering chunks {list(facts.covering)}")
    if record is not None:
        for rank, ranked in enumerate(record.pool or [], 1):
            chunk = run.chunks.get(ranked.chunk_id)
            mark = "*" if facts and ranked.chunk_id in facts.covering else " "
            where = f"{chunk.start}-{chunk.end}" if chunk else "?"
            lines.append(f"  pool {rank:2d}{mark} {ranked.chunk_id} [{where}]")
            if rank == top_k:
                lines.append("  ---- top_k")
        lines.append(f"  answer: {record.answer!r}")
    for label, result in results.items():
        points = result.points[result.points["sample_id"] == sample_id]
        verdicts = result.verdicts[result.verdicts["sample_id"] == sample_id]
        for row in points.to_dict("records"):
            shown = {k: v for k, v in row.items() if k != "sample_id" and not _isnull(v)}
            lines.append(f"  cofe {label} point: {shown}")
        for row in verdicts.to_dict("records"):
            lines.append(
                f"  cofe {label} verdict {row.get('verdict')} / stage "
                f"{row.get('stage')}: {row.get('explanation')}"
            )
    return "\n".join(lines)


FRAGMENT_WORDS = 4  # an answer of at least this many words is labelled as two halves
FRAGMENT_CHARS = 6  # ... or of this many characters, for text written without spaces


def _cjk(char: str) -> bool:
    return unicodedata.name(char, "").startswith("CJK")


def halves(text: str) -> tuple[str, str] | None:
    """An answer text as two keywords, its first and second halves (by words; in Chinese by
    characters, cut between two Chinese characters nearest the middle, never inside a number
    or a Latin word); None when it is too short to split."""
    words = text.split()
    if len(words) >= FRAGMENT_WORDS:
        middle = len(words) // 2
        return " ".join(words[:middle]), " ".join(words[middle:])
    if len(words) == 1 and len(text) >= FRAGMENT_CHARS:
        cuts = [i for i in range(2, len(text) - 1) if _cjk(text[i - 1]) and _cjk(text[i])]
        if cuts:
            at = min(cuts, key=lambda i: abs(i - len(text) / 2))
            return text[:at], text[at:]
    return None


def two_fragment_samples(samples: Sequence[Any]) -> list[Any]:
    """The samples whose single answer text splits in two, each with that one point of two
    keywords (the gold -- the answer span -- is the same)."""
    out = []
    for sample in samples:
        keywords = sample.fine_keywords
        if len(keywords) != 1 or len(keywords[0]) != 1 or not isinstance(keywords[0][0], str):
            continue  # several answer texts (AnyOf): which one to split is a guess
        split = halves(keywords[0][0])
        if split is not None:
            out.append(sample.model_copy(update={"fine_keywords": [list(split)]}))
    return out


def write_set(name: str, base: Path, limit: int | None) -> tuple[Any, list[Any], Path, Path]:
    """One shipped set imported, its articles written as ``base/docs/*.txt`` (rewritten only
    when changed, so parsing stays cached) and its questions -- every one, or ``limit`` spread
    evenly -- as ``base/evalset.jsonl``: (the import, the samples, the docs folder, the set)."""
    from cofe import write_evalset
    from cofe.evalset.importers import import_squad

    docs = base / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    imported = import_squad(SETS[name])
    for doc, text in imported.documents.items():
        target = docs / doc
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
    samples = imported.samples
    if limit and limit < len(samples):
        step = len(samples) / limit
        samples = [samples[int(i * step)] for i in range(limit)]
    evalset = base / "evalset.jsonl"
    write_evalset(evalset, samples)
    return imported, samples, docs, evalset


def run_set(
    name: str,
    sizes: Sequence[int],
    workdir: Path,
    cache,
    limit: int | None,
    examples: int,
    concurrency: int,
    explain_ids: Sequence[str] = (),
    fragments: bool = False,
    pipeline: str = "default",
) -> list[SizeReport]:
    from cofe import ScoreConfig, score_run
    from cofe.pipeline import DefaultPipeline, PipelineConfig, parse_documents
    from cofe.runner import run_pipeline

    source = SETS[name]
    base = workdir / name
    imported, samples, docs, evalset = write_set(name, base, limit)
    sample_docs = {s.id: s.source.doc for s in samples if s.source is not None}
    gold = load_gold(source)
    _log(
        f"[{name}] {len(imported.documents)} documents, {len(samples)} questions "
        f"({len(imported.problems)} import problem(s))"
    )
    parsed = None
    if pipeline == "default":
        t = time.perf_counter()
        parsed = parse_documents(docs, cache=cache)
        _log(
            f"[{name}] parsed {len(parsed.documents)} documents in {time.perf_counter() - t:.1f} s"
        )
    reports = []
    for size in sizes:
        config = PipelineConfig(chunk_size=size)
        seconds: dict[str, float] = {}
        t = time.perf_counter()
        if parsed is not None:
            out = base / f"chunk{size}"
            _log(f"[{name} {size}] running the default pipeline ({len(samples)} questions) ...")
            report = run_pipeline(
                DefaultPipeline(config),
                evalset,
                out,
                documents=parsed.documents,
                cache=cache,
                fresh=True,
                concurrency=concurrency,
                progress=sys.stderr.isatty(),
            )
        else:
            from benchmarks._framework_pipelines import build

            out = base / f"{pipeline}-chunk{size}"
            framework = build(pipeline, docs, size)
            seconds["build"] = round(time.perf_counter() - t, 1)
            _log(f"[{name} {size}] running the {pipeline} pipeline ({len(samples)} questions) ...")
            report = run_pipeline(
                framework,
                evalset,
                out,
                cache=cache,
                fresh=True,
                concurrency=concurrency,
                progress=sys.stderr.isatty(),
            )
        seconds["run"] = round(time.perf_counter() - t, 1)
        t = time.perf_counter()
        facts, excluded, spans = gold_for_run(out, gold, sample_docs, config.top_k)
        seconds["gold"] = round(time.perf_counter() - t, 1)
        comparisons, results = [], {}
        for label, overrides in CONFIGS.items():
            t = time.perf_counter()
            _log(f"[{name} {size}] scoring ({label}) ...")
            results[label] = result = score_run(out, config=ScoreConfig(**overrides))
            seconds[f"score {label}"] = round(time.perf_counter() - t, 1)
            comparisons.append(compare(label, facts, result, config.top_k, examples))
        if fragments:
            from cofe.evalset import EvalSet

            split = two_fragment_samples(samples)
            same = {s.id: facts[s.id] for s in split if s.id in facts}
            whole = EvalSet([s for s in samples if s.id in same], path=str(evalset))
            for label, chosen in (
                ("one keyword, same questions", whole),
                ("two fragments", EvalSet(split, path=str(evalset))),
            ):
                t = time.perf_counter()
                results[label] = result = score_run(out, chosen, ScoreConfig())
                seconds[f"score {label}"] = round(time.perf_counter() - t, 1)
                comparisons.append(compare(label, same, result, config.top_k, examples))
        for sample_id in explain_ids:
            if sample_id in sample_docs:
                _log(explain(sample_id, facts.get(sample_id), out, results, config.top_k))
        line = ", ".join(f"{c.config}: verdict {_pct(c.agreement(c.stage))}" for c in comparisons)
        _log(f"[{name} {size}] {report.chunks} chunks; {line}; {seconds}")
        reports.append(
            SizeReport(
                name if pipeline == "default" else f"{name} ({pipeline})",
                size,
                len(samples),
                report.chunks,
                excluded,
                spans,
                Counter(f.stage for f in facts.values()),
                comparisons,
                seconds,
            )
        )
    return reports


# --------------------------------------------------------------------------------------------
# Output


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def _counts(counter: Counter) -> str:
    return ", ".join(f"{k} {n}" for k, n in counter.most_common()) or "–"


def _misses(counter: Counter) -> str:
    """Disagreements of a yes/no fact: gold yes & cofe no, gold no & cofe yes."""
    return f"{counter[(True, False)]} / {counter[(False, True)]}"


STAGE_ORDER = ("parse", "chunking", "retrieval", "reranking", "generation", PASS)


def _stage_key(stage: str) -> tuple[int, str]:
    return (STAGE_ORDER.index(stage) if stage in STAGE_ORDER else len(STAGE_ORDER), stage)


def markdown(reports: list[SizeReport], examples: int) -> str:
    head = [
        "set",
        "chunk size",
        "chunks",
        "questions",
        "scored",
        "excluded",
        "unmapped spans",
        "config",
        "pool agree",
        "pool miss/extra",
        "@4 agree",
        "@4 miss/extra",
        "verdict agree",
        "gold stages",
        "cofe verdicts",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in reports:
        for c in r.comparisons:
            excluded = sum(c.excluded.values()) + sum(r.gold_excluded.values())
            row = [
                r.set,
                r.size,
                r.chunks,
                r.questions,
                c.scored,
                excluded,
                r.spans["unmapped"],
                c.config,
                _pct(c.agreement(c.pool)),
                _misses(c.pool),
                _pct(c.agreement(c.at_k)),
                _misses(c.at_k),
                _pct(c.agreement(c.stage)),
                ", ".join(
                    f"{s} {n}"
                    for s, n in sorted(r.gold_stages.items(), key=lambda kv: _stage_key(kv[0]))
                ),
                _counts(c.cofe_verdicts),
            ]
            lines.append("| " + " | ".join(str(x) for x in row) + " |")
    lines += ["", "miss/extra: gold yes and cofe no / gold no and cofe yes.", ""]
    lines.append("Excluded samples (not in the agreement figures), and their gold stages:")
    for r in reports:
        gold = _counts(r.gold_excluded)
        for c in r.comparisons:
            stages = ", ".join(
                f"{stage} {n}"
                for stage, n in sorted(c.excluded_gold.items(), key=lambda kv: _stage_key(kv[0]))
            )
            lines.append(
                f"- {r.set} {r.size} {c.config}: gold: {gold}; cofe: "
                f"{_counts(c.excluded)}; their gold stages: {stages or '–'}"
            )
    lines.append("")
    lines.append("Answer spans (one per distinct answer offset):")
    for r in reports:
        lines.append(f"- {r.set} {r.size}: {_counts(r.spans)}")
    lines.append("")
    titles = {
        "verdict": "Verdict disagreements, gold stage → cofe stage",
        "pool": "Pool disagreements, gold → cofe (True: an answer chunk is in the pool)",
        "at_k": "@4 disagreements, gold → cofe (True: an answer chunk is in the top 4)",
    }
    for label, title in titles.items():
        lines.append(f"{title} (count; up to {examples} ids):")
        for r in reports:
            for c in r.comparisons:
                counter = {"verdict": c.stage, "pool": c.pool, "at_k": c.at_k}[label]
                cells = sorted(
                    ((g, k, n) for (g, k), n in counter.items() if g != k),
                    key=lambda x: (-x[2], str(x[0]), str(x[1])),
                )
                lines.append(f"- {r.set} {r.size} {c.config}:" + ("" if cells else " none"))
                for g, k, n in cells:
                    ids = ", ".join(c.examples.get((label, g, k), []))
                    lines.append(f"  - {g} → {k}: {n} ({ids})")
        lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="squad,cmrc", help="comma-separated: squad, cmrc")
    parser.add_argument("--sizes", default="128,256,512,1024", help="chunk sizes (tokens)")
    parser.add_argument(
        "--pipeline",
        default="default",
        choices=("default", "langchain", "haystack"),
        help="the built-in pipeline, or the same written with LangChain or "
        "Haystack and recorded from its OpenInference spans",
    )
    parser.add_argument("--limit", type=int, default=0, help="questions per set (0: all)")
    parser.add_argument("--workdir", type=Path, default=WORK, help="where runs are written")
    parser.add_argument(
        "--cache", type=Path, default=None, help="cofe cache (default: cofe's, as `cofe run` uses)"
    )
    parser.add_argument("--examples", type=int, default=3, help="sample ids shown per cell")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument(
        "--json",
        nargs="?",
        const="-",
        metavar="FILE",
        help="JSON for programs: on stdout instead of the Markdown, or written to FILE next to it",
    )
    parser.add_argument(
        "--fragments",
        action="store_true",
        help="also score long answers as points of two keywords (their halves)",
    )
    parser.add_argument(
        "--explain",
        default="",
        help="comma-separated sample ids: print both sides' evidence (stderr)",
    )
    args = parser.parse_args(argv)

    from cofe._cache import Cache, default_cache_dir

    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = [s for s in sets if s not in SETS]
    if unknown:
        parser.error(f"unknown set(s) {unknown}; choose from {sorted(SETS)}")
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    cache = Cache(args.cache or default_cache_dir())
    started = time.perf_counter()
    reports: list[SizeReport] = []
    for name in sets:
        reports += run_set(
            name,
            sizes,
            args.workdir,
            cache,
            args.limit or None,
            args.examples,
            args.concurrency,
            [i for i in args.explain.split(",") if i],
            args.fragments,
            args.pipeline,
        )
    _log(f"done in {time.perf_counter() - started:.0f} s")
    as_json = json.dumps([r.to_dict() for r in reports], indent=2, ensure_ascii=False)
    if args.json == "-":
        print(as_json)
        return
    if args.json:
        Path(args.json).write_text(as_json + "\n", encoding="utf-8")
    print(markdown(reports, args.examples))


if __name__ == "__main__":
    main()
