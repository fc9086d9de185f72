"""Drive a pipeline over an eval set into a run directory, resumably.

Order of writes (each atomic or append-only):

1. ``documents.jsonl`` and ``chunks.jsonl`` (atomic renames), then
   ``manifest.json`` -- so a manifest means the corpus is complete;
2. ``samples.jsonl``, appended in small fsync'ed batches as samples finish.

Running the same command again after a crash checks that the pipeline and
eval set are unchanged, rebuilds the pipeline's state (from the cache: no
re-parsing or re-embedding) and answers only the samples not yet recorded,
so every sample ends up in the run exactly once.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sys
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from cofe._cache import Cache
from cofe._errors import ConfigurationError, InputError, InputProblem
from cofe._jsonl import read_jsonl, write_jsonl
from cofe._parallel import thread_map
from cofe._version import __version__
from cofe.adapters import (
    ChunkRegistry,
    Pipeline,
    RecordDraft,
    UnsupportedFrameworkPipeline,
    pipeline_shape,
)
from cofe.evalset import EvalSample, file_sha256, read_evalset
from cofe.results import SUMMARY
from cofe.runlog import (
    CHUNKS,
    DOCUMENTS,
    EVALSET,
    JUDGE_CONTROLS,
    JUDGEMENTS,
    LOCK,
    MANIFEST,
    RUNLOG_SCHEMA_VERSION,
    SAMPLES,
    Chunk,
    Manifest,
    ParsedDocument,
    RunWriter,
    SampleRecord,
    Stage,
    StageError,
    read_manifest,
    run_folder_lock,
)

FLUSH_EVERY_SECONDS = 0.5
_RUN_FILES = (MANIFEST, DOCUMENTS, CHUNKS, SAMPLES, EVALSET, JUDGEMENTS, JUDGE_CONTROLS)
FLUSH_EVERY_RECORDS = 64
_VERSIONED = (
    "llama-index-core",
    "unstructured",
    "bm25s",
    "sentence-transformers",
    "torch",
    "openai",
    # frameworks recorded through their spans (OpenInferencePipeline)
    "langchain-core",
    "langgraph",
    "haystack-ai",
    "dspy",
)


@dataclass
class RunReport:
    """What a call of :func:`run_pipeline` did."""

    run_dir: Path
    samples: int
    answered: int
    already_done: int
    resumed: bool
    documents: int
    chunks: int
    parse_problems: list[InputProblem] = field(default_factory=list)
    evalset_problems: list[InputProblem] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    seconds: dict[str, float] = field(default_factory=dict)  # build, parse, prepare, answer, total
    prepare_parts: dict[str, float] = field(default_factory=dict)  # the pipeline's own timings
    warnings: list[str] = field(default_factory=list)  # said before the first question too
    measured: str | None = None  # what the documents are, when not what the app parsed

    def summary(self) -> str:
        lines = [
            f"run: {self.run_dir}",
            f"  documents {self.documents}, chunks {self.chunks}, samples {self.samples}"
            + (f" ({self.already_done} already recorded, resumed)" if self.resumed else ""),
            f"  answered now {self.answered}"
            + (
                "; errors: " + ", ".join(f"{s} {n}" for s, n in sorted(self.errors.items()))
                if self.errors
                else ""
            ),
            "  time: " + ", ".join(self._timed(k, v) for k, v in self.seconds.items()),
        ]
        if self.measured:
            lines.append(f"  measured: {self.measured}")
        for warning in self.warnings:
            lines.append(f"  warning: {warning}")
        for problem in self.parse_problems:
            lines.append(f"  parse problem: {problem}")
        if self.evalset_problems:
            lines.append(
                f"  {len(self.evalset_problems)} eval-set record(s) skipped, first: "
                f"{self.evalset_problems[0]}"
            )
        return "\n".join(lines)

    def _timed(self, part: str, seconds: float) -> str:
        text = f"{part} {seconds:.1f}s"
        if part == "prepare" and self.prepare_parts:
            text += " (" + ", ".join(f"{k} {v:.1f}s" for k, v in self.prepare_parts.items()) + ")"
        return text


def package_versions() -> dict[str, str]:
    versions = {"cofe": __version__}
    for name in _VERSIONED:
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[name] = metadata.version(name)
    return versions


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _check_resumable(out: Path, manifest: Manifest) -> None:
    """Refuse to add samples to a run made by another pipeline, eval set or run-log layout."""
    old = read_manifest(out)
    manifest_file = str(out / MANIFEST)
    if old.schema_version != RUNLOG_SCHEMA_VERSION:
        raise InputError(
            InputProblem(
                manifest_file,
                None,
                "schema_version",
                f"this run was written by an older cofe (run-log schema {old.schema_version}, now "
                f"{RUNLOG_SCHEMA_VERSION}) and records differ; choose another --out or pass --fresh",
            )
        )
    if old.evalset_sha256 != manifest.evalset_sha256:
        raise InputError(
            InputProblem(
                manifest_file,
                None,
                "evalset_sha256",
                "this run answered a different eval set; choose another --out or pass --fresh",
            )
        )
    if _canonical(old.pipeline) != _canonical(manifest.pipeline):
        changed = sorted(
            k
            for k in set(old.pipeline) | set(manifest.pipeline)
            if _canonical(old.pipeline.get(k)) != _canonical(manifest.pipeline.get(k))
        )
        raise InputError(
            InputProblem(
                manifest_file,
                None,
                "pipeline",
                f"this run used another pipeline configuration (differs in: {', '.join(changed)}); "
                "choose another --out or pass --fresh",
            )
        )
    for name in ("top_k", "stages"):
        was, now = getattr(old, name), getattr(manifest, name)
        if was != now:
            raise InputError(
                InputProblem(
                    manifest_file,
                    None,
                    name,
                    f"this run recorded {name} {_canonical(was)}, the pipeline now gives "
                    f"{_canonical(now)}; choose another --out or pass --fresh",
                )
            )


def _written_by_cofe(out: Path) -> bool:
    return (out / MANIFEST).exists() or (out / LOCK).exists()


def _check_out_folder(out: Path, evalset: Path, fresh: bool) -> None:
    """Never overwrite or delete what cofe did not write: a folder without cofe's manifest
    or lock file is the user's, and may only receive a new run beside their files."""
    if not out.exists() or _written_by_cofe(out):
        return
    if not out.is_dir():
        raise InputError(InputProblem(str(out), None, None, "is a file, not a run folder"))
    if fresh:
        raise InputError(
            InputProblem(
                str(out),
                None,
                None,
                "--fresh deletes a run cofe wrote, and this folder holds none (no manifest.json); "
                "choose a new folder",
            )
        )
    taken = sorted(
        name
        for name in _RUN_FILES
        if (out / name).exists() and not (name == EVALSET and _same_file(out / name, evalset))
    )
    if taken:
        raise InputError(
            InputProblem(
                str(out),
                None,
                None,
                f"holds {', '.join(taken)}, which cofe did not write and a run would overwrite; "
                "choose a new folder",
            )
        )


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False


