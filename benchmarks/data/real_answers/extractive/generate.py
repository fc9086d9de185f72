"""Regenerate the answers of the `extractive` real-answers dev set (no labels).

Questions come from SQuAD v1.1 (dev, part b) and CMRC 2018 (trial), both CC BY-SA 4.0.
Never used, neither as gold nor as filler: paragraphs of ``benchmarks/data/answer_points``
(incl. ``holdout``). Never used as gold: any paragraph holding a question of the sibling
``local`` set (its question ids are frozen in ``sibling-question-ids.txt``, taken from that
set's plan files with the ``exclude`` step below). For each language the script picks 60
questions (``random.Random(SEED)``, one per paragraph, round-robin over the articles,
figures/dates/names preferred), gives each two of four context variants (``gold``,
``distractors``, ``dropped``, ``truncated``; the pairs rotate so each variant is used 30
times per language) and answers every (question, contexts) with cofe's built-in extractive
generator (``cofe.pipeline.ExtractiveGenerator``, called as library code; model
``extractive``). The run is deterministic (no model, no server).

Unlabelled records go to ``--out-dir`` (``raw-en.jsonl``, ``raw-zh.jsonl``). Points and
grades were written by a person reading every answer (see README.md) into label files;
``assemble`` merges them into ``<lang>.jsonl``.

Exact commands (from the repository root)::

    # once: freeze the sibling set's question ids (already done; the file is kept)
    python benchmarks/data/real_answers/extractive/generate.py exclude \\
        /tmp/ra/plan-en.jsonl /tmp/ra/plan-zh.jsonl
    python benchmarks/data/real_answers/extractive/generate.py run --out-dir /tmp/ext
    python benchmarks/data/real_answers/extractive/generate.py assemble --out-dir /tmp/ext \\
        --labels /tmp/ext/labels --dest benchmarks/data/real_answers/extractive
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import random
import re
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]
SQUAD = Path("/work/shared/data/squad/squad-v1.1-dev-part-b.json")
CMRC = Path("/work/shared/data/cmrc2018/cmrc2018-trial.json")
EXCLUDED_GLOBS = (
    "benchmarks/data/answer_points/*.jsonl",
    "benchmarks/data/answer_points/holdout/*.jsonl",
)
SIBLING_IDS = HERE / "sibling-question-ids.txt"
SEED = 20250917
N_QUESTIONS = 60
MODEL = "extractive"
GRADER = "helper-blind-extractive"
# every pair of variants once per 6 questions: each variant is used 3 times in 6
PAIRS = (
    ("gold", "dropped"),
    ("distractors", "truncated"),
    ("gold", "truncated"),
    ("distractors", "dropped"),
    ("gold", "distractors"),
    ("dropped", "truncated"),
)


def split_of(question_id: str) -> str:
    return ("tune", "measure")[int(hashlib.sha256(question_id.encode()).hexdigest(), 16) % 2]


def excluded_paragraphs() -> set[str]:
    out = set()
    for pattern in EXCLUDED_GLOBS:
        for name in sorted(glob.glob(str(REPO / pattern))):
            with open(name, encoding="utf-8") as handle:
                out.update(json.loads(line)["paragraph"].strip() for line in handle if line.strip())
    return out


def sibling_ids() -> set[str]:
    lines = SIBLING_IDS.read_text(encoding="utf-8").splitlines()
    return {line.strip() for line in lines if line.strip()}


def load(lang: str) -> list[dict]:
    """Articles as {title, paragraphs: [{context, qas, sibling}]}, answer_points paragraphs removed;
    ``sibling`` marks a paragraph holding a question of the sibling set (never gold here)."""
    data = json.loads((SQUAD if lang == "en" else CMRC).read_text(encoding="utf-8"))["data"]
    skip = excluded_paragraphs()
    sib = sibling_ids()
    articles = []
    for art in data:
        paras = [
            {**p, "sibling": any(qa["id"] in sib for qa in p["qas"])}
            for p in art["paragraphs"]
            if p["context"].strip() not in skip
        ]
        if paras:
            articles.append({"title": art["title"], "paragraphs": paras})
    return articles


def gold_answer(qa: dict) -> tuple[str, int]:
    """The most frequent gold answer text (first on ties) and its start offset."""
    texts = [a["text"] for a in qa["answers"]]
    best = max(texts, key=lambda t: (texts.count(t), -texts.index(t)))
    return best, next(a["answer_start"] for a in qa["answers"] if a["text"] == best)


_DIGIT = re.compile(
    r"[0-9]|[一二三四五六七八九十百千万亿两]+(?:年|月|日|个|人|名|次|岁|公|米|元|倍|%)"
)


def kind_of(lang: str, question: str, answer: str) -> int:
    """0 figure/date/quantity, 1 name or list, 2 other (lower is preferred)."""
    if _DIGIT.search(answer):
        return 0
    if lang == "en":
        if re.match(r"(?i)(who|whom|whose|which|what (is|was|were|are) the name|name)\b", question):
            return 1
        if "," in answer or " and " in answer:
            return 1
    else:
        if re.search(r"谁|哪位|哪些|名字|叫什么|称为|哪个|哪里", question) or "、" in answer:
            return 1
    return 2


def candidates(lang: str, articles: list[dict]) -> dict[str, list[dict]]:
    """Per article, the eligible questions (short answer, not at the paragraph's very start,
    paragraph not used by the sibling set)."""
    out: dict[str, list[dict]] = defaultdict(list)
    for ai, art in enumerate(articles):
        for pi, para in enumerate(art["paragraphs"]):
            if para["sibling"]:
                continue
            for qa in para["qas"]:
                text, start = gold_answer(qa)
                short = len(text.split()) <= 8 if lang == "en" else len(text) <= 25
                if not short or start < 50 or para["context"][start : start + len(text)] != text:
                    continue
                out[art["title"]].append(
                    {
                        "article": ai,
                        "paragraph": pi,
                        "qa": qa,
                        "answer": text,
                        "start": start,
                        "kind": kind_of(lang, qa["question"], text),
                    }
                )
    return out


# the kinds wanted in turn (6 figures, 3 names/lists, 1 other in every 10 questions)
KIND_CYCLE = (0, 1, 0, 0, 1, 0, 2, 0, 1, 0)


def pick(lang: str, articles: list[dict], n: int, rng: random.Random) -> list[dict]:
    """n questions, one per paragraph, round-robin over shuffled articles; each turn takes the
    article's first unused candidate of the wanted kind (else the most preferred kind left)."""
    pools = candidates(lang, articles)
    titles = sorted(pools)
    rng.shuffle(titles)
    for title in titles:
        rng.shuffle(pools[title])
    used: set = set()
    chosen: list[dict] = []
    while len(chosen) < n and any(pools.values()):
        for title in titles:
            pool = pools[title] = [
                c for c in pools[title] if (c["article"], c["paragraph"]) not in used
            ]
            if not pool or len(chosen) >= n:
                continue
            want = KIND_CYCLE[len(chosen) % len(KIND_CYCLE)]
            c = min(pool, key=lambda c: (c["kind"] != want, c["kind"]))
            pool.remove(c)
            used.add((c["article"], c["paragraph"]))
            chosen.append(c)
    return chosen


