"""Naive RAG vs RAPTOR vs a property graph, scored stage by stage, offline.

    python benchmarks/graph_raptor.py [--squad-articles 6] [--per-article 5] [--cmrc-articles 6]
                                      [--base-url URL --model NAME]

On the shipped SQuAD + CMRC corpus (the demo's documents and eval set) runs

* ``naive``: cofe's built-in pipeline (sentence splitter 256, BM25 pool 30, top 4);
* ``raptor``: LlamaIndex's RAPTOR pack (``llama-index-packs-raptor``: chunks of 256 tokens,
  MiniLM embeddings, UMAP + GMM clustering, a tree of depth 2, collapsed search, top 4);
* ``graph``: LlamaIndex's ``PropertyGraphIndex`` (``SimpleLLMPathExtractor`` triplets,
  synonym + vector sub-retrievers, ``include_text=False``: the generator reads triplets);

each recorded by ``LlamaIndexPipeline`` and scored with the default settings; then prints a
Markdown table (stage recalls, derivation losses, refusals, the answer's keyword recall over
all and over answered samples) and the paired comparison.

Offline, every LLM call goes to ``ExtractiveLLM`` -- NOT a language model: a labelled
extractive stand-in. Summaries are the lead sentence of each summarised chunk; triplets are
cut from each sentence's first words (subject), next word (relation) and the rest (object);
answers are the context sentence sharing most words with the question, or "I don't know."
when none shares enough. With ``--base-url`` (any OpenAI-compatible endpoint) a real model
writes summaries, triplets and answers instead.

``factory(kind, docs)`` builds one of the three pipelines for ``cofe sweep``:

    cofe sweep --evalset E --docs D --out OUT --pipeline benchmarks.graph_raptor:factory \\
               --param kind=naive,raptor,graph --param docs=D
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from llama_index.core.llms import (  # noqa: E402
    CompletionResponse,
    CompletionResponseGen,
    CustomLLM,
    LLMMetadata,
)
from llama_index.core.llms.callbacks import llm_completion_callback  # noqa: E402

from cofe import score_run  # noqa: E402
from cofe.compare import compare_results  # noqa: E402

WORK = ROOT / "benchmarks" / "_work" / "graph_raptor"
KINDS = ("naive", "raptor", "graph")
TOP_K = 4
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")
_WORDS = re.compile(r"[A-Za-z0-9]+|[\u4e00-\u9fff]")
_BLOCK = re.compile(r"-{5,}\n(.*?)\n-{5,}", re.S)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if len(s.strip()) > 1]


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORDS.findall(text)} - _STOP


_STOP = {
    "the",
    "a",
    "an",
    "of",
    "in",
    "on",
    "to",
    "and",
    "is",
    "was",
    "what",
    "who",
    "which",
    "when",
    "where",
    "how",
    "did",
    "does",
    "do",
    "for",
    "by",
    "with",
    "as",
    "at",
    "that",
    "的",
    "是",
    "了",
    "在",
    "什",
    "么",
    "哪",
    "谁",
    "几",
    "多",
    "少",
    "个",
}


class ExtractiveLLM(CustomLLM):
    """A labelled stand-in for an LLM: extractive summaries, triplets and answers (no model)."""

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=100_000, num_output=512, model_name="extractive")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self.reply(prompt))

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kw: Any
    ) -> CompletionResponseGen:
        yield CompletionResponse(text=self.reply(prompt), delta=self.reply(prompt))

    def reply(self, prompt: str) -> str:
        if "knowledge triplets" in prompt:
            return self._triplets(prompt.rsplit("Text:", 1)[-1].split("Triplets:", 1)[0])
        if "synonyms or related keywords" in prompt:
            query = prompt.rsplit("QUERY:", 1)[-1].split("----", 1)[0]
            return "KEYWORDS: " + "^".join(sorted(_words(query))[:10])
        block = _BLOCK.search(prompt)
        context = block.group(1) if block else prompt
        query = prompt.rsplit("Query:", 1)[-1].split("Answer:", 1)[0].strip()
        if query.startswith("Summarize the provided text"):
            # the lead sentence of each summarised chunk (chunks are separated by blank lines)
            leads = [_sentences(part)[:1] for part in context.split("\n\n") if part.strip()]
            return " ".join(s for lead in leads for s in lead)
        return self._answer(context, query)

    @staticmethod
    def _triplets(text: str) -> str:
        out = []
        for sentence in _sentences(text)[:10]:
            if " " in sentence:  # subject: 3 words, relation: the next, object: up to 8 more
                words = sentence.rstrip(".!?").split()
                if len(words) >= 5:
                    out.append(f"({' '.join(words[:3])}, {words[3]}, {' '.join(words[4:12])})")
            elif len(sentence) >= 8:  # Chinese: 4 characters, 2, then up to 20
                out.append(f"({sentence[:4]}, {sentence[4:6]}, {sentence[6:26]})")
        return "\n".join(out)

    @staticmethod
    def _answer(context: str, query: str) -> str:
        wanted = _words(query)
        best, overlap = None, 0
        for sentence in _sentences(context):
            shared = len(wanted & _words(sentence))
            if shared > overlap:
                best, overlap = sentence, shared
        if best is None or overlap < max(2, len(wanted) // 3):
            return "I don't know." if query.isascii() else "无法回答。"
        return best


def _llm(base_url: str | None, model: str | None) -> Any:
    if not base_url:
        return ExtractiveLLM()
    from llama_index.llms.openai_like import OpenAILike

    return OpenAILike(
        model=model or "default", api_base=base_url, api_key="none", is_chat_model=True, timeout=120
    )


def _documents(docs: Path) -> list[Any]:
    from llama_index.core import Document

    from cofe.pipeline import parse_documents

    parsed = parse_documents(docs).documents
    return [Document(text=d.text, id_=d.doc_id, metadata={"file_name": d.doc_id}) for d in parsed]


def _embed() -> Any:
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    from cofe.pipeline._embed import minilm_path

    return HuggingFaceEmbedding(model_name=minilm_path(), device="cpu")


def factory(kind: str, docs: str = "", base_url: str | None = None, model: str | None = None):
    """One of the three pipelines (``naive``, ``raptor``, ``graph``) over the documents in
    ``docs``; what ``cofe sweep --pipeline benchmarks.graph_raptor:factory`` calls."""
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.core.query_engine import RetrieverQueryEngine

    from cofe.adapters import LlamaIndexPipeline, raptor_retriever
    from cofe.runner import load_pipeline

    if kind == "naive":
        return load_pipeline("default", chunk_size=256, retriever="bm25", top_k=TOP_K)
    documents = _documents(Path(docs))
    llm, splitter = _llm(base_url, model), SentenceSplitter(chunk_size=256, chunk_overlap=20)
    if kind == "raptor":
        retriever = raptor_retriever()(
            documents,
            llm=llm,
            embed_model=_embed(),
            tree_depth=2,
            similarity_top_k=TOP_K,
            transformations=[splitter],
            verbose=False,
        )
    elif kind == "graph":
        from llama_index.core import PropertyGraphIndex
        from llama_index.core.indices.property_graph import SimpleLLMPathExtractor

        index = PropertyGraphIndex.from_documents(
            documents,
            llm=llm,
            embed_model=_embed(),
            transformations=[splitter],
            kg_extractors=[SimpleLLMPathExtractor(llm=llm, num_workers=1)],
            use_async=False,
            show_progress=False,
        )
        retriever = index.as_retriever(include_text=False, similarity_top_k=TOP_K)
    else:
        raise ValueError(f"kind {kind!r}: one of {', '.join(KINDS)}")
    engine = RetrieverQueryEngine.from_args(retriever, llm=llm)
    return LlamaIndexPipeline(engine, documents=documents, name=kind)


def markdown(header: list[str], rows: list[list[object]]) -> str:
    def cell(value: object) -> str:
        return f"{value:.3f}" if isinstance(value, float) else str(value)

    lines = [header, ["---"] * len(header), *([cell(v) for v in row] for row in rows)]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)


def _mean(result, step: str, measure: str) -> float | None:
    return result.mean(step, measure)


def main() -> None:
    from cofe.demo import DemoConfig
    from cofe.demo._demo import build_demo_inputs
    from cofe.runner import run_pipeline

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--squad-articles", type=int, default=6)
    parser.add_argument("--per-article", type=int, default=5)
    parser.add_argument("--cmrc-articles", type=int, default=6)
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint (default: extractive)")
    parser.add_argument("--model")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    config = DemoConfig(
        squad_articles=args.squad_articles,
        squad_per_article=args.per_article,
        cmrc_articles=args.cmrc_articles,
    )
    docs, evalset, _ = build_demo_inputs(WORK, config)
    results, seconds, rows = {}, {}, []
    for kind in KINDS:
        started = time.perf_counter()
        print(f"[{kind}] building and answering ...", file=sys.stderr, flush=True)
        pipeline = factory(kind, str(docs), args.base_url, args.model)
        run_pipeline(
            pipeline,
            evalset,
            WORK / kind,
            docs=docs if kind == "naive" else None,
            concurrency=1,
            progress=False,
            fresh=True,
        )
        results[kind] = result = score_run(WORK / kind)
        seconds[kind] = time.perf_counter() - started
        view, verdicts = result.view(), Counter(result.verdicts.verdict)
        refusals = view.refusal_rates()
        table = view.summary().set_index(["step", "measure"])
        answer = table.loc[("answer", "KeywordRecall")]
        chunks = [c for c in __import__("cofe").read_run(WORK / kind).chunks.values()]
        derived = Counter(c.kind for c in chunks if c.is_derived)
        rows.append(
            [
                kind,
                sum(not c.is_derived for c in chunks),
                ", ".join(f"{n} {k}" for k, n in sorted(derived.items())) or "-",
                _mean(
                    result,
                    "pool",
                    next(
                        m for s, m in table.index if s == "pool" and m.startswith("KeywordRecall@")
                    ),
                ),
                _mean(result, "context", f"KeywordRecall@{TOP_K}"),
                answer["mean"],
                answer["answered_mean"],
                f"{refusals['refused']}/{refusals['answered']}",
                verdicts["pass"],
                verdicts["not_retrieved"],
                verdicts["derivation_lost"],
                verdicts["refused"],
                verdicts["not_in_answer"],
                verdicts["chunk_split"] + verdicts["chunk_dropped"] + verdicts["not_in_corpus"],
                f"{seconds[kind]:.0f}",
            ]
        )
    samples = len(results["naive"].verdicts)
    print(
        f"{samples} questions ({args.squad_articles} SQuAD articles x {args.per_article}, "
        f"{args.cmrc_articles} CMRC articles); LLM: "
        f"{args.base_url or 'ExtractiveLLM (extractive stand-in, not a model)'}\n"
    )
    print(
        markdown(
            [
                "pipeline",
                "corpus chunks",
                "derived items",
                "pool KR",
                f"context KR@{TOP_K}",
                "answer KR (all)",
                "answer KR (answered)",
                "refused",
                "pass",
                "not_retrieved",
                "derivation_lost",
                "refused (verdict)",
                "not_in_answer",
                "chunking",
                "s",
            ],
            rows,
        )
    )
    comparison = compare_results(results, resamples=999)
    diffs = comparison.differences
    keep = diffs[
        (diffs.query_type == "all")
        & diffs.measure.isin([f"KeywordRecall@{TOP_K}", "KeywordRecall"])
    ]
    print("\nPaired differences (all questions; Holm over the whole comparison)\n")
    print(
        markdown(
            ["a", "b", "step", "measure", "a - b", "95 % CI", "n", "p (Holm)"],
            [
                [
                    r.a,
                    r.b,
                    r.step,
                    r.measure,
                    r.difference,
                    f"[{r.low:+.3f}, {r.high:+.3f}]",
                    int(r.n),
                    f"{r.p_holm:.2g}",
                ]
                for r in keep.itertuples()
            ],
        )
    )


if __name__ == "__main__":
    main()