def _clear(out: Path, evalset: Path) -> None:
    """Remove a previous run: cofe's own files and scorings, never the eval set being run."""
    for name in _RUN_FILES:
        path = out / name
        if not (name == EVALSET and _same_file(path, evalset)):
            path.unlink(missing_ok=True)
    for folder in out.glob("scores*"):
        if folder.is_dir() and ((folder / SUMMARY).exists() or (folder / "scores.csv").exists()):
            shutil.rmtree(folder)


def _no_documents(problems: list[InputProblem]) -> str:
    """Why --docs gave no document: an empty folder, no supported file, or each one's reason."""
    from cofe.pipeline import SUPPORTED_SUFFIXES

    if not problems:
        return "the folder holds no file (hidden files are skipped): nothing to parse"
    if all("unsupported file type" in p.message for p in problems):
        return (
            f"no supported file among its {len(problems)} file(s) (supported: "
            f"{' '.join(SUPPORTED_SUFFIXES)})"
        )
    return f"no document could be parsed ({len(problems)} problem(s))" + "".join(
        f"\n  {p}" for p in problems
    )


def documents_note(
    pipeline: Any, documents: list[ParsedDocument], chunks: list[Any], parsed_by_cofe: bool
) -> str | None:
    """What was and was not measured at parse, when the run's documents are not the text the
    app's own loader produced (None: they are, or the pipeline is cofe's own)."""
    if documents and all(d.meta.get("rebuilt_from_chunks") for d in documents):
        return (
            "the documents were rebuilt from the pipeline's chunks (no --docs, no documents=): "
            "parsing is not measured -- nothing the app's loader lost can show; a point in no "
            "chunk is not_in_corpus (parsing and chunking not told apart). Pass documents= "
            "(the loader's output) to measure it"
        )
    if parsed_by_cofe and hasattr(pipeline, "documents"):  # a framework app with its loader
        placed = sum(1 for c in chunks if getattr(c, "start", None) is not None)
        return (
            "the documents are --docs as cofe's parser reads them, not the app's loader's "
            "text: the parse step measures cofe's parser, and the app's chunks were placed in "
            f"that text by their own text ({placed} of {len(chunks)} found; the others have "
            "no offsets, so a dropped stretch cannot be told from a cut). Pass documents= "
            "(the loader's output) to measure the app's own parsing"
        )
    return None


