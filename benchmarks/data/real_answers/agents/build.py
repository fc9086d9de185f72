"""Draw CMRC 2018 questions and contexts for Chinese answers written by LLM agents.

    python benchmarks/data/real_answers/agents/build.py OUT.jsonl [ROUND]

One question per CMRC trial article, from paragraphs no other folder of the real-answers
set and no answer-points set uses, with a fixed seed; figures, dates and names preferred
(as in ``local/generate.py``, whose loaders this reuses). Each question gets one context
variant, rotated: ``gold`` (its paragraph), ``padded`` (gold plus two other articles'
paragraphs sharing most characters with the question, shuffled), ``dropped`` (those two or
three paragraphs only: the context lacks the answer), ``cut`` (the paragraph cut just
before the answer). The split is a hash of the question id, as in the other folders.
ROUND (default 1) writes the next 60 articles of the same shuffled order instead (round 2:
a second set, written and graded later), numbered on from the earlier rounds.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "local"))
import generate as local  # the local folder's loaders: one home for them

N = 60
VARIANTS = ("gold", "dropped", "padded", "gold", "cut", "dropped", "padded", "gold")


def _used_by_local() -> set[str]:
    used = set()
    path = Path(__file__).resolve().parents[1] / "local" / "zh.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            used.update(c.strip() for c in json.loads(line)["contexts"])
    return used


def _overlap(question: str, paragraph: str) -> int:
    return len(set(question) & set(paragraph))


def main() -> None:
    out = Path(sys.argv[1])
    wanted = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    rng = random.Random(20261129)
    used = _used_by_local()
    articles = [a for a in local.load("zh") if a["paragraphs"][0]["context"].strip() not in used]
    rng.shuffle(articles)
    paragraphs = [a["paragraphs"][0]["context"].strip() for a in articles]
    rows = []
    for n, article in enumerate(articles[: N * wanted]):
        para = article["paragraphs"][0]
        qas = sorted(
            para["qas"],
            key=lambda qa: local.kind_of("zh", qa["question"], local.gold_answer(qa)[0]),
        )
        qa = qas[0]
        _, start = local.gold_answer(qa)
        context = para["context"].strip()
        others = sorted(
            (p for i, p in enumerate(paragraphs) if i != n),
            key=lambda p: -_overlap(qa["question"], p),
        )[:3]
        variant = VARIANTS[n % len(VARIANTS)]
        if variant == "gold":
            contexts = [context]
        elif variant == "padded":
            contexts = [context, *others[:2]]
            rng.shuffle(contexts)
        elif variant == "dropped":
            contexts = others[: 2 + n % 2]
        else:
            contexts = [context[: max(start, 1)].rstrip()]
        qid = f"cmrc-{qa['id']}"
        rows.append(
            {
                "id": f"agents-zh-{n + 1:04d}",
                "lang": "zh",
                "source": "cmrc",
                "split": local.split_of(qid),
                "question": qa["question"],
                "contexts": contexts,
                "origin": {
                    "cmrc_id": qa["id"],
                    "title": article["title"],
                    "variant": variant,
                    "answers": [a["text"] for a in qa["answers"]],
                    "paragraph": context,
                },
            }
        )
    rows = rows[N * (wanted - 1) :]  # the rounds before are drawn only to keep the seed's path
    out.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    print(f"{len(rows)} questions -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
