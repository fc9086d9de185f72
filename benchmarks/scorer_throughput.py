"""Scorer throughput and peak memory on synthetic runs (each size in a fresh process).

    python benchmarks/scorer_throughput.py            # 10k and 100k samples x 30 candidates
    python benchmarks/scorer_throughput.py 10000      # one size

Prints one line per size: samples/s over the whole score_run (context build,
scoring on every core, tables), the time of each phase, and peak memory.
Generating the synthetic run is not timed.
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


def measure(size: int) -> dict:
    sys.path.insert(0, str(ROOT))
    from benchmarks._synthetic import make_run
    from cofe import RunWriter, ScoreConfig, read_run, score_run, write_evalset
    from cofe._parallel import default_workers
    from cofe.stages import RunContext

    run, evalset = make_run(size)
    rss_data = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    workers = default_workers(size, 8_000)
    started = time.perf_counter()
    RunContext(run, evalset.samples, ScoreConfig(), workers=workers)
    context = time.perf_counter() - started
    started = time.perf_counter()
    result = score_run(run, evalset)
    total = time.perf_counter() - started
    figures = {
        "samples": size,
        "candidates": 30,
        "chunks": len(run.chunks),
        "workers": workers,
        "score_run_s": round(total, 2),
        "samples_per_s": round(size / total),
        "context_build_s": round(context, 2),
        "score_rows": len(result.scores),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "rss_before_scoring_mb": round(rss_data),
        "peak_rss_worker_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
    }
    if size <= 20_000:  # the same run read back from disk, as `cofe score` does
        with tempfile.TemporaryDirectory() as tmp:
            writer = RunWriter(tmp)
            write_evalset(Path(tmp) / "evalset.jsonl", evalset.samples)
            writer.start(run.manifest)
            writer.add_documents(run.documents.values())
            writer.add_chunks(run.chunks.values())
            writer.add_samples(run.records.values())
            started = time.perf_counter()
            log = read_run(tmp)
            figures["read_run_s"] = round(time.perf_counter() - started, 2)
            started = time.perf_counter()
            score_run(log)
            figures["score_from_disk_s"] = round(time.perf_counter() - started, 2)
    return figures


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        print(json.dumps(measure(int(sys.argv[2]))))
        return
    sizes = [int(a) for a in sys.argv[1:]] or [10_000, 100_000]
    print(f"cpus: {os.cpu_count()}  python: {sys.version.split()[0]}")
    for size in sizes:
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(size)],
            capture_output=True,
            text=True,
            check=True,
        )
        print(done.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