def _fingerprints(documents: list[ParsedDocument]) -> dict[str, str]:
    return {
        d.doc_id: hashlib.sha256(d.text.encode("utf-8", "replace")).hexdigest() for d in documents
    }


def _check_documents_unchanged(out: Path, recorded: dict[str, str], now: dict[str, str]) -> None:
    """A resumed run must answer over the corpus it started with: chunk ids are positions
    (``doc#3``), so an edited document would silently mix old and new chunks."""
    if not recorded or recorded == now:
        return  # an older run without fingerprints is checked by its chunk ids only
    changed = sorted(d for d in recorded.keys() & now.keys() if recorded[d] != now[d])
    added = sorted(now.keys() - recorded.keys())
    removed = sorted(recorded.keys() - now.keys())
    parts = [
        f"{label}: {', '.join(ids[:5])}" + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
        for label, ids in (("changed", changed), ("new", added), ("gone", removed))
        if ids
    ]
    # any change alters every retrieval (term statistics, competing chunks): no partial reuse
    raise InputError(
        InputProblem(
            str(out / MANIFEST),
            None,
            "document_sha256",
            f"the documents differ from those this run started with ({'; '.join(parts)}); "
            "pass --fresh to run again over the new documents, or choose another --out",
        )
    )


def _answer(pipeline: Pipeline, sample: EvalSample) -> SampleRecord:
    try:
        trace = pipeline.answer(sample.query)
    except UnsupportedFrameworkPipeline:
        raise  # a pipeline that cannot be recorded stops the run, saying why
    except Exception as error:  # a broken adapter fails one sample, not the run
        trace = RecordDraft(
            error=StageError(
                stage=Stage.RETRIEVAL,
                type=type(error).__name__,
                message=f"the pipeline raised outside any recorded stage: {error}"[:2000],
                traceback=traceback.format_exc(limit=20),
            )
        )
    return trace.record(sample.id)


