"""Build a small real corpus and eval set from the shipped data, run, score and compare.

The corpus is every shipped SQuAD article (most as .txt, a few written as
.html and .md so the parser's formats are exercised) plus a slice of CMRC
2018 articles in Chinese; the eval set is an even sample of their questions,
imported with the SQuAD importer (coarse keywords derived by its documented
rule, fine keywords = the answer spans).
"""

from __future__ import annotations

import html
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import cofe
from cofe._atomic import write_text_atomically
from cofe._cache import Cache
from cofe.compare import ALL, Comparison, compare_results
from cofe.evalset import EvalSample, write_evalset
from cofe.importers import import_squad
from cofe.report import RunForReport, format_table, render_report
from cofe.results import scores_folder
from cofe.runner import RunReport, load_pipeline, run_pipeline
from cofe.stages import ScoreConfig, ScoreResult, score_run

if TYPE_CHECKING:
    import pandas as pd

    from cofe.llm import Endpoint

DATA = Path(cofe.__file__).parent / "_data"
AS_HTML = 3  # the first articles (sorted by name) are written as HTML ...
AS_MD = 2  # ... the next ones as Markdown, the rest as plain text


@dataclass(frozen=True)
class DemoConfig:
    chunk_sizes: tuple[int, ...] = (128, 512)
    squad_per_article: int = 10
    squad_articles: int | None = None  # None: every shipped article
    cmrc_articles: int = 40
    retriever: str = "bm25"
    reranker: str = "none"
    top_k: int = 4
    candidates: int = 30
    generator: str = "extractive"  # or "openai": needs an endpoint; then the answers are judged


def _every_nth(samples: list[EvalSample], n: int) -> list[EvalSample]:
    if len(samples) <= n:
        return samples
    step = len(samples) / n
    return [samples[int(i * step)] for i in range(n)]


def _write_doc(folder: Path, name: str, text: str, fmt: str) -> str:
    stem = Path(name).stem
    paragraphs = [p for p in text.split("\n\n") if p.strip()]
    if fmt == "html":
        body = "\n".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)
        out = f"{stem}.html"
        content = (
            f"<html><head><title>{html.escape(stem)}</title></head><body>\n{body}\n</body></html>\n"
        )
    elif fmt == "md":
        out = f"{stem}.md"
        content = "\n\n".join(paragraphs) + "\n"
    else:
        out, content = name, text
    (folder / out).write_text(content, encoding="utf-8")
    return out


def build_demo_inputs(workdir: Path, config: DemoConfig) -> tuple[Path, Path, int]:
    """Write ``docs/`` and ``evalset.jsonl`` under ``workdir``; returns their paths and doc count."""
    squad = import_squad(DATA / "squad" / "squad-v1.1-dev-part-b.json")
    cmrc = import_squad(DATA / "cmrc2018" / "cmrc2018-trial.json")
    docs = workdir / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    samples: list[EvalSample] = []
    renamed: dict[str, str] = {}
    for i, name in enumerate(sorted(squad.documents)[: config.squad_articles]):
        fmt = "html" if i < AS_HTML else "md" if i < AS_HTML + AS_MD else "txt"
        renamed[name] = _write_doc(docs, name, squad.documents[name], fmt)
        of_article = [s for s in squad.samples if s.source and s.source.doc == name]
        samples += _every_nth(of_article, config.squad_per_article)
    for name in list(cmrc.documents)[: config.cmrc_articles]:
        renamed[name] = _write_doc(docs, name, cmrc.documents[name], "txt")
        samples += [s for s in cmrc.samples if s.source and s.source.doc == name]
    # the eval set names each sample's source by the file actually written
    samples = [
        s.model_copy(update={"source": s.source.model_copy(update={"doc": renamed[s.source.doc]})})
        if s.source and s.source.doc in renamed
        else s
        for s in samples
    ]
    evalset = workdir / "evalset.jsonl"
    write_evalset(evalset, samples)
    return docs, evalset, len(renamed)


def _side_by_side(results: dict[str, ScoreResult]) -> str:
    names = list(results)
    falls = {n: r.waterfall().set_index("step")["recall"] for n, r in results.items()}
    steps = list(dict.fromkeys(s for f in falls.values() for s in f.index))
    rows = [[step, *(falls[n].get(step) for n in names)] for step in steps]
    lines = [
        "Loss waterfall (mean share of information points still present)",
        format_table(["step", *names], rows),
        "",
    ]
    counts = {n: r.verdict_counts().set_index("verdict")["count"] for n, r in results.items()}
    verdicts = list(dict.fromkeys(v for c in counts.values() for v in c.index))
    rows = [[v, *(int(counts[n].get(v, 0)) for n in names)] for v in verdicts]
    lines += [
        "Verdicts (first stage that lost an information point)",
        format_table(["verdict", *names], rows),
        "",
    ]
    rows = [
        [f"{step}/{measure}", *(results[n].mean(step, measure) for n in names)]
        for step, measure in SHOWN
        if any(results[n].mean(step, measure) is not None for n in names)
    ]
    lines += ["Measures by step", format_table(["measure", *names], rows)]
    return "\n".join(lines)


SHOWN = [
    ("corpus", "ChunkIntegrity"),
    ("corpus", "EntityAnchoring"),
    ("pool", "KeywordRecall@30"),
    ("context", "KeywordRecall@4"),
    ("answer", "PointRecall"),
    ("answer", "RougeL"),
    ("answer", "Faithfulness"),
    ("answer", "AnswerCorrectness"),
]