def bigrams(text: str) -> set[str]:
    text = re.sub(r"\s+", "", text)
    return {text[i : i + 2] for i in range(len(text) - 1)}


def similar_others(articles: list[dict], ai: int, question: str, k: int, avoid: set) -> list[str]:
    """zh only (CMRC articles have one paragraph): the k paragraphs of other articles sharing most
    character bigrams with the question, as a retriever's near misses."""
    q = bigrams(question)
    scored = []
    for bi, art in enumerate(articles):
        if bi == ai:
            continue
        for para in art["paragraphs"]:
            if para["context"] in avoid:
                continue
            scored.append((-len(q & bigrams(para["context"])), bi, para["context"]))
    scored.sort()
    return [c for _, _, c in scored[:k]]


_ZH_SENT = re.compile(r"[^。！？]*[。！？]?")


def without_answer_sentence(context: str, start: int, answer: str) -> str:
    """The paragraph with the sentence(s) holding the answer span removed."""
    pieces = [(m.start(), m.end()) for m in _ZH_SENT.finditer(context) if m.group()]
    kept = [context[a:b] for a, b in pieces if b <= start or a >= start + len(answer)]
    return "".join(kept).strip()


def build_context(
    lang: str, variant: str, articles: list[dict], c: dict, rng: random.Random
) -> list[str]:
    art = articles[c["article"]]
    gold = art["paragraphs"][c["paragraph"]]["context"]
    others = [p["context"] for i, p in enumerate(art["paragraphs"]) if i != c["paragraph"]]
    if variant == "gold":
        return [gold]
    if variant == "truncated":
        return [gold[: c["start"]].rstrip()]
    if lang == "en":
        if variant == "distractors":
            ctx = [gold, *rng.sample(others, 2)]
            rng.shuffle(ctx)
            return ctx
        # dropped: 2-3 other paragraphs of the same article that do not contain the answer text
        clean = [o for o in others if c["answer"].lower() not in o.lower()] or others
        return rng.sample(clean, min(len(clean), rng.choice((2, 3))))
    # zh: one paragraph per CMRC article, so the fillers are the nearest other articles
    question = c["qa"]["question"]
    if variant == "distractors":
        ctx = [gold, *similar_others(articles, c["article"], question, 2, {gold})]
        rng.shuffle(ctx)
        return ctx
    # dropped: the rest of the article (answer sentence removed) + the nearest other article
    rest = without_answer_sentence(gold, c["start"], c["answer"])
    ctx = [rest, *similar_others(articles, c["article"], question, 1, {gold})]
    rng.shuffle(ctx)
    return ctx


