"""Scorer throughput and peak memory on synthetic runs, scored from disk as `cofe score` does.

    python benchmarks/scorer_throughput.py            # 10k and 100k samples x 30 candidates
    python benchmarks/scorer_throughput.py 10000      # one size

For each size one process writes a synthetic run (``benchmarks/_synthetic.py``)
to a temporary run directory; a fresh process then times ``score_run`` on that
directory (reading the run and the eval set, the corpus pass, scoring on every
core, the tables) and ``ScoreResult.write``, and reports its peak memory and
that of its forked workers. Writing the run is not timed. Prints one JSON
line per size.
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


def write(size: int, directory: Path) -> None:
    sys.path.insert(0, str(ROOT))
    from benchmarks._synthetic import make_run
    from cofe import RunWriter, write_evalset

    run, evalset = make_run(size)
    writer = RunWriter(directory)
    write_evalset(directory / "evalset.jsonl", evalset.samples)
    writer.start(run.manifest)
    writer.add_documents(run.documents.values())
    writer.add_chunks(run.chunks.values())
    writer.add_samples(run.records.values())


def measure(size: int, directory: Path) -> dict:
    sys.path.insert(0, str(ROOT))
    from cofe import score_run

    started = time.perf_counter()
    result = score_run(directory)
    scored = time.perf_counter() - started
    result.write(directory / "scores")
    total = time.perf_counter() - started
    return {
        "samples": size,
        "candidates": 30,
        "chunks": sum(1 for _ in (directory / "chunks.jsonl").open("rb")),
        "score_run_s": round(scored, 2),
        "with_write_s": round(total, 2),
        "samples_per_s": round(size / scored),
        "score_rows": len(result.scores),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "peak_rss_worker_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
        "samples_jsonl_mb": round((directory / "samples.jsonl").stat().st_size / 2**20),
    }


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] in ("--write", "--score"):
        size, directory = int(sys.argv[2]), Path(sys.argv[3])
        if sys.argv[1] == "--write":
            write(size, directory)
        else:
            print(json.dumps(measure(size, directory)))
        return
    sizes = [int(a) for a in sys.argv[1:]] or [10_000, 100_000]
    print(f"cpus: {os.cpu_count()}  python: {sys.version.split()[0]}")
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            for step in ("--write", "--score"):
                done = subprocess.run(
                    [sys.executable, __file__, step, str(size), tmp],
                    capture_output=True,
                    text=True,
                    check=True,
                )
            print(done.stdout.strip().splitlines()[-1], flush=True)


if __name__ == "__main__":
    main()
