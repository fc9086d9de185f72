"""Draw CMRC 2018 questions and contexts for Chinese answers written by LLM agents.

    python benchmarks/data/real_answers/agents/build.py OUT.jsonl [ROUND]

One question per CMRC trial article, from paragraphs no other folder of the real-answers
set and no answer-points set uses, with a fixed seed; figures, dates and names preferred
(as in ``local/generate.py``, whose loaders this reuses). Each question gets one context
variant, rotated: ``gold`` (its paragraph), ``padded`` (gold plus two other articles'
paragraphs sharing most characters with the question, shuffled), ``dropped`` (those two or
three paragraphs only: the context lacks the answer), ``cut`` (the paragraph cut just
before the answer). The split is a hash of the question id, as in the other folders.
ROUND (default 1) writes another round instead, numbered on from the earlier ones: round 2
is the next articles of the same shuffled order (the 53 left); round 3 goes over every
article of rounds 1 and 2 again with its second question (one context variant on from its
first's).
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
    rows: list[dict[str, object]] = []
    # (article, rank of its question): rounds 1 and 2 take each article's first, round 3 its
    # second; drawn in this one order whatever is written, so the seed's path stays the same
    plan = [(n, 0) for n in range(len(articles))] + [(n, 1) for n in range(len(articles))]
    bounds = {1: (0, N), 2: (N, len(articles)), 3: (len(articles), len(plan))}[wanted]
    for n, rank in plan[: bounds[1]]:
        article = articles[n]
        para = article["paragraphs"][0]
        qas = sorted(
            para["qas"],
            key=lambda qa: local.kind_of("zh", qa["question"], local.gold_answer(qa)[0]),
        )
        if rank >= len(qas):
            continue
        qa = qas[rank]
        _, start = local.gold_answer(qa)
        context = para["context"].strip()
        others = sorted(
            (p for i, p in enumerate(paragraphs) if i != n),
            key=lambda p: -_overlap(qa["question"], p),
        )[:3]
        variant = VARIANTS[(n + 3 * rank) % len(VARIANTS)]
        if variant == "gold":
            contexts = [context]
        elif variant == "padded":
            contexts = [context, *others[:2]]
            rng.shuffle(contexts)
        elif variant == "dropped":
            contexts = others[: 2 + (n + rank) % 2]
        else:
            contexts = [context[: max(start, 1)].rstrip()]
        qid = f"cmrc-{qa['id']}"
        rows.append(
            {
                "id": f"agents-zh-{n + 1 + rank * len(articles):04d}",
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
    first = bounds[0]
    rows = [r for r in rows if int(str(r["id"])[-4:]) > first]  # this round's only
    out.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    print(f"{len(rows)} questions -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
