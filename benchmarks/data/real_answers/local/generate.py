"""Regenerate the local model's answers of the `local` real-answers dev set.

Questions come from SQuAD v1.1 (dev, part b) and CMRC 2018 (trial), both CC BY-SA 4.0;
paragraphs used by ``benchmarks/data/answer_points`` (incl. ``holdout``) are never used,
neither as gold nor as filler. For each language the script picks 75 questions
(``random.Random(SEED)``, one per paragraph, spread round-robin over the articles,
figures/dates/names preferred), gives each two of four context variants (``gold``,
``distractors``, ``dropped``, ``truncated``; the pairs rotate so every variant is used
equally), alternates two prompt styles (``plain``, ``detailed``), adds 15 hand-written
``computed`` questions per language (gold context) and the built-in extractive
generator's answer (``cofe.pipeline.ExtractiveGenerator``) for 30 questions per language,
and 6 hand-written ``two_part`` questions per language (two upstream questions of one
paragraph joined; gold context and the context cut before the later answer).

The answers are written, one JSON object per line and without labels, to
``--out-dir`` (``raw-en.jsonl``, ``raw-zh.jsonl``); a rerun skips the ids already written,
so an interrupted run resumes. Points and grades were written by a person reading every
answer (see README.md); ``assemble`` merges such a label file into the final records.

Exact commands (2 cores, llama.cpp server of ``cofe llm serve``, port 8000)::

    cofe llm serve &                       # 127.0.0.1:8000, model qwen2.5-coder-1.5b-instruct
    python benchmarks/data/real_answers/local/generate.py run --out-dir /tmp/ra \\
        --base-url http://127.0.0.1:8000/v1 > /tmp/ra/run.log 2>&1
    python benchmarks/data/real_answers/local/generate.py assemble --out-dir /tmp/ra \\
        --labels /tmp/ra/labels --dest benchmarks/data/real_answers/local

``run`` calls the server with temperature 0 and max_tokens 256, one request at a time.
"""

from __future__ import annotations

import argparse
import fcntl
import glob
import hashlib
import json
import random
import re
import sys
import time
import urllib.request
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
SEED = 20240611
N_QUESTIONS = 75
N_EXTRACTIVE = 30
MODEL = "qwen2.5-coder-1.5b-instruct"
MAX_TOKENS = 256
VARIANTS = ("gold", "distractors", "dropped", "truncated")
# every pair of variants once per 6 questions: each variant is used 3 times in 6
PAIRS = (
    ("gold", "dropped"),
    ("distractors", "truncated"),
    ("gold", "truncated"),
    ("distractors", "dropped"),
    ("gold", "distractors"),
    ("dropped", "truncated"),
)

PROMPTS = {
    "en": {
        "plain": (
            "You are a question answering assistant. Answer the question using only the "
            "information in the context passages. If the context does not contain the answer, "
            "say that the context does not contain it."
        ),
        "detailed": (
            "You are a question answering assistant. Answer the question using only the "
            "information in the context passages. If the context does not contain the answer, "
            "say that the context does not contain it. Explain your answer in detail; use "
            "markdown (bold, lists) where helpful; show any calculation."
        ),
        "user": "Context:\n{passages}\n\nQuestion: {question}",
    },
    "zh": {
        "plain": (
            "你是一个问答助手。请只根据上下文段落中的信息回答问题。"
            "如果上下文中没有答案，请说明上下文中没有相关信息。"
        ),
        "detailed": (
            "你是一个问答助手。请只根据上下文段落中的信息回答问题。"
            "如果上下文中没有答案，请说明上下文中没有相关信息。"
            "请详细解释你的答案；在合适的地方使用 Markdown（加粗、列表）；如有计算，请写出计算过程。"
        ),
        "user": "上下文：\n{passages}\n\n问题：{question}",
    },
}

