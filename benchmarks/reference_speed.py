"""cofe's ``--mode cofe-rag`` against the CoFE-RAG reference scorer: CPU seconds and per-query parity.

    python benchmarks/reference_speed.py --reference DIR [--sets squad,cmrc,release-en,release-zh]
                                         [--queries 1000] [--repeat 3] [--workdir DIR] [--json FILE]

``DIR`` is a checkout of https://github.com/Alibaba-NLP/CoFE-RAG at commit
7c5ad8689ffd4cb8f7a39d7ebc3b791b090670f9 (see ``benchmarks/data/reference/README.md``:
the repository has no licence, so its code is not copied into this one). The files the
benchmark runs are checked against their pinned git blob hashes before anything is
timed: the reference runs *unpatched*. Nothing is fetched at run time.

The reference runs in cofe's own environment: its evaluator needs only
``llama_index.core`` (``TextNode``), which cofe's ``pipeline`` extra installs
(llama-index-core 0.14; the reference pins no version). It is run the way its README
runs it -- ``python run_pipeline.py CONFIG`` in a fresh process, from a scratch folder
that links the reference's ``run_pipeline.py``, ``utils.py``, ``llms/`` and
``eval_search/`` -- with a config whose pipeline is its ``eval_search`` operator with
its ``keyword_match`` config (``top_k`` 4), the operator
``config/search_and_eval_search.json`` runs after its searcher.

Inputs, built deterministically from data on this machine (each set once, kept in the
work folder and reused while the builder's settings are unchanged):

* ``squad``: the shipped SQuAD v1.1 dev part B (24 English Wikipedia articles,
  5,609 questions), 1,000 questions spread evenly over it;
* ``cmrc``: the shipped CMRC 2018 trial set (256 Chinese passages); its 1,002
  questions import to 1,000 (two have an empty question), all used;
* ``release-en`` (held out): the CoFE-RAG English release itself,
  ``datasets/docdata/rag_dataset_en.json`` of the reference checkout (1,003 queries
  with their own coarse and fine keywords, 4 query types); its documents (PDFs) are not
  published, so its corpus is the release's own reference answers, one chunk each --
  real labels, a stand-in corpus. ``release-zh`` does the same with the first 1,000 of
  the 2,826 Chinese queries.
* ``others-en``, ``others-zh``, ``others-squad``: pools of *other* queries' answers -- the
  release's queries (or 1,000 shipped SQuAD questions) over a corpus of their reference
  answers, each pool the 30 best BM25 hits with the query's own answer left out, and cofe's
  records carrying the pool's top 4 as the context (``benchmarks/score_speed.py`` times
  them; nearly every point is missed, so every loss is explained).

For the SQuAD-format sets: the articles are cut into windows of 120 words (200 CJK
characters), no overlap (``examples/build_squad_bm25.chunk_documents``, as
``benchmarks/squad_bm25.py``); coarse keywords are those cofe's SQuAD importer
derives (a name from the question, else the title, else a question span; none for a
few questions -- the reference skips those); the fine keywords are one information
point per distinct answer text the annotators gave (1-3). For every set the 30
candidates are cofe's built-in BM25 (``cofe.pipeline.BM25Retriever``, bm25s) over the
chunks. The same input is then written twice:

* for the reference, its search operator's output folder: ``recall_results.json``
  (every example with ``recall_results.source_nodes`` = 30 ``NodeWithScore.to_dict()``,
  made with llama_index itself) and ``parsed_files.json`` (every chunk, as its
  searcher saves it for the "offline" check);
* for cofe, the examples in the CoFE-RAG release format imported with cofe's
  ``cofe-rag`` importer to ``evalset.jsonl``, and a run-log folder (the documents, the
  chunks, one record per query whose pool is the same 30 chunks in the same order;
  ``top_k`` 4, stages parse/chunking/retrieval).

Timing: each side is a fresh process (cofe: the ``cofe`` console script, or
``python -m cofe``, ``cofe score RUN --evalset E --mode cofe-rag --candidates 30 --out
O``), CPU = user + system of the process and everything it waited for
(``resource.getrusage(RUSAGE_CHILDREN)`` before and after), ``--repeat`` times, the
median reported (min and max too). Both write their full outputs. Both sides keep
their compiled bytecode in ``WORKDIR/pycache`` (``PYTHONPYCACHEPREFIX``) after one
untimed warm-up run each, as an installed package has it; ``--no-bytecode-cache`` runs
them with the environment as it is (where ``PYTHONDONTWRITEBYTECODE`` is set, as on the
project's machine, every ``cofe score`` then compiles ~110 of cofe's own modules from
source: about 0.1 CPU s more per run; the reference compiles 5 small files).

The reference is timed in two settings, because its cost depends on them:

* ``pipeline``: its input folder as its own searcher leaves it, with
  ``parsed_files.json``: for every query neither the top 4 nor the 30 answer, it
  searches the whole corpus ("offline_hit"), rebuilding a ``TextNode`` per chunk;
* ``retrieved only``: without ``parsed_files.json`` (it logs an error and skips the
  offline check): only the 30 retrieved chunks are read, as cofe's pool scores are.

Parity, per query, between the reference's ``eval_results_detail.json`` and cofe's
score tables (``pool`` step): ``hit_score`` = ``KeywordRecall@4``; ``hit_by ==
"top_hit"`` = ``KeywordAccuracy@4``; ``hit_by in (top_hit, recall_hit)`` =
``KeywordAccuracy@30``; a query the reference skips (no fine or no coarse keyword) =
cofe's verdict ``unscorable``. The reference's ``offline_hit`` has no cofe
counterpart (its call passes the query string where the coarse keywords go, so any
chunk sharing one character with the query is searched) and is not compared.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

REFERENCE_REPO = "Alibaba-NLP/CoFE-RAG"
REFERENCE_COMMIT = "7c5ad8689ffd4cb8f7a39d7ebc3b791b090670f9"
# git blob SHA-1 of every reference file the benchmark runs (``git rev-parse COMMIT:PATH``)
REFERENCE_BLOBS = {
    "run_pipeline.py": "6219b1a51dd0f8280a9a9712635018fd942d795f",
    "utils.py": "60b1d3e81e78c924d426dc8b75962f02c3136172",
    "llms/SetLLM.py": "bc53f9ee16b4e72f6b33188f279df8f2aa850711",
    "eval_search/baseEval.py": "091476bbb9a4d128f890482d89541b07a8c83a23",
    "eval_search/scoredKeywordMatchEval.py": "43473d2d51bdb55c1ce520c5765cc8c5c965c3ee",
    "eval_search/utils.py": "9abc51d05d3c94d6b38c63c51ea848ca6260b215",
    "eval_search/config/keyword_match.json": "8885fc793f35dd64f97e7ac529666aa46bc21f2a",
}
RELEASE_BLOBS = {
    "datasets/docdata/rag_dataset_en.json": "5a284d73f1b3cab3f2f644fc8ff0b7b0f462f578",
    "datasets/docdata/rag_dataset_zh.json": "8376c7d6f9d9a22ef6b47b06de2e3ab69c302cad",
}
TOP_K = 4  # eval_search/config/keyword_match.json
CANDIDATES = 30
SETS = ("squad", "cmrc", "release-en", "release-zh", "others-en", "others-zh", "others-squad")
BUILDER_VERSION = 2  # bump when the input builder changes what it writes


# ---------------------------------------------------------------- the reference checkout


def git_blob_sha1(path: Path) -> str:
    data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def check_reference(ref: Path, files: dict[str, str] = REFERENCE_BLOBS) -> None:
    """Refuse a checkout whose files differ from the pinned commit's (the reference runs unpatched)."""
    bad = []
    for rel, blob in files.items():
        path = ref / rel
        if not path.is_file():
            bad.append(f"{rel}: missing")
        elif git_blob_sha1(path) != blob:
            bad.append(f"{rel}: differs from {REFERENCE_REPO}@{REFERENCE_COMMIT[:7]}")
    if bad:
        raise SystemExit(f"reference checkout {ref} is not the pinned one:\n  " + "\n  ".join(bad))


