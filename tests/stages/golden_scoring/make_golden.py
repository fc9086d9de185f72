"""The scorer's whole output on fixed inputs of both pool shapes, kept to hold speed work to it.

    python tests/stages/golden_scoring/make_golden.py      # rewrites golden.json beside it

Inputs, built from the shipped SQuAD dev part (no retriever library: a pool is ranked by
how many of the question's words a chunk holds, ties in corpus order), 40 questions spread
over the 5,609:

* ``own``: 120-word windows of the questions' articles; the pool is the 30 best windows
  (the answer's window is usually among them) -- the shape of ``benchmarks/squad_bm25.py``;
* ``others``: a corpus of the 40 questions' reference answers, one chunk each; each pool is
  the 30 best *other* answers (its own left out) and its context the pool's top 4 -- the
  shape of ``benchmarks/score_speed.py``'s ``others-*`` sets, where nearly every keyword is
  missed and its loss explained.

Each is scored by ``score_to_folder`` in cofe-rag and in strict mode. The golden file holds
the SHA-256 of every file of each results folder (the temporary folder's path written as
``<TMP>``). Only a deliberate change of what the scorer writes rewrites it;
tests/stages/test_golden_scoring.py checks the scorer against it.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import tempfile
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cofe.evalset.importers import ImportResult

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = Path(__file__).resolve().parent / "golden.json"
N = 40
POOL, TOP_K, WINDOW = 30, 4, 120
SHAPES = ("own", "others")
MODES = ("cofe-rag", "strict")


def _pool(query_words: set[str], chunk_words: list[set[str]], leave_out: int = -1) -> list[int]:
    order = sorted(
        (u for u in range(len(chunk_words)) if u != leave_out),
        key=lambda u: (-len(query_words & chunk_words[u]), u),
    )
    return order[:POOL]


@cache
def _squad() -> ImportResult:
    from cofe.evalset.importers import import_squad

    return import_squad(ROOT / "cofe" / "_data" / "squad" / "squad-v1.1-dev-part-b.json")


def build(shape: str, folder: Path) -> Path:
    """A run-log folder (and its eval set) of one shape under ``folder``; returns the run."""
    from cofe import (
        Chunk,
        Manifest,
        ParsedDocument,
        RankedChunk,
        RunWriter,
        SampleRecord,
        write_evalset,
    )
    from cofe.evalset import file_sha256
    from cofe.matching import strict_tokens

    imported = _squad()
    total = len(imported.samples)
    samples = [imported.samples[i * total // N] for i in range(N)]
    if shape == "own":
        names = sorted({s.source.doc for s in samples if s.source})
        documents = {name: imported.documents[name] for name in names}
        chunks = []
        for name, text in documents.items():
            doc_id = Path(name).stem
            words = [m.span() for m in re.finditer(r"\S+", text)]
            for i in range(0, len(words), WINDOW):
                start, end = words[i][0], words[min(i + WINDOW, len(words)) - 1][1]
                chunks.append(
                    Chunk(
                        chunk_id=f"{doc_id}#{i // WINDOW}",
                        doc_id=doc_id,
                        text=text[start:end],
                        start=start,
                        end=end,
                    )
                )
    else:
        documents, chunks = {}, []
        for i, s in enumerate(samples):
            text = s.reference_answer or ""
            documents[f"answer-{i:02d}.txt"] = text
            chunks.append(
                Chunk(
                    chunk_id=f"answer-{i:02d}#0",
                    doc_id=f"answer-{i:02d}",
                    text=text,
                    start=0,
                    end=len(text),
                )
            )
        # the source documents are not in this run: the samples name none
        samples = [s.model_copy(update={"source": None}) for s in samples]
    words = [set(strict_tokens(c.text)) for c in chunks]
    folder.mkdir(parents=True, exist_ok=True)
    evalset = folder / "evalset.jsonl"
    write_evalset(evalset, samples)
    run = folder / "run"
    writer = RunWriter(run)
    writer.start(
        Manifest(
            run_id=f"golden-{shape}",
            created_at=datetime(2026, 1, 1, tzinfo=UTC),
            pipeline={"pool": POOL, "top_k": TOP_K},
            top_k=TOP_K,
            stages=["parse", "chunking", "retrieval"],
            evalset_sha256=file_sha256(evalset),
        ),
        evalset,
    )
    writer.add_documents(
        ParsedDocument(doc_id=Path(name).stem, source=name, text=text)
        for name, text in documents.items()
    )
    writer.add_chunks(chunks)
    records = []
    for i, s in enumerate(samples):
        query = set(strict_tokens(s.query))
        pool = _pool(query, words, i if shape == "others" else -1)
        ranked = [
            RankedChunk(chunk_id=chunks[u].chunk_id, score=float(POOL - r))
            for r, u in enumerate(pool)
        ]
        records.append(
            SampleRecord(
                sample_id=s.id, pool=ranked, context=ranked[:TOP_K] if shape == "others" else None
            )
        )
    writer.add_samples(records)
    if hasattr(writer, "close"):
        writer.close()
    return run


def digests(folder: Path, tmp: Path) -> dict[str, str]:
    out = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes().replace(str(tmp).encode(), b"<TMP>")
        out[str(path.relative_to(folder))] = hashlib.sha256(data).hexdigest()
    return out


def outputs(tmp: Path) -> dict[str, dict[str, str]]:
    """Per case ("shape mode"), the SHA-256 of each file of its results folder."""
    if str(ROOT) not in sys.path:  # last: a tree named by PYTHONPATH is the one scored
        sys.path.append(str(ROOT))
    from cofe import ScoreConfig
    from cofe.matching import MatchMode
    from cofe.stages import score_to_folder

    found = {}
    for shape in SHAPES:
        run = build(shape, tmp / shape)
        for mode in MODES:
            out = tmp / f"{shape}-{mode}"
            score_to_folder(
                run,
                tmp / shape / "evalset.jsonl",
                ScoreConfig(mode=MatchMode(mode), candidates=POOL),
                out=out,
                workers=1,
            )
            found[f"{shape} {mode}"] = digests(out, tmp)
    return found


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        GOLDEN.write_text(json.dumps(outputs(Path(tmp)), indent=1, sort_keys=True) + "\n")
    import cofe

    print(f"wrote {GOLDEN} with the scorer of {Path(cofe.__file__).parent}")
