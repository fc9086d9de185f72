"""Reading and appending run directories."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from cofe._errors import InputError, InputProblem
from cofe._jsonl import append_jsonl, read_jsonl
from cofe.runlog._models import Chunk, Manifest, ParsedDocument, SampleRecord

MANIFEST = "manifest.json"
EVALSET = "evalset.jsonl"
DOCUMENTS = "documents.jsonl"
CHUNKS = "chunks.jsonl"
SAMPLES = "samples.jsonl"


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


def _read_keyed(
    path: Path, model: type, key: str, problems: list[InputProblem], *, last_wins: bool
) -> dict:
    """Read a JSONL file into ``{record.key: record}``; duplicates become problems."""
    out: dict = {}
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
        out[ident] = item
        lines[ident] = line
    return out


def read_manifest(run_dir: str | os.PathLike[str]) -> Manifest:
    path = Path(run_dir) / MANIFEST
    if not path.exists():
        raise InputError(
            InputProblem(str(path), None, None, "no manifest.json: not a run directory")
        )
    try:
        return Manifest.model_validate_json(path.read_bytes())
    except ValidationError as error:
        raise InputError(InputProblem.from_validation(str(path), None, error)) from None


def read_run(run_dir: str | os.PathLike[str]) -> RunLog:
    """Read a run directory. Only a missing or broken manifest is fatal."""
    root = Path(run_dir)
    manifest = read_manifest(root)
    problems: list[InputProblem] = []
    documents = _read_keyed(root / DOCUMENTS, ParsedDocument, "doc_id", problems, last_wins=False)
    chunks = _read_keyed(root / CHUNKS, Chunk, "chunk_id", problems, last_wins=False)
    # a resumed run may append a sample again: the newest record is the one that counts
    records = _read_keyed(root / SAMPLES, SampleRecord, "sample_id", problems, last_wins=True)
    return RunLog(root, manifest, documents, chunks, records, problems)


class RunWriter:
    """Appends to a run directory; safe to reopen after a crash (see ``done``)."""

    def __init__(self, run_dir: str | os.PathLike[str]) -> None:
        self.path = Path(run_dir)

    def start(self, manifest: Manifest, evalset_file: str | os.PathLike[str] | None = None) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        target = self.path / MANIFEST
        tmp = target.with_suffix(".json.tmp")
        tmp.write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, target)
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
