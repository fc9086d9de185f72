"""Builds ``cofe/_data/wordnet/synonyms.txt.gz`` from Princeton WordNet 3.0.

    apt-get install wordnet-base        # Debian / Ubuntu: /usr/share/wordnet
    python benchmarks/build_wordnet_synonyms.py [--wordnet DIR]

The answer step's paraphrase matcher (``cofe.matching._synonyms``) counts a word of an
information point as said when the answer says a WordNet synonym of it: a word sharing a
synset, as METEOR's synonym module does. The file keeps only what that needs: one line per
synset with at least two distinct members, the members as the matcher reads them --
lower-cased, each word Snowball-stemmed, a multi-word lemma ("turn down", "at once") as
its stems joined by a space -- separated by tabs. Every sense of a word is kept (WordNet
orders senses by frequency, but cutting at the first few lost real synonyms on the dev set
and let no fewer wrong answers through). Lemmas with characters other than letters
(numbers, "a.m.") or of more than three words, and single letters, are left out.

WordNet 3.0 is distributed under the WordNet licence, which allows copying and
redistribution with its notice; the notice is ``cofe/_data/wordnet/LICENSE``.
"""

from __future__ import annotations

import argparse
import gzip
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cofe.matching._paraphrase import _stem  # noqa: E402  (the matcher's own stemmer)

OUT = ROOT / "cofe" / "_data" / "wordnet" / "synonyms.txt.gz"
PARTS = {"noun": "n", "verb": "v", "adj": "a", "adv": "r"}


def members(wordnet: Path) -> dict[str, set[str]]:
    """Synset (part of speech and offset) -> its members as stems."""
    synsets: dict[str, set[str]] = defaultdict(set)
    for name, pos in PARTS.items():
        for line in (wordnet / f"index.{name}").read_text(encoding="latin-1").splitlines():
            if not line or line.startswith(" "):
                continue  # the licence header
            fields = line.split()
            lemma, senses, pointers = fields[0], int(fields[2]), int(fields[3])
            offsets = fields[4 + pointers + 2 :]
            if len(offsets) != senses:
                sys.exit(f"{wordnet}/index.{name}: {lemma}: expected {senses} synsets")
            words = lemma.lower().split("_")
            if len(words) > 3 or not all(w.isascii() and w.isalpha() for w in words):
                continue
            if len(words) == 1 and len(lemma) < 2:
                continue  # a letter ("a" the vitamin, "c" the speed of light) is no word
            stemmed = " ".join(_stem(w) for w in words)
            for offset in offsets:
                synsets[pos + offset].add(stemmed)
    return synsets


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wordnet", type=Path, default=Path("/usr/share/wordnet"))
    args = parser.parse_args()
    if not (args.wordnet / "index.noun").is_file():
        sys.exit(f"{args.wordnet}: no WordNet index files (apt-get install wordnet-base)")
    lines = sorted(
        "\t".join(sorted(group)) for group in members(args.wordnet).values() if len(group) > 1
    )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    # mtime 0: the same WordNet gives the same bytes
    with gzip.GzipFile(OUT, "wb", mtime=0) as out:
        out.write(("\n".join(dict.fromkeys(lines)) + "\n").encode("utf-8"))
    print(f"{OUT.relative_to(ROOT)}: {len(lines)} synsets, {OUT.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