# ---------------------------------------------------------------- building the inputs


@dataclass
class Built:
    name: str
    folder: Path
    examples: list[dict]  # CoFE-release format, with "id"
    chunks: int
    short_pools: int  # pools BM25 filled with fewer than CANDIDATES chunks
    notes: list[str] = field(default_factory=list)

    @property
    def ref_pipeline(self) -> Path:
        return self.folder / "ref-pipeline"

    @property
    def ref_retrieved(self) -> Path:
        return self.folder / "ref-retrieved"

    @property
    def run_dir(self) -> Path:
        return self.folder / "cofe-run"

    @property
    def evalset(self) -> Path:
        return self.folder / "evalset.jsonl"


def _spread(n_items: int, n: int) -> list[int]:
    """``n`` indices spread evenly over ``range(n_items)`` (all of them when n >= n_items)."""
    if n >= n_items:
        return list(range(n_items))
    return [i * n_items // n for i in range(n)]


def _distinct(texts: list[str]) -> list[str]:
    seen: list[str] = []
    for t in texts:
        if t not in seen:
            seen.append(t)
    return seen


def _squad_like(set_name: str, n: int):
    """(examples, documents {source name: text}, chunks) from a shipped SQuAD-format file."""
    from cofe.evalset import keyword_alternatives
    from cofe.evalset.importers import import_squad
    from examples.build_squad_bm25 import DATA, chunk_documents

    file = {
        "squad": DATA / "squad" / "squad-v1.1-dev-part-b.json",
        "cmrc": DATA / "cmrc2018" / "cmrc2018-trial.json",
    }[set_name]
    imported = import_squad(file)
    samples = [imported.samples[i] for i in _spread(len(imported.samples), n)]
    examples = []
    for s in samples:
        # one point per distinct answer text (the annotators' spans), as CoFE's lists of points
        answers = _distinct(
            [a for point in s.fine_keywords for k in point for a in keyword_alternatives(k)]
        )
        examples.append(
            {
                "id": s.id,
                "query_type": "事实类" if set_name == "cmrc" else "Factual",
                "query": s.query,
                "reference_answer": s.reference_answer or "",
                "file_name": s.source.doc if s.source else "",
                "coarse_keywords": list(s.coarse_keywords),
                "fine_keywords": [[a] for a in answers],
            }
        )
    documents = dict(imported.documents)
    return examples, documents, chunk_documents(documents), len(imported.samples)


def _release(set_name: str, n: int, ref: Path):
    """The CoFE-RAG release's queries; the corpus is its reference answers, one chunk each."""
    from cofe import Chunk

    lang = set_name.split("-")[1]
    rel = f"datasets/docdata/rag_dataset_{lang}.json"
    check_reference(ref, {rel: RELEASE_BLOBS[rel]})
    raw = json.loads((ref / rel).read_text(encoding="utf-8"))["examples"]
    keep = list(range(min(n, len(raw))))  # the first n (the English release has 1,003)
    examples = []
    for i in keep:
        e = dict(raw[i])
        examples.append({"id": f"{set_name}-{i}", **e})
    documents: dict[str, str] = {}
    chunks = []
    for i, e in enumerate(raw):  # every answer of the release is in the corpus
        doc = f"answer-{i:04d}.txt"
        text = str(e.get("reference_answer") or "")
        documents[doc] = text
        chunks.append(
            Chunk(
                chunk_id=f"answer-{i:04d}#0",
                doc_id=f"answer-{i:04d}",
                text=text,
                start=0,
                end=len(text),
            )
        )
    for e in examples:
        # the run's documents are the answers, not the release's PDFs
        e["file_name"] = ""
    return examples, documents, chunks, len(raw)


def _answers_corpus(examples: list[dict]):
    """A corpus of the examples' own reference answers, one chunk each (chunk i: example i's)."""
    from cofe import Chunk

    documents: dict[str, str] = {}
    chunks = []
    for i, e in enumerate(examples):
        text = str(e.get("reference_answer") or "")
        documents[f"answer-{i:04d}.txt"] = text
        chunks.append(
            Chunk(
                chunk_id=f"answer-{i:04d}#0",
                doc_id=f"answer-{i:04d}",
                text=text,
                start=0,
                end=len(text),
            )
        )
        e["file_name"] = ""
    return documents, chunks


def build(set_name: str, n: int, workdir: Path, ref: Path | None = None) -> Built:
    """Write both inputs of one set under ``workdir/<set>-<n>`` (reused when already built)."""
    import bm25s
    from llama_index.core.schema import NodeWithScore, TextNode

    import cofe
    from cofe import Manifest, ParsedDocument, RankedChunk, RunWriter, SampleRecord, write_evalset
    from cofe.evalset import file_sha256
    from cofe.evalset.importers import import_cofe_rag
    from cofe.pipeline import BM25Retriever

    folder = workdir / f"{set_name}-{n}"
    stamp = folder / "built.json"
    settings = {"builder": BUILDER_VERSION, "set": set_name, "n": n, "candidates": CANDIDATES}
    if stamp.exists() and json.loads(stamp.read_text())["settings"] == settings:
        info = json.loads(stamp.read_text())
        examples = json.loads((folder / "cofe-format.json").read_text(encoding="utf-8"))["examples"]
        return Built(set_name, folder, examples, info["chunks"], info["short_pools"], info["notes"])
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)

    others = set_name.startswith("others-")
    if set_name in ("others-squad",):
        examples, _, _, available = _squad_like("squad", n)
        documents, chunks = _answers_corpus(examples)
    elif set_name.startswith(("release-", "others-")):
        if ref is None:
            raise SystemExit(
                f"{set_name} needs --reference (the release is in the reference checkout)"
            )
        examples, documents, chunks, available = _release(set_name, n, ref)
    else:
        examples, documents, chunks, available = _squad_like(set_name, n)
    notes = [f"{len(examples)} of {available} queries"]

    retriever = BM25Retriever()
    retriever.index(chunks, None)
    if others:
        # chunk i is query i's own answer: its pool is the 30 best of the *other* answers
        pools: list[list[tuple[int, float]]] = [
            [(j, sc) for j, sc in retriever.search(e["query"], CANDIDATES + 1) if j != i][
                :CANDIDATES
            ]
            for i, e in enumerate(examples)
        ]
    else:
        pools = [retriever.search(e["query"], CANDIDATES) for e in examples]
    short = sum(len(p) < CANDIDATES for p in pools)

    # the CoFE-RAG release format, and cofe's eval set imported from it
    cofe_format = folder / "cofe-format.json"
    cofe_format.write_text(
        json.dumps({"examples": examples}, ensure_ascii=False, indent=1), encoding="utf-8"
    )
    imported = import_cofe_rag(cofe_format)
    if len(imported.samples) != len(examples):
        notes.append(f"cofe's importer refused {len(examples) - len(imported.samples)} examples")
    write_evalset(folder / "evalset.jsonl", imported.samples)

    # the reference: its searcher's output folder
    def node(c) -> TextNode:
        return TextNode(id_=c.chunk_id, text=c.text, metadata={"file_name": f"{c.doc_id}.txt"})

    recall = []
    for e, pool in zip(examples, pools, strict=True):
        nodes = [
            NodeWithScore(node=node(chunks[i]), score=round(float(s), 4)).to_dict() for i, s in pool
        ]
        recall.append(
            {**e, "recall_results": {"response": None, "source_nodes": nodes, "metadata": None}}
        )
    for sub in ("ref-pipeline", "ref-retrieved"):
        (folder / sub).mkdir()
    (folder / "ref-pipeline" / "recall_results.json").write_text(
        json.dumps(recall, indent=2, ensure_ascii=False), encoding="utf-8"
    )
    os.link(
        folder / "ref-pipeline" / "recall_results.json",
        folder / "ref-retrieved" / "recall_results.json",
    )
    parsed = []
    for c in chunks:  # BaseSearcher.save_parsed_files
        d = node(c).to_dict()
        d.pop("embedding", None)
        parsed.append(d)
    (folder / "ref-pipeline" / "parsed_files.json").write_text(
        json.dumps(parsed, indent=2, ensure_ascii=False), encoding="utf-8"
    )

    # cofe: a run-log folder with the same 30 chunks per query
    run = folder / "cofe-run"
    writer = RunWriter(run)
    from datetime import UTC, datetime

    writer.start(
        Manifest(
            run_id=f"reference-speed-{set_name}-{n}",
            created_at=datetime(2026, 1, 1, tzinfo=UTC),
            pipeline={
                "chunker": "120-word / 200-CJK-character windows"
                if not set_name.startswith(("release", "others"))
                else "one chunk per reference answer",
                "retriever": "cofe BM25Retriever (bm25s)",
                "candidates": CANDIDATES,
                "top_k": TOP_K,
            },
            top_k=TOP_K,
            stages=["parse", "chunking", "retrieval"],
            evalset_sha256=file_sha256(folder / "evalset.jsonl"),
            versions={"cofe": cofe.__version__, "bm25s": bm25s.__version__},
        ),
        folder / "evalset.jsonl",
    )
    writer.add_documents(
        ParsedDocument(doc_id=Path(name).stem, source=name, text=text)
        for name, text in documents.items()
    )
    writer.add_chunks(chunks)
    writer.add_samples(
        SampleRecord(
            sample_id=s.id,
            pool=[
                RankedChunk(chunk_id=chunks[i].chunk_id, score=round(float(sc), 4))
                for i, sc in pool
            ],
            # the others-* sets record what the generator received: the pool's top 4
            context=[
                RankedChunk(chunk_id=chunks[i].chunk_id, score=round(float(sc), 4))
                for i, sc in pool[:TOP_K]
            ]
            if others
            else None,
        )
        for s, pool in zip(imported.samples, pools, strict=True)
    )
    if hasattr(writer, "close"):
        writer.close()
    info = {"settings": settings, "chunks": len(chunks), "short_pools": short, "notes": notes}
    stamp.write_text(json.dumps(info, indent=1))
    return Built(set_name, folder, examples, len(chunks), short, notes)