def _judge(
    run_dir: Path,
    endpoint: Endpoint,
    cache: Cache | None,
    concurrency: int,
    log: Callable[[str], None],
) -> None:
    from cofe.judges import judge_run
    from cofe.llm import LLMClient

    client = LLMClient(endpoint, cache=cache)
    report = judge_run(run_dir, client, concurrency=concurrency)
    log(
        f"  judged {report.judged} answers ({report.unscored} unscored, {client.usage.calls} calls)"
    )
    failed = [name for name, line in report.controls.items() if line.endswith("unscored")]
    if failed:  # why a judged measure is missing from the tables below
        log(
            f"  the judge failed its known-answer controls on {', '.join(failed)}: left "
            "unscored (its values would rank runs on noise; cofe judge explains)"
        )


def _differences(comparison: Comparison) -> str:
    """The shown measures' paired differences between the first two runs, with CI and p."""
    d = comparison.differences
    d = d[d.query_type == ALL].set_index(["step", "measure"])
    a, b = comparison.runs[:2]
    rows, same = [], []
    for key in SHOWN:
        if key not in d.index:
            continue
        # a full key of the (step, measure) index selects one row: pandas-stubs type it a scalar
        r = cast("pd.Series[Any]", d.loc[key])
        if r.get("same_test_as"):  # the same values as an earlier measure: its test
            same.append(f"{key[0]}/{key[1]} = {r['same_test_as']}")
        rows.append(
            [
                f"{key[0]}/{key[1]}",
                f"{r['difference']:+.3f}",
                f"[{r['low']:+.3f}, {r['high']:+.3f}]",
                f"{r['p_holm']:.2g}",
                "yes" if r["significant"] else "no",
            ]
        )
    header = ["measure", f"{a} - {b}", "95 % CI", "p (Holm)", "real?"]
    note = (
        f"\nThe same per-sample values, so one test (Holm counts each distinct test once): "
        f"{'; '.join(same)}"
        if same
        else ""
    )
    units = comparison.clustering.split(":", 1)[0]  # by document, or over questions
    caveat = f"\n{comparison.caveat}" if comparison.caveat else ""
    return (
        f"Is the difference real? (paired over {int(d['n'].max())} samples, {units}; "
        "cofe compare gives every measure)\n" + format_table(header, rows) + note + caveat
    )


def run_demo(
    workdir: Path,
    config: DemoConfig | None = None,
    *,
    cache: Cache | None = None,
    concurrency: int = 2,
    progress: bool | None = None,
    log: Callable[[str], None] = print,
    endpoint: Endpoint | None = None,
) -> dict[str, tuple[RunReport, ScoreResult]]:
    """Build the inputs, run the default pipeline once per chunk size, score, print the comparison."""
    config = config or DemoConfig()
    workdir.mkdir(parents=True, exist_ok=True)
    docs, evalset, n_docs = build_demo_inputs(workdir, config)
    log(
        f"demo corpus: {n_docs} documents in {docs} (SQuAD v1.1 English + CMRC 2018 Chinese, CC BY-SA)"
    )
    log(f"demo eval set: {evalset}")
    outcomes: dict[str, tuple[RunReport, ScoreResult]] = {}
    for size in config.chunk_sizes:
        name = f"chunk{size}"
        pipeline = load_pipeline(
            "default",
            chunk_size=size,
            chunk_overlap=min(20, size // 8),
            retriever=config.retriever,
            reranker=config.reranker,
            candidates=config.candidates,
            top_k=config.top_k,
            generator=config.generator,
            endpoint=endpoint,
        )
        log(f"\n== run {name}: {pipeline.describe()}")
        report = run_pipeline(
            pipeline,
            evalset,
            workdir / name,
            docs=docs,
            cache=cache,
            concurrency=concurrency,
            progress=progress,
        )
        log(report.summary())
        labels = None
        if endpoint is not None:  # a real model answered: the same endpoint judges the answers
            _judge(workdir / name, endpoint, cache, concurrency, log)
            from cofe.judges import labels_for_scoring

            labels = labels_for_scoring  # the scorer reads the judge's labels it is handed
        # the run's manifest records its top-K: the default settings read it
        result = score_run(workdir / name, config=ScoreConfig(), labels=labels)
        result.write(scores_folder(workdir / name, ScoreConfig()))
        outcomes[name] = (report, result)
    results = {n: r for n, (_, r) in outcomes.items()}
    log("")
    log(_side_by_side(results))
    comparison = None
    if len(results) >= 2:
        comparison = compare_results(results)
        comparison.write(workdir / "comparison")
        log("")
        log(_differences(comparison))
    page = render_report(
        [RunForReport.load(name, workdir / name, result) for name, result in results.items()],
        comparison,
    )
    write_text_atomically(workdir / "report.html", page)
    log("")
    log("Files:")
    for name in outcomes:
        log(f"  {workdir / name}/  run log (manifest, documents, chunks, samples) and scores/")
    if comparison is not None:
        log(f"  {workdir / 'comparison'}/  every measure compared (CSV + comparison.json)")
    log(
        f"  {workdir / 'report.html'}  charts, the comparison and a bad-case browser (open it "
        "in a browser; no network needed)"
    )
    if endpoint is None:
        log(
            "Generation here is EXTRACTIVE (not an LLM): it shows whether the answer reached the "
            "context. Use --generator openai --base-url URL --model NAME for a real model; its "
            "answers are then judged (Faithfulness, AnswerCorrectness, ...) by the same endpoint, "
            f"as `cofe judge {workdir / next(iter(outcomes))} --base-url URL --model NAME` "
            "does for any run."
        )
    log(
        "Score again with the paper's semantics (a chunk must name the entity): "
        f"cofe score {workdir / next(iter(outcomes))} --mode cofe-rag"
    )
    sys.stdout.flush()
    return outcomes
