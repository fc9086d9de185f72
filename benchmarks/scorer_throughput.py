"""Scorer throughput and peak memory on synthetic runs, scored from disk as `cofe score` does.

    python benchmarks/scorer_throughput.py                    # 10k and 100k samples x 30
    python benchmarks/scorer_throughput.py 10000              # one size
    python benchmarks/scorer_throughput.py --docs 10000 100000 1000000   # one corpus for all

For each size one process writes a synthetic run (``benchmarks/_synthetic.py``,
streamed to disk) to a temporary run directory; a fresh process then times
what ``cofe score`` does on it (``score_to_folder``: indexing the records,
the corpus pass, scoring a batch at a time on every core, writing the
tables) and reports its peak memory, that of its forked workers, and when
the first progress output appeared. ``--docs N`` gives every size the same
corpus (N documents, 5N chunks), so memory can be compared across sizes;
by default the corpus grows with the samples (a tenth as many documents).
Writing the run is not timed. Prints one JSON line per size.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def write(size: int, directory: Path, docs: int | None) -> None:
    sys.path.insert(0, str(ROOT))
    from benchmarks._synthetic import iter_run
    from cofe import Manifest, RunWriter

    documents, chunks, pairs = iter_run(size, n_docs=docs)
    writer = RunWriter(directory)
    writer.start(Manifest(run_id=f"synthetic-{size}"))
    writer.add_documents(documents.values())
    writer.add_chunks(chunks.values())
    with (
        (directory / "evalset.jsonl").open("w", encoding="utf-8") as evalset,
        (directory / "samples.jsonl").open("w", encoding="utf-8") as samples,
    ):
        for sample, record in pairs:
            evalset.write(sample.model_dump_json() + "\n")
            samples.write(record.model_dump_json() + "\n")


class _FirstWrite:
    """stderr, noting when something (the first progress bar) was first written to it."""

    def __init__(self, stream, started: float) -> None:
        self.stream, self.started, self.first = stream, started, None

    def write(self, text: str) -> int:
        if self.first is None and text.strip():
            self.first = time.perf_counter() - self.started
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return False


def measure(size: int, directory: Path) -> dict:
    sys.path.insert(0, str(ROOT))
    from cofe.stages._stream import score_to_folder

    started = time.perf_counter()
    sys.stderr = progress = _FirstWrite(open(os.devnull, "w"), started)  # noqa: SIM115
    _, folder = score_to_folder(directory, progress=True)
    total = time.perf_counter() - started
    return {
        "samples": size,
        "candidates": 30,
        "chunks": sum(1 for _ in (directory / "chunks.jsonl").open("rb")),
        "score_s": round(total, 2),
        "samples_per_s": round(size / total),
        "first_progress_s": round(progress.first, 2) if progress.first is not None else None,
        "score_rows": sum(1 for _ in (folder / "scores.csv").open("rb")) - 1,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "peak_rss_worker_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
        "samples_jsonl_mb": round((directory / "samples.jsonl").stat().st_size / 2**20),
    }


def main() -> None:
    if len(sys.argv) >= 4 and sys.argv[1] in ("--write", "--score"):
        size, directory = int(sys.argv[2]), Path(sys.argv[3])
        if sys.argv[1] == "--write":
            write(size, directory, int(sys.argv[4]) if len(sys.argv) > 4 else None)
        else:
            print(json.dumps(measure(size, directory)))
        return
    args = sys.argv[1:]
    docs = None
    if args[:1] == ["--docs"]:
        docs, args = int(args[1]), args[2:]
    sizes = [int(a) for a in args] or [10_000, 100_000]
    print(
        f"cpus: {os.cpu_count()}  python: {sys.version.split()[0]}  corpus docs: "
        f"{docs or 'a tenth of the samples'}"
    )
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            write_args = [str(docs)] if docs else []
            for step, extra in (("--write", write_args), ("--score", [])):
                done = subprocess.run(
                    [sys.executable, __file__, step, str(size), tmp, *extra],
                    capture_output=True,
                    text=True,
                    check=True,
                )
            print(done.stdout.strip().splitlines()[-1], flush=True)


if __name__ == "__main__":
    main()