def run_pipeline(
    pipeline: Pipeline,
    evalset: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    documents: list[ParsedDocument] | None = None,
    docs: str | os.PathLike[str] | None = None,
    cache: Cache | None = None,
    concurrency: int = 4,
    fresh: bool = False,
    progress: bool | None = None,
    run_id: str | None = None,
    use_async: bool = False,
    build_seconds: float | None = None,
) -> RunReport:
    """Answer every sample of ``evalset`` with ``pipeline`` and record the run in ``out``.

    The corpus is ``documents`` (already parsed), or the files under ``docs``
    parsed with unstructured, or whatever the pipeline indexed itself (a
    LlamaIndex index). Safe to call again after a crash: see the module doc.
    ``use_async``: drive the pipeline's async path on one asyncio event loop
    (``concurrency`` queries at a time) instead of a thread pool -- for async
    engines (a LlamaIndex engine's ``aquery``). ``build_seconds``: how long building the
    pipeline took before this call (``cofe run`` measures it), shown and counted in the total.
    """
    if concurrency < 1:
        raise InputError(f"concurrency must be at least 1, not {concurrency}")
    if use_async and not callable(getattr(pipeline, "answer_all_async", None)):
        raise ConfigurationError(
            f"{type(pipeline).__name__} has no async path (answer_all_async); "
            "run it without use_async"
        )
    out = Path(out)
    progress = sys.stderr.isatty() if progress is None else progress
    timings: dict[str, float] = {}
    started = time.perf_counter()
    if build_seconds is not None:
        timings["build"] = build_seconds

    evalset_path = Path(evalset)
    evalset_sha = file_sha256(evalset_path)
    eval_data = read_evalset(evalset_path)
    if not eval_data.samples:
        raise InputError(
            InputProblem(
                str(evalset_path),
                None,
                None,
                "no valid sample"
                + (f"; first problem: {eval_data.problems[0]}" if eval_data.problems else ""),
            )
        )
    check_sources = getattr(pipeline, "check_sources", None)
    if callable(check_sources):  # documents matching none of the eval set's sources, or a
        # corpus that cannot be read, refused before the first query (a ValueError naming them)
        check_sources([s.source.doc for s in eval_data.samples if s.source])
    run_warnings = _query_warnings(pipeline, eval_data.samples)
    config = pipeline.describe()
    shape = pipeline_shape(pipeline, config)
    # a pipeline whose store cannot be listed says why: the corpus step is then not judged
    partial = getattr(pipeline, "corpus_partial", None)
    manifest = Manifest(
        run_id=run_id or f"{config.get('name', 'run')}-{time.strftime('%Y%m%dT%H%M%S')}",
        pipeline=config,
        evalset_sha256=evalset_sha,
        versions=package_versions(),
        top_k=shape.top_k,
        stages=list(shape.stages) if shape.stages is not None else None,
        corpus="partial" if isinstance(partial, str) else "whole",
    )

    _check_out_folder(out, evalset_path, fresh)
    created = not out.exists()
    marked = os.path.lexists(out / LOCK)
    with run_folder_lock(out, purpose="cofe run"), _unmarked_on_failure(out, created, marked):
        resumed = (out / MANIFEST).exists() and not fresh
        if resumed:
            _check_resumable(out, manifest)
        elif fresh:
            _clear(out, evalset_path)

        parse_problems: list[InputProblem] = []
        if documents is None and docs is not None:
            from cofe.pipeline import parse_documents

            parsed = parse_documents(docs, cache=cache, progress=progress)
            documents, parse_problems = parsed.documents, parsed.problems
            timings["parse"] = parsed.seconds
            if not documents:
                raise InputError(InputProblem(str(docs), None, None, _no_documents(parse_problems)))
        parsed_by_cofe = documents is not None  # --docs (or a sweep's) parsed by cofe
        if documents is None:
            documents = getattr(pipeline, "documents", None) or []
        fingerprints = _fingerprints(documents)
        if resumed:
            _check_documents_unchanged(out, read_manifest(out).document_sha256, fingerprints)

        t = time.perf_counter()
        registry = pipeline.prepare(documents, cache)
        timings["prepare"] = time.perf_counter() - t
        prepare_parts = getattr(pipeline, "timings", None)
        measured = documents_note(pipeline, documents, registry.chunks, parsed_by_cofe)

        writer = RunWriter(out)
        if resumed:
            recorded = _recorded_chunk_ids(out)
            current = {c.chunk_id for c in registry.chunks}
            if not current <= recorded:
                raise InputError(
                    InputProblem(
                        str(out / CHUNKS),
                        None,
                        "chunk_id",
                        f"{len(current - recorded)} chunk(s) of the pipeline are not in the recorded run: "
                        "the corpus or chunking changed; choose another --out or pass --fresh",
                    )
                )
        else:
            out.mkdir(parents=True, exist_ok=True)
            write_jsonl(out / DOCUMENTS, documents)
            write_jsonl(out / CHUNKS, registry.chunks)
            registry.take_new()  # written just above: not to be appended again by the first flush
            meta: dict[str, Any] = {"parse_problems": [str(p) for p in parse_problems]}
            if isinstance(partial, str):
                meta["corpus_partial"] = partial
            if run_warnings:
                meta["warnings"] = run_warnings
            if measured:  # what the documents are, and so what the parse step can say
                meta["documents"] = measured
            update = {"meta": meta, "document_sha256": fingerprints}
            writer.start(manifest.model_copy(update=update), evalset_path)

        done = writer.done()
        todo = [s for s in eval_data.samples if s.id not in done]
        already = len(eval_data.samples) - len(todo)
        errors: Counter[str] = Counter()
        t = time.perf_counter()
        _answer_all(pipeline, todo, writer, registry, concurrency, progress, errors, use_async)
        timings["answer"] = time.perf_counter() - t
        total = time.perf_counter() - started + (build_seconds or 0.0)
        other = total - sum(timings.values())
        if other >= 0.05:  # reading and checking the eval set, writing the corpus, ...
            timings["other"] = other
        timings["total"] = total
        return RunReport(
            run_dir=out,
            samples=len(eval_data.samples),
            answered=len(todo),
            already_done=already,
            resumed=resumed,
            documents=len(documents),
            chunks=len(registry.chunks),
            parse_problems=parse_problems,
            evalset_problems=eval_data.problems,
            errors=errors,
            seconds={k: round(v, 2) for k, v in timings.items()},
            prepare_parts=(
                {k: round(float(v), 2) for k, v in prepare_parts.items()}
                if isinstance(prepare_parts, dict)
                else {}
            ),
            warnings=run_warnings,
            measured=measured,
        )