# Hand-written questions that need a small computation or a rounded/rescaled figure,
# written by the grader from a paragraph that holds the figures. ``anchor`` is the id of
# a SQuAD/CMRC question of that paragraph (the gold context is that paragraph).
COMPUTED = {
    "en": [
        {
            "anchor": "572944e03f37b319004781e2",
            "question": "How many years passed between the IPCC Third Assessment Report and the Fourth Assessment Report?",
            "reference": "6 years (2001 to 2007)",
        },
        {
            "anchor": "56de10b44396321400ee2593",
            "question": "What percentage of Philaretus Brachamius's troops were Normans in 1073-1074?",
            "reference": "40% (8,000 of 20,000)",
        },
        {
            "anchor": "5725ec8289a1e219009ac0ae",
            "question": "How many years after the Alta Vista Tract was officially platted did Billings & Meyering acquire it?",
            "reference": "3 years (platted in 1911, acquired in 1914)",
        },
        {
            "anchor": "57115bf350c2381900b54a93",
            "question": "About how many kilograms of steam would Energiprojekt's engine consume to produce 10 kWh?",
            "reference": "about 40 kg (approx. 4 kg per kWh)",
        },
        {
            "anchor": "572fd7b8947a6a140053cd3a",
            "question": "How long does General Question Time last?",
            "reference": "20 minutes (11:40 a.m. to 12 p.m.)",
        },
        {
            "anchor": "572749d7dd62a815002e9a90",
            "question": "For about how many years did Soap run on ABC?",
            "reference": "about 3.5 years (September 13, 1977 to April 20, 1981)",
        },
        {
            "anchor": "57287338ff5b5019007da232",
            "question": "How many years after the Red Turban Rebellion started did Toghun Temür flee north to Shangdu?",
            "reference": "17 years (1351 to 1368)",
        },
        {
            "anchor": "56f88025aef237190062611e",
            "question": "In total, how many songs did Luther supply to the three hymnals published in 1524?",
            "reference": "46 songs (4 + 18 + 24)",
        },
        {
            "anchor": "572f65e9b2c2fd14005680cc",
            "question": "What is the Rhine's average width near the Dutch border, in kilometres?",
            "reference": "0.4 km (400 m)",
        },
        {
            "anchor": "57094ca7efce8f15003a7dd6",
            "question": "About how many million Sky+ users did Sky have as of 31 March 2008?",
            "reference": "about 3.4 million (3,393,000)",
        },
        {
            "anchor": "5730eb5b497a881900248a3f",
            "question": "By about how many members did UMC membership fall between the church's formation and 2005?",
            "reference": "about 3 million (from about 11 million to about 8 million)",
        },
        {
            "anchor": "572754dd708984140094dc3b",
            "question": "On average, about how many pupils does each Kunskapsskolan school teach?",
            "reference": "about 333 pupils (nearly 10,000 pupils in 30 schools)",
        },
        {
            "anchor": "570607f575f01819005e78b4",
            "question": "What is the combined population of Los Angeles and San Diego?",
            "reference": "5 million (3.7 million + 1.3 million)",
        },
        {
            "anchor": "5725d16aec44d21400f3d61b",
            "question": "How many bird and mammal species combined have been scientifically classified in the region?",
            "reference": "1,721 (1,294 birds + 427 mammals)",
        },
        {
            "anchor": "5729293d3f37b3190047809f",
            "question": "How many years after first competing in the Cricket World Cup did Kenya reach its semi-finals?",
            "reference": "7 years (1996 to 2003)",
        },
    ],
    "zh": [
        {
            "anchor": "TRIAL_800_QUERY_0",
            "question": "若玩家在游戏中离了3次，累计多少分钟内不得进行配对？",
            "reference": "12分钟（每次中离+4分钟，3×4）",
        },
        {
            "anchor": "TRIAL_762_QUERY_0",
            "question": "叶盛茂的刑期从一审到二审减少了几年？",
            "reference": "4年（一审10年，二审6年）",
        },
        {
            "anchor": "TRIAL_723_QUERY_0",
            "question": "2008年8月，MIT开放式课程中有完整演讲影片的课程约占百分之几？",
            "reference": "约1.4%（1800个课程中26个）",
        },
        {
            "anchor": "TRIAL_890_QUERY_0",
            "question": "温泉关的战斗与加利奇军队在此击败希腊军队相隔多少年？",
            "reference": "201年（前480年至前279年）",
        },
        {
            "anchor": "TRIAL_455_QUERY_0",
            "question": "《伏尔泰的朋友们》从首次出版到2003年仍在发行，相隔多少年？",
            "reference": "97年（1906年至2003年）",
        },
        {
            "anchor": "TRIAL_928_QUERY_0",
            "question": "后辽政权存在了大约多少年？",
            "reference": "约3年（1216年至1219年）",
        },
        {
            "anchor": "TRIAL_852_QUERY_0",
            "question": "阿部重次去世时大约多少岁？",
            "reference": "约53岁（1598年至1651年）",
        },
        {
            "anchor": "TRIAL_12_QUERY_0",
            "question": "德国环境与自然保护联盟成立几年后改为现今的名称？",
            "reference": "2年（1975年成立，1977年改名）",
        },
        {
            "anchor": "TRIAL_163_QUERY_0",
            "question": "如果没有获得减刑，林永康原本会被判入狱多少个月？",
            "reference": "12个月（判九个月，已酌量减刑三个月）",
        },
        {
            "anchor": "TRIAL_473_QUERY_0",
            "question": "于海大约出生于哪一年？",
            "reference": "约1987年（2004年年仅17岁）",
        },
        {
            "anchor": "TRIAL_718_QUERY_0",
            "question": "碧海蓝天的永旺百货从宣布开设到正式开业相隔大约多久？",
            "reference": "约1年1个月（2010年12月宣布，2012年1月开业）",
        },
        {
            "anchor": "TRIAL_423_QUERY_0",
            "question": "温克霍克在那场欧洲大奖赛跑到退赛时，他领跑的圈数约占百分之几？",
            "reference": "40%（15圈中领跑6圈）",
        },
        {
            "anchor": "TRIAL_482_QUERY_0",
            "question": "2005年蒙泰罗完成了该赛季约百分之几的比赛？",
            "reference": "约95%（19场中完成18场）",
        },
        {
            "anchor": "TRIAL_981_QUERY_0",
            "question": "盖卤王在位多少年？",
            "reference": "20年（455年至475年）",
        },
        {
            "anchor": "TRIAL_53_QUERY_0",
            "question": "严长寿从进入美国运通到升任美国运通台湾区总经理用了几年？",
            "reference": "5年（二十三岁进入，二十八岁升任）",
        },
    ],
}


