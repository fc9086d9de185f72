"""Builds ``cofe/_data/wordnet/synonyms.txt.gz`` and ``irregular.txt.gz`` from WordNet 3.0.

    apt-get install wordnet-base        # Debian / Ubuntu: /usr/share/wordnet
    python benchmarks/build_wordnet_synonyms.py [--wordnet DIR]

The answer step's paraphrase matcher (``cofe.matching._synonyms``) counts a word of an
information point as said when the answer says a WordNet synonym of it: a word sharing a
synset, as METEOR's synonym module does. The file keeps only what that needs: one line per
synset with at least two distinct members -- lemmas, lower-cased, a multi-word one ("turn
down") with its words joined by a space -- each with ``:rank``, where this synset comes
among the member's senses in its part of speech (WordNet lists a word's senses most
frequent first; the matcher reads only a word's first few), separated by tabs. Lemmas, not
stems: a stem cannot tell "author" from "authority" or "universe" from "university".
Lemmas with characters other than letters (numbers, "a.m."), of more than three words, of
function words only ("all in", "at once"), that are the plural of another lemma ("times"),
and single letters are left out. ``irregular.txt.gz`` holds WordNet's irregular forms and
their lemmas ("went" -> "go"), and the plurals left out as their own form ("physics"),
which the matcher's lemmatiser reads instead of its suffix rules.

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
from cofe.matching.answer.rules.en._words import extra_stopwords  # noqa: E402

OUT = ROOT / "cofe" / "_data" / "wordnet" / "synonyms.txt.gz"
OUT_IRREGULAR = OUT.with_name("irregular.txt.gz")
PARTS = {"noun": "n", "verb": "v", "adj": "a", "adv": "r"}


def members(wordnet: Path, plurals: set[str]) -> dict[str, dict[str, int]]:
    """Synset (part of speech and offset) -> its members (lemmas, lower case, words joined
    by a space), each with the rank of this sense among the member's senses in that part of
    speech (1: its most frequent one). ``plurals`` gathers the lemmas left out as the
    plural of another."""
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
                plurals.add(fields[0])
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
            if all(w in STOPWORDS or w in extra_stopwords() for w in words):
                continue  # "all in", "do in", "one by one": function words match anything
            member = " ".join(words)
            for rank, offset in enumerate(offsets, start=1):
                group = synsets[pos + offset]
                group[member] = min(rank, group.get(member, rank))
    return synsets


def exceptions(wordnet: Path) -> dict[str, set[str]]:
    """WordNet's irregular forms and their lemmas ("went" -> "go", "better" -> "good")."""
    out: dict[str, set[str]] = defaultdict(set)
    for name in PARTS:
        for line in (wordnet / f"{name}.exc").read_text(encoding="latin-1").splitlines():
            form, *lemmas = line.lower().split()
            if form.isascii() and form.isalpha():
                out[form].update(lemma for lemma in lemmas if lemma.isalpha())
    return out


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
    plurals: set[str] = set()
    lines = sorted(
        {
            "\t".join(f"{member}:{rank}" for member, rank in sorted(group.items()))
            for group in members(args.wordnet, plurals).values()
            if len(group) > 1
        }
    )
    forms = exceptions(args.wordnet)
    for plural in plurals:  # "physics" is its own word: never read as "physic"
        forms[plural].add(plural)
    irregular = sorted(f"{form}\t{' '.join(sorted(lemmas))}" for form, lemmas in forms.items())
    OUT.parent.mkdir(parents=True, exist_ok=True)
    # mtime 0: the same WordNet gives the same bytes
    with gzip.GzipFile(OUT, "wb", mtime=0) as out:
        out.write(("\n".join(lines) + "\n").encode("utf-8"))
    with gzip.GzipFile(OUT_IRREGULAR, "wb", mtime=0) as out:
        out.write(("\n".join(irregular) + "\n").encode("utf-8"))
    print(
        f"{OUT.relative_to(ROOT)}: {len(lines)} synsets, {OUT.stat().st_size:,} bytes; "
        f"{OUT_IRREGULAR.name}: {len(irregular)} forms, {OUT_IRREGULAR.stat().st_size:,} bytes"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
