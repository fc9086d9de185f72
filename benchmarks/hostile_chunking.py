"""Parsing and chunking time and peak memory for hostile and large plain-text inputs.

    python benchmarks/hostile_chunking.py [CASE ...]

Cases (each in a fresh process, so its peak RSS is its own; llama-index and
nltk are imported and warmed up first, and their memory is in the peak):

* ``one-paragraph-5mb``: 5 MB of sentences on a single line;
* ``short-sentences-5mb``: 5 MB of two- to ten-letter sentences on one line
  (nltk gives up on one regular expression after 5 s, so this failed with a
  TimeoutError when the whole line went to nltk at once);
* ``no-punctuation-5mb``: one 5 MB line of words with no punctuation (the
  splitter falls back to words);
* ``one-word-5mb``: one 5 MB "word" (no spaces, no punctuation: the splitter
  falls back to characters -- the worst case);
* ``repeated-5mb``: one sentence-less phrase repeated over 5 MB (chunk texts
  repeat: ``uncovered_chars`` counts the characters no chunk's offsets cover,
  which is what placing every chunk at the first occurrence of its text does);
* ``squad-50mb``: a 50 MB corpus of normal documents, the 24 shipped SQuAD
  articles written 60 times over (as ``copyNN/<article>.txt``).

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
WORDS = [
    "harbour",
    "river",
    "stone",
    "market",
    "north",
    "light",
    "ledger",
    "bridge",
    "copper",
    "lantern",
    "meadow",
    "signal",
    "valley",
    "winter",
    "orchard",
    "quarry",
]
MB = 2**20
CASES = [
    "one-paragraph-5mb",
    "short-sentences-5mb",
    "no-punctuation-5mb",
    "one-word-5mb",
    "repeated-5mb",
    "squad-50mb",
]


def _prose(rng: random.Random, n_chars: int, period: float = 0.07) -> str:
    parts, size = [], 0
    while size < n_chars:
        word = rng.choice(WORDS) + ("." if rng.random() < period else "")
        parts.append(word)
        size += len(word) + 1
    return " ".join(parts)


def _short_sentences(rng: random.Random, n_chars: int) -> str:
    parts, size = [], 0
    while size < n_chars:
        word = rng.choice(WORDS)[: rng.randint(2, 7)].capitalize() + rng.choice(".!?")
        parts.append(word)
        size += len(word) + 1
    return " ".join(parts)


def make(case: str, folder: Path) -> None:
    rng = random.Random(0)
    one = folder / "one.txt"
    if case == "one-paragraph-5mb":
        one.write_text(_prose(rng, 5 * MB), encoding="utf-8")
    elif case == "short-sentences-5mb":
        one.write_text(_short_sentences(rng, 5 * MB), encoding="utf-8")
    elif case == "no-punctuation-5mb":
        one.write_text(_prose(rng, 5 * MB, period=0.0), encoding="utf-8")
    elif case == "one-word-5mb":
        one.write_text("x" * 5 * MB, encoding="utf-8")
    elif case == "repeated-5mb":
        one.write_text("lorem ipsum dolor sit amet " * (5 * MB // 27), encoding="utf-8")
    elif case == "squad-50mb":
        sys.path.insert(0, str(ROOT))
        from cofe.evalset.importers import import_squad

        articles = import_squad(ROOT / "cofe/_data/squad/squad-v1.1-dev-part-b.json").documents
        for copy in range(60):  # 24 articles, 850 KB: 60 copies are 50 MB
            (folder / f"copy{copy:02d}").mkdir()
            for name, text in articles.items():
                (folder / f"copy{copy:02d}" / name).write_text(text, encoding="utf-8")
    else:
        raise SystemExit(f"unknown case {case}; cases: {', '.join(CASES)}")


def _uncovered(text: str, spans: list[tuple[int, int]]) -> int:
    """Characters (not whitespace) of ``text`` outside every chunk's offsets: what a chunk
    placed at an earlier occurrence of its text leaves out."""
    missing, covered = 0, 0
    for start, end in sorted(spans):
        if start > covered:
            missing += len("".join(text[covered:start].split()))
        covered = max(covered, end)
    return missing + len("".join(text[covered:].split()))


def measure(folder: Path) -> dict:
    sys.path.insert(0, str(ROOT))
    from cofe.pipeline import parse_documents
    from cofe.pipeline._chunk import split_documents
    from cofe.runlog import ParsedDocument

    warm = " ".join(["A sentence to warm up nltk."] * 60)  # over 256 tokens: nltk is loaded
    split_documents([ParsedDocument(doc_id="w", source="w", text=warm)])
    started = time.perf_counter()
    parsed = parse_documents(folder)
    parse_s = time.perf_counter() - started
    started = time.perf_counter()
    chunks = split_documents(parsed.documents, chunk_size=256, chunk_overlap=20)
    chunk_s = time.perf_counter() - started
    size = sum(len(d.text) for d in parsed.documents)
    spans: dict[str, list[tuple[int, int]]] = {}
    for chunk in chunks:
        spans.setdefault(chunk.doc_id, []).append((chunk.start or 0, chunk.end or 0))
    uncovered = sum(_uncovered(d.text, spans.get(d.doc_id, [])) for d in parsed.documents)
    return {
        "files": len(parsed.documents),
        "chars": size,
        "parse_s": round(parse_s, 2),
        "chunk_s": round(chunk_s, 2),
        "chunk_mb_per_s": round(size / MB / chunk_s, 2),
        "chunks": len(chunks),
        "uncovered_chars": uncovered,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "problems": len(parsed.problems),
    }


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--measure":
        print(json.dumps(measure(Path(sys.argv[2]))))
        return
    for case in sys.argv[1:] or CASES:
        with tempfile.TemporaryDirectory() as tmp:
            make(case, Path(tmp))
            done = subprocess.run(
                [sys.executable, __file__, "--measure", tmp], capture_output=True, text=True
            )
            if done.returncode:
                last = (done.stderr.strip().splitlines() or ["?"])[-1]
                print(json.dumps({"case": case, "failed": last[:300]}), flush=True)
                continue
            print(
                json.dumps({"case": case, **json.loads(done.stdout.strip().splitlines()[-1])}),
                flush=True,
            )


if __name__ == "__main__":
    main()