def plan(lang: str) -> list[dict]:
    """Every answer to generate, in order: id, question, contexts, reference, origin."""
    articles = load(lang)
    rng = random.Random(f"{SEED}-{lang}")
    chosen = pick(lang, articles, N_QUESTIONS, rng)
    source, key = ("squad", "squad_id") if lang == "en" else ("cmrc", "cmrc_id")
    items: list[dict] = []
    for qi, c in enumerate(chosen):
        title = articles[c["article"]]["title"]
        for variant in PAIRS[qi % len(PAIRS)]:
            qid = c["qa"]["id"]
            items.append(
                {
                    "id": f"ext-{lang}-{len(items) + 1:04d}",
                    "lang": lang,
                    "source": source,
                    "model": MODEL,
                    "split": split_of(qid),
                    "question": c["qa"]["question"],
                    "contexts": build_context(lang, variant, articles, c, rng),
                    "reference": c["answer"],
                    "answer": None,
                    "origin": {
                        "variant": variant,
                        key: qid,
                        "title": title,
                        "answer_start": c["start"],
                    },
                }
            )
    return items


def extractive(question: str, contexts: list[str]) -> str:
    from cofe.pipeline import ExtractiveGenerator
    from cofe.runlog import Chunk

    chunks = [Chunk(chunk_id=f"c{i}", doc_id=f"d{i}", text=t) for i, t in enumerate(contexts)]
    return ExtractiveGenerator()(question, chunks)


def run(args) -> None:
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for lang in args.langs:
        items = plan(lang)
        for item in items:
            item["answer"] = extractive(item["question"], item["contexts"])
        path = out_dir / f"raw-{lang}.jsonl"
        path.write_text(
            "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8"
        )
        print(f"{path}: {len(items)} answers, {len({i['question'] for i in items})} questions")


def exclude(args) -> None:
    ids = set()
    for name in args.plans:
        for line in Path(name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                origin = json.loads(line)["origin"]
                ids.add(origin.get("squad_id") or origin["cmrc_id"])
    SIBLING_IDS.write_text("".join(i + "\n" for i in sorted(ids)), encoding="utf-8")
    print(f"{SIBLING_IDS}: {len(ids)} ids")


ORDER = (
    "id",
    "lang",
    "source",
    "model",
    "split",
    "question",
    "contexts",
    "reference",
    "coarse_keywords",
    "points",
    "context_holds",
    "answer",
    "grade",
    "point_labels",
    "grader",
    "notes",
    "origin",
)


def assemble(args) -> None:
    """Merge labels (jsonl files under --labels: per-question {question_id, points,
    coarse_keywords} and per-answer {id, context_holds, grade, point_labels, notes?}) into
    --dest/<lang>.jsonl."""
    questions, answers = {}, {}
    for name in sorted(glob.glob(str(Path(args.labels) / "*.jsonl"))):
        for line in Path(name).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            rec = json.loads(line)
            (questions if "question_id" in rec else answers)[
                rec.get("question_id") or rec["id"]
            ] = rec
    for lang in args.langs:
        key = "squad_id" if lang == "en" else "cmrc_id"
        rows = []
        for line in (
            (Path(args.out_dir) / f"raw-{lang}.jsonl").read_text(encoding="utf-8").splitlines()
        ):
            item = json.loads(line)
            q, a = questions[item["origin"][key]], answers[item["id"]]
            item.update(
                points=q["points"],
                coarse_keywords=q["coarse_keywords"],
                context_holds=a["context_holds"],
                grade=a["grade"],
                point_labels=a["point_labels"],
                grader=GRADER,
            )
            if a.get("notes"):
                item["notes"] = a["notes"]
            rows.append({k: item[k] for k in ORDER if k in item})
        rows.sort(key=lambda r: r["id"])
        dest = Path(args.dest) / f"{lang}.jsonl"
        dest.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
        )
        print(f"{dest}: {len(rows)} rows")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("exclude", help="freeze the sibling set's question ids from its plan files")
    p.add_argument("plans", nargs="+")
    p = sub.add_parser("run", help="generate the answers")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--langs", nargs="+", default=["en", "zh"])
    p = sub.add_parser("assemble", help="merge the label files into the final jsonl")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--labels", required=True)
    p.add_argument("--dest", default=str(HERE))
    p.add_argument("--langs", nargs="+", default=["en", "zh"])
    args = parser.parse_args(argv)
    {"exclude": exclude, "run": run, "assemble": assemble}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