# Hand-written two-part questions joining two upstream questions of one paragraph; asked
# with the gold paragraph and with the paragraph cut just before the later answer (so one
# part can be answered and the other cannot).
TWO_PART = {
    "en": [
        {
            "anchors": ["5711628a2419e314009555de", "5711628a2419e314009555e1"],
            "question": "In what year was the Corliss engine patented, and how much less steam did it use than the Watt engine?",
            "reference": "1849; 30% less steam",
        },
        {
            "anchors": ["5728827b2ca10214002da42c", "5728827b2ca10214002da42e"],
            "question": "When did the Yuan begin using bronze printing plates for its money, and when did the Il-khanate experiment with paper money?",
            "reference": "1275; 1294",
        },
        {
            "anchors": ["57300a25a23a5019007fcc9a", "57300a25a23a5019007fcc9b"],
            "question": "When was the Confederation of the Rhine, and when was the Rhine crisis?",
            "reference": "1806; 1840",
        },
        {
            "anchors": ["5726e37ef1498d1400e8eed8", "5726e37ef1498d1400e8eedb"],
            "question": "About how many items are in the V&A's costume collection, and in which year did the V&A receive the Talbot Hughes collection?",
            "reference": "over 14,000; 1913",
        },
        {
            "anchors": ["57283ce72ca10214002da14e", "57283ce72ca10214002da14f"],
            "question": "How many BAFTA Cymru Awards has Doctor Who received, and in what year was it rated the third greatest show of the 2000s?",
            "reference": "25; 2009",
        },
        {
            "anchors": ["572768d9708984140094dd15", "572768d9708984140094dd16"],
            "question": "When did Hulu begin offering ABC's programs for streaming, and what percentage stake in Hulu did Disney agree to buy in 2009?",
            "reference": "July 6, 2009; 27%",
        },
    ],
    "zh": [
        {
            "anchors": ["TRIAL_677_QUERY_1", "TRIAL_677_QUERY_2"],
            "question": "萱侬律占地面积多大？什么时候开始对公众开放？",
            "reference": "约两平方公里；1980年",
        },
        {
            "anchors": ["TRIAL_743_QUERY_2", "TRIAL_743_QUERY_3"],
            "question": "宏都阿里山公司总部在哪里？2008年林业局以什么模式将阿里山森林铁路移交该公司经营？",
            "reference": "嘉义市；BOT模式",
        },
        {
            "anchors": ["TRIAL_93_QUERY_1", "TRIAL_93_QUERY_4"],
            "question": "明圣王后是谁的母亲？她何时受册为王妃？",
            "reference": "第19代君主肃宗的母亲；1659年受册为王妃",
        },
        {
            "anchors": ["TRIAL_697_QUERY_0", "TRIAL_697_QUERY_3"],
            "question": "小榄精神病治疗中心属于什么设施？在此监禁者主要分为几类？",
            "reference": "属惩教署设施；两类",
        },
        {
            "anchors": ["TRIAL_809_QUERY_1", "TRIAL_809_QUERY_2"],
            "question": "2000年桃花源小厨在哪儿开设？它以什么而闻名？",
            "reference": "香港；太史五蛇羹",
        },
        {
            "anchors": ["TRIAL_713_QUERY_0", "TRIAL_713_QUERY_1"],
            "question": "夏尔什么时候开始担任卡斯特罗公爵、波旁-两西西里王室家族族长？他在哪里出生？",
            "reference": "2008年；法国瓦尔省圣拉斐尔",
        },
    ],
}


