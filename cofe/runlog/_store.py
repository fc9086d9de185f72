"""Reading and appending run directories."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from cofe._atomic import write_text_atomically
from cofe._errors import InputError, InputProblem
from cofe._jsonl import append_jsonl, read_jsonl
from cofe.runlog._compat import MIGRATIONS
from cofe.runlog._models import (
    RUNLOG_SCHEMA_VERSION,
    Chunk,
    Manifest,
    ParsedDocument,
    SampleRecord,
)

MANIFEST = "manifest.json"
EVALSET = "evalset.jsonl"
DOCUMENTS = "documents.jsonl"
CHUNKS = "chunks.jsonl"
SAMPLES = "samples.jsonl"
# the LLM judges' labels of a run's answers (cofe judge writes it, cofe score reads it): an
# artefact of the run folder, named here with the others
JUDGEMENTS = "judgements.jsonl"
# the judge's known-answer controls (cofe.judges._controls): judged with the run, read with it
JUDGE_CONTROLS = "judge_controls.jsonl"


@dataclass
class RunLog:
    """A run directory read into memory, with every problem met on the way."""

    path: Path
    manifest: Manifest
    documents: dict[str, ParsedDocument]
    chunks: dict[str, Chunk]
    records: dict[str, SampleRecord]
    problems: list[InputProblem] = field(default_factory=list)

    @property
    def evalset_path(self) -> Path:
        return self.path / EVALSET


def read_keyed(
    path: Path,
    model: type[BaseModel],
    key: str,
    problems: list[InputProblem],
    *,
    last_wins: bool,
    keep: Callable[[Any], Any] | None = None,
) -> dict[str, Any]:
    """Read a JSONL file into ``{record.key: record}``; duplicates become problems. ``keep``
    turns each record into what is stored (the scorer keeps a compact form)."""
    out: dict[str, Any] = {}
    lines: dict[str, int] = {}
    if not path.exists():
        return out
    for line, item in read_jsonl(path, model):
        if isinstance(item, InputProblem):
            problems.append(item)
            continue
        ident = getattr(item, key)
        if ident in out:
            kept = "this one is kept" if last_wins else "the first is kept"
            problems.append(
                InputProblem(
                    str(path),
                    line,
                    key,
                    f"duplicate {key} {ident!r} (also on line {lines[ident]}); {kept}",
                )
            )
            if not last_wins:
                continue
        out[ident] = item if keep is None else keep(item)
        lines[ident] = line
    return out


def read_manifest(run_dir: str | os.PathLike[str]) -> Manifest:
    """Read ``manifest.json``: a newer layout is refused, an older one migrated, an unknown
    field refused (free-form values belong under ``meta``)."""
    path = Path(run_dir) / MANIFEST
    file = str(path)
    if not path.exists():
        raise InputError(InputProblem(file, None, None, "no manifest.json: not a run directory"))
    try:
        raw = json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        line = getattr(error, "lineno", None)
        raise InputError(InputProblem(file, line, None, f"not valid JSON: {error}")) from None
    if not isinstance(raw, dict):
        raise InputError(
            InputProblem(file, None, None, f"a manifest is a JSON object, not {type(raw).__name__}")
        )
    version = raw.get("schema_version", RUNLOG_SCHEMA_VERSION)
    if isinstance(version, int) and not isinstance(version, bool):
        if version > RUNLOG_SCHEMA_VERSION:
            raise InputError(
                InputProblem(
                    file,
                    None,
                    "schema_version",
                    f"schema_version {version}: written by a newer cofe (this one reads up to "
                    f"{RUNLOG_SCHEMA_VERSION}); upgrade cofe to read this run",
                )
            )
        while version in MIGRATIONS and version < RUNLOG_SCHEMA_VERSION:
            raw = MIGRATIONS[version](raw)
            version += 1
    unknown = [name for name in raw if name not in Manifest.model_fields]
    if unknown:
        more = f" (and {len(unknown) - 1} more unknown field(s))" if len(unknown) > 1 else ""
        raise InputError(
            InputProblem(
                file,
                None,
                unknown[0],
                f'unknown manifest field{more}; free-form values go under "meta"',
            )
        )
    try:
        return Manifest.model_validate(raw)
    except ValidationError as error:
        raise InputError(InputProblem.from_validation(file, None, error)) from None


def read_corpus(run_dir: str | os.PathLike[str]) -> RunLog:
    """A run directory without its sample records (``records`` left empty): the manifest,
    the parsed documents and the chunks, with every problem met reading them."""
    root = Path(run_dir)
    manifest = read_manifest(root)
    problems: list[InputProblem] = []
    documents = read_keyed(root / DOCUMENTS, ParsedDocument, "doc_id", problems, last_wins=False)
    chunks = read_keyed(root / CHUNKS, Chunk, "chunk_id", problems, last_wins=False)
    return RunLog(root, manifest, documents, chunks, {}, problems)


def read_run(run_dir: str | os.PathLike[str]) -> RunLog:
    """Read a run directory. Only a missing, broken or too new manifest is fatal."""
    log = read_corpus(run_dir)
    # a resumed run may append a sample again: the newest record is the one that counts
    log.records = read_keyed(
        log.path / SAMPLES, SampleRecord, "sample_id", log.problems, last_wins=True
    )
    return log


class RunWriter:
    """Appends to a run directory; safe to reopen after a crash (see ``done``)."""

    def __init__(self, run_dir: str | os.PathLike[str]) -> None:
        self.path = Path(run_dir)

    def start(self, manifest: Manifest, evalset_file: str | os.PathLike[str] | None = None) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        write_text_atomically(self.path / MANIFEST, manifest.model_dump_json(indent=2) + "\n")
        if (
            evalset_file is not None
            and Path(evalset_file).resolve() != (self.path / EVALSET).resolve()
        ):
            shutil.copyfile(evalset_file, self.path / EVALSET)

    def add_documents(self, documents: Iterable[ParsedDocument]) -> int:
        return append_jsonl(self.path / DOCUMENTS, documents)

    def add_chunks(self, chunks: Iterable[Chunk]) -> int:
        return append_jsonl(self.path / CHUNKS, chunks)

    def add_samples(self, records: Iterable[SampleRecord]) -> int:
        return append_jsonl(self.path / SAMPLES, records)

    def done(self) -> set[str]:
        """Ids of samples already recorded (a torn last line does not count)."""
        path = self.path / SAMPLES
        if not path.exists():
            return set()
        done: set[str] = set()
        for _, item in read_jsonl(path, SampleRecord):
            if isinstance(item, SampleRecord):
                done.add(item.sample_id)
        return done