# ---------------------------------------------------------------- running both sides


# where both sides' child processes keep their bytecode (``main`` sets it; None: as the
# environment says -- with PYTHONDONTWRITEBYTECODE every run compiles cofe's modules again)
PYCACHE: Path | None = None


def _child_env(env: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if env is None else env)
    if PYCACHE is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    return env


def _cpu_of(
    cmd: list[str], cwd: Path, env: dict[str, str] | None = None
) -> tuple[float, float, str]:
    """(CPU s of the process and its children, wall s, stderr tail); raises on a non-zero exit."""
    env = _child_env(env)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    err = proc.stderr.decode("utf-8", "replace")
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{err[-3000:]}")
    return cpu, wall, err[-2000:]


def run_reference(ref: Path, input_folder: Path, scratch: Path) -> tuple[float, float, Path]:
    """``python run_pipeline.py CONFIG`` of the reference, unpatched; returns (cpu, wall, output folder)."""
    if scratch.exists():
        shutil.rmtree(scratch)
    (scratch / "datasets" / "bench").mkdir(parents=True)
    for rel in ("run_pipeline.py", "utils.py", "llms", "eval_search"):
        (scratch / rel).symlink_to(ref / rel)
    start = "searched"
    (scratch / "datasets" / "bench" / start).symlink_to(input_folder.resolve())
    config = {
        "description": "cofe benchmarks/reference_speed.py: the eval_search step of "
        "config/search_and_eval_search.json",
        "datasets": ["bench"],
        "start_point": start,
        "save_folder_prefix_list": ["operator", "config_name"],
        "start_prefix": "",
        "pipeline": [{"operator": "eval_search", "config_name": "keyword_match"}],
    }
    (scratch / "eval_search_only.json").write_text(json.dumps(config, indent=2))
    cpu, wall, _ = _cpu_of([sys.executable, "run_pipeline.py", "eval_search_only.json"], scratch)
    return cpu, wall, scratch / "datasets" / "bench" / "eval_search_keyword_match"


