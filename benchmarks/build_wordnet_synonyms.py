"""Builds ``cofe/_data/wordnet/synonyms.txt.gz`` from Princeton WordNet 3.0.

    apt-get install wordnet-base        # Debian / Ubuntu: /usr/share/wordnet
    python benchmarks/build_wordnet_synonyms.py [--wordnet DIR]

The answer step's paraphrase matcher (``cofe.matching._synonyms``) counts a word of an
information point as said when the answer says a WordNet synonym of it: a word sharing a
synset, as METEOR's synonym module does. The file keeps only what that needs: one line per
synset with at least two distinct members, the members as the matcher reads them --
lower-cased, each word Snowball-stemmed, a multi-word lemma ("turn down", "at once") as
its stems joined by a space -- each with ``:rank``, where this synset comes among the
member's senses (WordNet lists a word's senses most frequent first; the matcher reads only
a word's first few), separated by tabs. Lemmas with characters other than letters
(numbers, "a.m."), of more than three words, of function words only ("all in", "do in"),
and single letters are left out.

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

from cofe.matching._labels import STOPWORDS  # noqa: E402
from cofe.matching._paraphrase import _EXTRA_STOPWORDS, _stem  # noqa: E402  (the matcher's own)

OUT = ROOT / "cofe" / "_data" / "wordnet" / "synonyms.txt.gz"
PARTS = {"noun": "n", "verb": "v", "adj": "a", "adv": "r"}


def members(wordnet: Path) -> dict[str, dict[str, int]]:
    """Synset (part of speech and offset) -> its members as stems, each with the rank of
    this sense among the member's senses (1: its most frequent one)."""
    synsets: dict[str, dict[str, int]] = defaultdict(dict)
    for name, pos in PARTS.items():
        lines = [
            line
            for line in (wordnet / f"index.{name}").read_text(encoding="latin-1").splitlines()
            if line and not line.startswith(" ")  # the licence header
        ]
        lemmas = {line.split(" ", 1)[0] for line in lines}
        for line in lines:
            fields = line.split()
            if _plural_of_another(fields[0], lemmas):
                continue
            lemma, senses, pointers = fields[0], int(fields[2]), int(fields[3])
            offsets = fields[4 + pointers + 2 :]
            if len(offsets) != senses:
                sys.exit(f"{wordnet}/index.{name}: {lemma}: expected {senses} synsets")
            words = lemma.lower().split("_")
            if len(words) > 3 or not all(w.isascii() and w.isalpha() for w in words):
                continue
            if len(words) == 1 and len(lemma) < 2:
                continue  # a letter ("a" the vitamin, "c" the speed of light) is no word
            if all(w in STOPWORDS or w in _EXTRA_STOPWORDS for w in words):
                continue  # "all in", "do in", "one by one": function words match anything
            stemmed = " ".join(_stem(w) for w in words)
            for rank, offset in enumerate(offsets, start=1):
                group = synsets[pos + offset]
                group[stemmed] = min(rank, group.get(stemmed, rank))
    return synsets


def _plural_of_another(lemma: str, lemmas: set[str]) -> bool:
    """A lemma that is the plural of another ("times", "arms", "goods") names something
    else than its singular, and a stemmer cannot tell the two apart: "times" (the
    multiplication) would make "time" a synonym of "multiplication"."""
    if not lemma.endswith("s") or "_" in lemma:
        return False
    bases = [lemma[:-1]]  # arms -> arm
    if lemma.endswith("es"):
        bases.append(lemma[:-2])  # glasses -> glass
    if lemma.endswith("ies"):
        bases.append(lemma[:-3] + "y")  # qualities -> quality
    return any(base in lemmas for base in bases)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wordnet", type=Path, default=Path("/usr/share/wordnet"))
    args = parser.parse_args()
    if not (args.wordnet / "index.noun").is_file():
        sys.exit(f"{args.wordnet}: no WordNet index files (apt-get install wordnet-base)")
    lines = sorted(
        "\t".join(f"{member}:{rank}" for member, rank in sorted(group.items()))
        for group in members(args.wordnet).values()
        if len(group) > 1
    )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    # mtime 0: the same WordNet gives the same bytes
    with gzip.GzipFile(OUT, "wb", mtime=0) as out:
        out.write(("\n".join(dict.fromkeys(lines)) + "\n").encode("utf-8"))
    print(f"{OUT.relative_to(ROOT)}: {len(lines)} synsets, {OUT.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
