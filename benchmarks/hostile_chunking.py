"""Parsing and chunking time and peak memory for hostile and large plain-text inputs.

    python benchmarks/hostile_chunking.py

Cases (each in a fresh process, so peak RSS is its own; llama-index and nltk
are imported and warmed up on a one-line file first, and their memory is
included in the peak):

* a 5 MB file that is one paragraph of sentences on a single line;
* a 5 MB single line with no punctuation (the splitter falls back to words);
* a 5 MB single "word" (no spaces, no punctuation: the splitter falls back to
  characters -- the worst case);
* a 50 MB corpus of normal documents (500 files of 100 KB, paragraphs of
  sentences separated by blank lines).

Parsing is ``parse_documents`` (cofe reads plain text itself), chunking is
``split_documents`` with the default sentence splitter, 256 tokens, overlap 20.
Prints one JSON line per case.
"""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORDS = ["harbour", "river", "stone", "market", "north", "light", "ledger", "bridge", "copper",
         "lantern", "meadow", "signal", "valley", "winter", "orchard", "quarry"]  # fmt: skip
MB = 2**20


def _prose(rng: random.Random, n_chars: int, period: float = 0.07) -> str:
    parts, size = [], 0
    while size < n_chars:
        word = rng.choice(WORDS) + ("." if rng.random() < period else "")
        parts.append(word)
        size += len(word) + 1
    return " ".join(parts)


def make(case: str, folder: Path) -> None:
    rng = random.Random(0)
    if case == "one-paragraph-5mb":
        (folder / "one.txt").write_text(_prose(rng, 5 * MB), encoding="utf-8")
    elif case == "no-punctuation-5mb":
        (folder / "one.txt").write_text(_prose(rng, 5 * MB, period=0.0), encoding="utf-8")
    elif case == "one-word-5mb":
        (folder / "one.txt").write_text("x" * 5 * MB, encoding="utf-8")
    elif case == "corpus-50mb":
        for i in range(500):
            paragraphs = [_prose(rng, rng.randint(300, 1500)) for _ in range(120)]
            text = "\n\n".join(paragraphs)[: 100 * 1024]
            (folder / f"doc{i:03d}.txt").write_text(text, encoding="utf-8")
    else:
        raise SystemExit(f"unknown case {case}")


def measure(folder: Path) -> dict:
    sys.path.insert(0, str(ROOT))
    from cofe.pipeline import parse_documents
    from cofe.pipeline._chunk import split_documents
    from cofe.runlog import ParsedDocument

    split_documents([ParsedDocument(doc_id="w", source="w", text="Warm up. Two sentences.")])
    started = time.perf_counter()
    parsed = parse_documents(folder)
    parse_s = time.perf_counter() - started
    started = time.perf_counter()
    chunks = split_documents(parsed.documents, chunk_size=256, chunk_overlap=20)
    chunk_s = time.perf_counter() - started
    size = sum(len(d.text) for d in parsed.documents)
    return {
        "files": len(parsed.documents),
        "chars": size,
        "parse_s": round(parse_s, 2),
        "chunk_s": round(chunk_s, 2),
        "chunk_mb_per_s": round(size / MB / chunk_s, 2),
        "chunks": len(chunks),
        "without_offsets": sum(c.start is None for c in chunks),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "problems": len(parsed.problems),
    }


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--measure":
        print(json.dumps(measure(Path(sys.argv[2]))))
        return
    cases = sys.argv[1:] or ["one-paragraph-5mb", "no-punctuation-5mb", "one-word-5mb",
                             "corpus-50mb"]  # fmt: skip
    for case in cases:
        with tempfile.TemporaryDirectory() as tmp:
            make(case, Path(tmp))
            done = subprocess.run([sys.executable, __file__, "--measure", tmp],
                                  capture_output=True, text=True, check=True)  # fmt: skip
            print(json.dumps({"case": case, **json.loads(done.stdout.strip().splitlines()[-1])}),
                  flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