def _query_warnings(pipeline: Pipeline, samples: list[EvalSample]) -> list[str]:
    """What the pipeline says against these questions (an embedding model that does not
    read their language), each said at once as a warning and kept for the manifest."""
    check_queries = getattr(pipeline, "check_queries", None)
    if not callable(check_queries):
        return []
    found = [str(w) for w in check_queries([s.query for s in samples])]
    for warning in found:
        warnings.warn(warning, UserWarning, stacklevel=2)
    return found


@contextlib.contextmanager
def _unmarked_on_failure(out: Path, created: bool, marked: bool) -> Iterator[None]:
    """A run that fails before writing anything (no document parsed, a pipeline that cannot
    prepare) leaves no lock file, nor the folder it created: nothing of cofe's is there.
    Runs inside the lock, so the file goes before another process can take it."""
    try:
        yield
    except BaseException:
        if not marked and not (out / MANIFEST).exists():
            with contextlib.suppress(OSError):
                (out / LOCK).unlink()
                if created:
                    out.rmdir()  # only when empty: nothing of anyone's is removed
        raise


def _recorded_chunk_ids(out: Path) -> set[str]:
    return {item.chunk_id for _, item in read_jsonl(out / CHUNKS, Chunk) if isinstance(item, Chunk)}


def _answer_all(
    pipeline: Pipeline,
    todo: list[EvalSample],
    writer: RunWriter,
    registry: ChunkRegistry,
    concurrency: int,
    progress: bool,
    errors: Counter[str],
    use_async: bool,
) -> None:
    pending: list[SampleRecord] = []
    last_flush = time.monotonic()

    def flush() -> None:
        nonlocal last_flush
        new_chunks = registry.take_new()
        if new_chunks:  # chunks first: a sample never names a chunk the run does not hold
            writer.add_chunks(new_chunks)
        if pending:
            writer.add_samples(pending)
            pending.clear()
        last_flush = time.monotonic()

    def collect(record: SampleRecord) -> None:
        if record.error is not None:
            errors[record.error.stage.value] += 1
        pending.append(record)
        if (
            len(pending) >= FLUSH_EVERY_RECORDS
            or time.monotonic() - last_flush >= FLUSH_EVERY_SECONDS
        ):
            flush()

    # a pipeline recorded through instrumentation installs it once for all the queries, and
    # removes it after them (OpenInferencePipeline.recording)
    recording = getattr(pipeline, "recording", None)
    session = recording() if callable(recording) and todo else contextlib.nullcontext()
    try:
        with session:
            if use_async:
                _answer_all_async(pipeline, todo, collect, concurrency, progress)
            else:
                thread_map(
                    lambda sample: _answer(pipeline, sample),
                    todo,
                    collect,
                    concurrency=concurrency,
                    progress=("answering", "q") if progress else None,
                    name="cofe-run",
                )
    finally:
        flush()  # what was answered before an interrupt is kept


def _answer_all_async(
    pipeline: Any,
    todo: list[EvalSample],
    collect: Callable[[SampleRecord], None],
    concurrency: int,
    progress: bool,
) -> None:
    """The pipeline's own event loop answers; each trace is recorded as it finishes."""
    from tqdm import tqdm

    with tqdm(total=len(todo), desc="answering", unit="q", disable=not progress) as bar:

        def on_trace(index: int, trace: RecordDraft) -> None:
            collect(trace.record(todo[index].id))
            bar.update()

        pipeline.answer_all_async([s.query for s in todo], concurrency, on_trace)