def split_of(question_id: str) -> str:
    return ("tune", "measure")[int(hashlib.sha256(question_id.encode()).hexdigest(), 16) % 2]


def excluded_paragraphs() -> set[str]:
    out = set()
    for pattern in EXCLUDED_GLOBS:
        for name in glob.glob(str(REPO / pattern)):
            with open(name, encoding="utf-8") as handle:
                out.update(json.loads(line)["paragraph"].strip() for line in handle if line.strip())
    return out


def load(lang: str) -> list[dict]:
    """Articles as {title, paragraphs: [{context, qas}]} with excluded paragraphs removed."""
    data = json.loads((SQUAD if lang == "en" else CMRC).read_text(encoding="utf-8"))["data"]
    skip = excluded_paragraphs()
    articles = []
    for art in data:
        paras = [p for p in art["paragraphs"] if p["context"].strip() not in skip]
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
    """Per article, the eligible questions (short answer, not at the paragraph's very start)."""
    out: dict[str, list[dict]] = defaultdict(list)
    for ai, art in enumerate(articles):
        for pi, para in enumerate(art["paragraphs"]):
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


def pick(lang: str, articles: list[dict], n: int, rng: random.Random, used: set) -> list[dict]:
    """n questions, one per paragraph, round-robin over shuffled articles; each turn takes the
    article's first unused candidate of the wanted kind (else the most preferred kind left)."""
    pools = candidates(lang, articles)
    titles = sorted(pools)
    rng.shuffle(titles)
    for title in titles:
        rng.shuffle(pools[title])
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
    pieces, _pos = [], 0
    for m in _ZH_SENT.finditer(context):
        if m.group():
            pieces.append((m.start(), m.end()))
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
    # zh: one paragraph per CMRC article
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
    """Every answer to generate, in order: id, question, contexts, reference, origin, model."""
    articles = load(lang)
    rng = random.Random(f"{SEED}-{lang}")
    used: set = set()
    computed = COMPUTED[lang]
    anchors = {q["anchor"] for q in computed}
    for ai, art in enumerate(articles):  # keep computed paragraphs out of the sampled ones
        for pi, para in enumerate(art["paragraphs"]):
            if any(qa["id"] in anchors for qa in para["qas"]):
                used.add((ai, pi))
    chosen = pick(lang, articles, N_QUESTIONS, rng, used)
    source, key = ("squad", "squad_id") if lang == "en" else ("cmrc", "cmrc_id")
    items: list[dict] = []
    n = 0

    def add(question_id, question, contexts, reference, model, origin):
        nonlocal n
        n += 1
        items.append(
            {
                "id": f"local-{lang}-{n:04d}",
                "lang": lang,
                "source": source,
                "model": model,
                "split": split_of(question_id),
                "question": question,
                "contexts": contexts,
                "reference": reference,
                "answer": None,
                "origin": {key: question_id, "question_id": question_id, **origin},
            }
        )

    for qi, c in enumerate(chosen):
        pair = PAIRS[qi % len(PAIRS)]
        # the first of a pair gets "plain" on even questions; the parity flips every 6
        # questions, so every variant meets both prompt styles equally often
        styles = (
            ("plain", "detailed") if (qi + qi // len(PAIRS)) % 2 == 0 else ("detailed", "plain")
        )
        title = articles[c["article"]]["title"]
        for variant, style in zip(pair, styles, strict=False):
            ctx = build_context(lang, variant, articles, c, rng)
            add(
                c["qa"]["id"],
                c["qa"]["question"],
                ctx,
                c["answer"],
                MODEL,
                {
                    "kind": "sampled",
                    "variant": variant,
                    "prompt": style,
                    "title": title,
                    "answer_start": c["start"],
                },
            )
    # the extractive generator: 30 questions, gold or distractors context
    ext = [i for i in items if i["origin"]["variant"] in ("gold", "distractors")]
    seen, picked = set(), []
    for item in ext:
        if item["origin"]["question_id"] not in seen:
            seen.add(item["origin"]["question_id"])
            picked.append(item)
    for item in rng.sample(picked, N_EXTRACTIVE):
        add(
            item["origin"]["question_id"],
            item["question"],
            item["contexts"],
            item["reference"],
            "extractive",
            {
                **{k: v for k, v in item["origin"].items() if k not in (key, "question_id")},
                "prompt": None,
            },
        )
    # computed questions
    by_id = {
        qa["id"]: (art, para)
        for art in articles
        for para in art["paragraphs"]
        for qa in para["qas"]
    }
    for ci, q in enumerate(computed):
        art, para = by_id[q["anchor"]]
        qid = f"computed-{lang}-{ci + 1:02d}"
        add(
            qid,
            q["question"],
            [para["context"]],
            q["reference"],
            MODEL,
            {
                "kind": "computed",
                "variant": "gold",
                "prompt": ("plain", "detailed")[ci % 2],
                "title": art["title"],
            },
        )
        items[-1]["origin"][key] = q["anchor"]  # the paragraph's upstream question id
    # two-part questions: gold, and cut just before the later of the two answers
    for ti, q in enumerate(TWO_PART[lang]):
        art, para = by_id[q["anchors"][0]]
        starts = [
            gold_answer(next(qa for qa in para["qas"] if qa["id"] == a))[1] for a in q["anchors"]
        ]
        qid = f"twopart-{lang}-{ti + 1:02d}"
        styles = ("plain", "detailed") if ti % 2 == 0 else ("detailed", "plain")
        for variant, style in zip(("gold", "truncated"), styles, strict=True):
            ctx = (
                [para["context"]]
                if variant == "gold"
                else [para["context"][: max(starts)].rstrip()]
            )
            add(
                qid,
                q["question"],
                ctx,
                q["reference"],
                MODEL,
                {
                    "kind": "two_part",
                    "variant": variant,
                    "prompt": style,
                    "title": art["title"],
                    "upstream_ids": q["anchors"],
                },
            )
            items[-1]["origin"][key] = q["anchors"][0]
    return items


def chat(base_url: str, lang: str, style: str, question: str, contexts: list[str]) -> str:
    passages = "\n\n".join(f"[{i}] {c}" for i, c in enumerate(contexts, start=1))
    body = {
        "model": MODEL,
        "messages": [
            {"role": "system", "content": PROMPTS[lang][style]},
            {
                "role": "user",
                "content": PROMPTS[lang]["user"].format(passages=passages, question=question),
            },
        ],
        "max_tokens": MAX_TOKENS,
        "temperature": 0,
    }
    request = urllib.request.Request(
        base_url.rstrip("/") + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=900) as response:
        return json.loads(response.read())["choices"][0]["message"]["content"]


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
        path = out_dir / f"raw-{lang}.jsonl"
        with path.open("a", encoding="utf-8") as out:
            try:  # one writer per file: a second run on the same file would duplicate ids
                fcntl.flock(out, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                sys.exit(f"{path} is being written by another run")
            lines = path.read_text(encoding="utf-8").splitlines()
            done = {json.loads(line)["id"] for line in lines if line.strip()}
            todo = [i for i in items if i["id"] not in done]
            # extractive first (instant), then the model
            todo.sort(key=lambda i: i["model"] != "extractive")
            print(f"[{lang}] {len(items)} planned, {len(done)} done, {len(todo)} to go", flush=True)
            for k, item in enumerate(todo, 1):
                t0 = time.time()
                if item["model"] == "extractive":
                    item["answer"] = extractive(item["question"], item["contexts"])
                else:
                    item["answer"] = chat(
                        args.base_url,
                        lang,
                        item["origin"]["prompt"],
                        item["question"],
                        item["contexts"],
                    )
                out.write(json.dumps(item, ensure_ascii=False) + "\n")
                out.flush()
                print(
                    f"[{lang}] {k}/{len(todo)} {item['id']} {item['model']} "
                    f"{item['origin']['variant']} {time.time() - t0:.1f}s",
                    flush=True,
                )


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
    coarse_keywords} and per-answer {id, context_holds, grade, point_labels, notes}) into
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
        rows, seen, ungraded = [], set(), 0
        for line in (
            (Path(args.out_dir) / f"raw-{lang}.jsonl").read_text(encoding="utf-8").splitlines()
        ):
            item = json.loads(line)
            if item["id"] in seen:  # keep the first answer if a run was repeated
                continue
            seen.add(item["id"])
            if item["id"] not in answers:  # generated but not graded yet
                ungraded += 1
                continue
            q, a = questions[item["origin"]["question_id"]], answers[item["id"]]
            item.update(
                points=q["points"],
                coarse_keywords=q["coarse_keywords"],
                context_holds=a["context_holds"],
                grade=a["grade"],
                point_labels=a["point_labels"],
                grader="helper-blind-local",
            )
            if a.get("notes"):
                item["notes"] = a["notes"]
            item["origin"].pop("question_id", None)
            rows.append({k: item[k] for k in ORDER if k in item})
        rows.sort(key=lambda r: r["id"])
        dest = Path(args.dest) / f"{lang}.jsonl"
        dest.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
        )
        print(
            f"{dest}: {len(rows)} graded rows written, {ungraded} generated but ungraded left out"
        )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("run", help="generate the answers (resumable)")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--base-url", default="http://127.0.0.1:8000/v1")
    p.add_argument("--langs", nargs="+", default=["en", "zh"])
    p = sub.add_parser("plan", help="print the plan (no server needed)")
    p.add_argument("--langs", nargs="+", default=["en", "zh"])
    p = sub.add_parser("assemble", help="merge the label files into the final jsonl")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--labels", required=True)
    p.add_argument("--dest", default=str(HERE))
    p.add_argument("--langs", nargs="+", default=["en", "zh"])
    args = parser.parse_args(argv)
    if args.cmd == "run":
        run(args)
    elif args.cmd == "assemble":
        assemble(args)
    else:
        for lang in args.langs:
            for item in plan(lang):
                print(json.dumps(item, ensure_ascii=False))


if __name__ == "__main__":
    sys.exit(main())