def cofe_command() -> tuple[list[str], dict[str, str]]:
    """The ``cofe`` console script next to this interpreter (else ``python -m cofe``), importing this tree."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    script = Path(sys.executable).parent / "cofe"
    if script.exists():
        return [str(script)], env
    found = shutil.which("cofe")
    return ([found] if found else [sys.executable, "-m", "cofe"]), env


def run_cofe(built: Built, out: Path) -> tuple[float, float]:
    if out.exists():
        shutil.rmtree(out)
    cmd, env = cofe_command()
    cmd = [
        *cmd,
        "score",
        str(built.run_dir),
        "--evalset",
        str(built.evalset),
        "--mode",
        "cofe-rag",
        "--candidates",
        str(CANDIDATES),
        "--out",
        str(out),
    ]
    cpu, wall, _ = _cpu_of(cmd, ROOT, env)
    return cpu, wall


# ---------------------------------------------------------------- parity


def reference_values(out_folder: Path) -> dict[str, dict]:
    detail = json.loads((out_folder / "eval_results_detail.json").read_text(encoding="utf-8"))
    return {
        e["id"]: {
            "hit_by": e["eval_results"]["hit_by"],
            "hit_score": e["eval_results"]["hit_score"],
        }
        for e in detail
    }


def cofe_values(out: Path) -> dict[str, dict]:
    import pandas as pd

    def table(stem: str) -> pd.DataFrame:
        for ext, reader in ((".parquet", pd.read_parquet), (".csv", pd.read_csv), (".jsonl", None)):
            path = out / f"{stem}{ext}"
            if path.exists():
                if reader is None:
                    return pd.read_json(path, lines=True)
                return (
                    reader(path)
                    if ext == ".parquet"
                    else reader(path, keep_default_na=False, dtype={"sample_id": str})
                )
        raise FileNotFoundError(f"no {stem} table in {out}")

    scores = table("scores")
    scores = scores[scores.step == "pool"]
    wanted = {f"KeywordRecall@{TOP_K}", f"KeywordAccuracy@{TOP_K}", f"KeywordAccuracy@{CANDIDATES}"}
    scores = scores[scores.measure.isin(wanted)]
    values: dict[str, dict] = {}
    for sid, measure, value in zip(scores.sample_id, scores.measure, scores.value, strict=True):
        values.setdefault(str(sid), {})[measure] = None if value in ("", None) else float(value)
    verdicts = table("verdicts")
    for sid, verdict in zip(verdicts.sample_id, verdicts.verdict, strict=True):
        values.setdefault(str(sid), {})["verdict"] = verdict
    return values


@dataclass
class Parity:
    queries: int
    skipped_agree: int = 0  # reference skipped, cofe unscorable
    compared: int = 0
    hit_score: int = 0
    top_hit: int = 0
    recall_hit: int = 0
    offline_hit: int = 0  # reference only: not compared
    disagreements: list[str] = field(default_factory=list)

    @property
    def all_agree(self) -> bool:
        return not self.disagreements


def parity(examples: list[dict], ref: dict[str, dict], ours: dict[str, dict]) -> Parity:
    p = Parity(queries=len(examples))
    for e in examples:
        sid = e["id"]
        mine = ours.get(sid, {})
        if sid not in ref:  # the reference skips a query without fine or coarse keywords
            if mine.get("verdict") == "unscorable":
                p.skipped_agree += 1
            else:
                p.disagreements.append(
                    f"{sid}: reference skips it, cofe's verdict is {mine.get('verdict')}"
                )
            continue
        p.compared += 1
        r = ref[sid]
        p.offline_hit += r["hit_by"] == "offline_hit"
        checks = (
            ("hit_score", r["hit_score"], mine.get(f"KeywordRecall@{TOP_K}")),
            ("top_hit", float(r["hit_by"] == "top_hit"), mine.get(f"KeywordAccuracy@{TOP_K}")),
            (
                "recall_hit",
                float(r["hit_by"] in ("top_hit", "recall_hit")),
                mine.get(f"KeywordAccuracy@{CANDIDATES}"),
            ),
        )
        for name, want, got in checks:
            if got is not None and abs(float(want) - got) < 1e-9:
                setattr(p, name, getattr(p, name) + 1)
            else:
                p.disagreements.append(
                    f"{sid}: {name} reference {want} cofe {got} (verdict {mine.get('verdict')})"
                )
    return p


# ---------------------------------------------------------------- main


def _fmt(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--reference",
        type=Path,
        required=True,
        help=f"checkout of {REFERENCE_REPO} at {REFERENCE_COMMIT}",
    )
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--workdir", type=Path, default=ROOT / "benchmarks" / "_work" / "reference_speed"
    )
    ap.add_argument(
        "--no-offline", action="store_true", help="skip the reference's 'pipeline' setting"
    )
    ap.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="run both sides with the environment as it is, without a warm-up run (with "
        "PYTHONDONTWRITEBYTECODE set, every run compiles cofe's own modules from source)",
    )
    ap.add_argument("--json", type=Path, help="write every figure here too")
    args = ap.parse_args(argv)
    global PYCACHE
    if not args.no_bytecode_cache:
        PYCACHE = args.workdir / "pycache"
    ref = args.reference.resolve()
    check_reference(ref)
    sets = [s for s in args.sets.split(",") if s]
    for s in sets:
        if s not in SETS:
            ap.error(f"unknown set {s!r} (choose from {', '.join(SETS)})")

    rows, report = [], {}
    for name in sets:
        t = time.perf_counter()
        built = build(name, args.queries, args.workdir, ref)
        print(
            f"[{name}] input: {'; '.join(built.notes)}, {built.chunks} chunks, "
            f"{built.short_pools} pools shorter than {CANDIDATES} ({time.perf_counter() - t:.1f} s)",
            file=sys.stderr,
            flush=True,
        )
        settings = [("retrieved only", built.ref_retrieved)]
        if not args.no_offline:
            settings.insert(0, ("pipeline", built.ref_pipeline))
        if PYCACHE is not None:  # untimed: both sides' bytecode compiled and cached once
            run_reference(ref, built.ref_retrieved, args.workdir / f"{name}-ref-warm-up")
            run_cofe(built, args.workdir / f"{name}-cofe-warm-up")
        timings: dict[str, list[float]] = {"cofe": [], **{s: [] for s, _ in settings}}
        walls: dict[str, list[float]] = {k: [] for k in timings}
        outs: dict[str, Path] = {}
        for rep in range(args.repeat):  # alternate the sides within each repetition
            for label, folder in settings:
                cpu, wall, outs[label] = run_reference(
                    ref, folder, args.workdir / f"{name}-ref-{label.split()[0]}"
                )
                timings[label].append(cpu)
                walls[label].append(wall)
            out = args.workdir / f"{name}-cofe-scores"
            cpu, wall = run_cofe(built, out)
            timings["cofe"].append(cpu)
            walls["cofe"].append(wall)
            print(
                f"[{name}] repetition {rep + 1}: "
                + ", ".join(f"{k} {v[-1]:.2f} CPU s" for k, v in timings.items()),
                file=sys.stderr,
                flush=True,
            )
        ours = cofe_values(args.workdir / f"{name}-cofe-scores")
        results = {
            label: parity(built.examples, reference_values(outs[label]), ours)
            for label, _ in settings
        }
        for label, _ in settings:
            rows.append((name, built, label, timings[label], timings["cofe"], results[label]))
        report[name] = {
            "queries": len(built.examples),
            "chunks": built.chunks,
            "short_pools": built.short_pools,
            "cpu_s": timings,
            "wall_s": walls,
            "parity": {
                k: {
                    **{
                        f: getattr(v, f)
                        for f in (
                            "queries",
                            "skipped_agree",
                            "compared",
                            "hit_score",
                            "top_hit",
                            "recall_hit",
                            "offline_hit",
                        )
                    },
                    "disagreements": v.disagreements,
                }
                for k, v in results.items()
            },
        }

    print(
        f"\nCPU seconds (user + system, process and children), median of {args.repeat}; "
        f"reference {REFERENCE_REPO}@{REFERENCE_COMMIT[:7]} eval_search (top_k {TOP_K}), "
        f"cofe `cofe score --mode cofe-rag` in a fresh process, start-up included\n"
    )
    print(
        "| set | queries × candidates | reference setting | reference CPU s | cofe CPU s | ratio |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for name, built, label, ref_t, cofe_t, _ in rows:
        ratio = statistics.median(ref_t) / statistics.median(cofe_t)
        print(
            f"| {name} | {len(built.examples):,} × {CANDIDATES} | {label} | {_fmt(ref_t)} "
            f"({min(ref_t):.2f}–{max(ref_t):.2f}) | {_fmt(cofe_t)} ({min(cofe_t):.2f}–{max(cofe_t):.2f}) "
            f"| {ratio:.1f}× |"
        )
    print("\nPer-query parity (queries agreeing with the reference on each of its scores)\n")
    print(
        "| set | reference setting | queries | skipped by the reference = cofe unscorable | scored | hit_score = KeywordRecall@4 | top_hit = KeywordAccuracy@4 | recall_hit = KeywordAccuracy@30 | offline_hit (not compared) | disagreements |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, _, label, _, _, p in rows:
        skipped = p.queries - p.compared
        print(
            f"| {name} | {label} | {p.queries} | {p.skipped_agree}/{skipped} | {p.compared} | "
            f"{p.hit_score}/{p.compared} | {p.top_hit}/{p.compared} | {p.recall_hit}/{p.compared} | "
            f"{p.offline_hit} | {len(p.disagreements)} |"
        )
    for name, _, label, _, _, p in rows:
        for line in p.disagreements[:50]:
            print(f"  {name} ({label}): {line}")
        if len(p.disagreements) > 50:
            print(f"  {name} ({label}): ... {len(p.disagreements) - 50} more")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False))
    return 0 if all(p.all_agree for *_, p in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
