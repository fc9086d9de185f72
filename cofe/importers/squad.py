"""SQuAD v1.1 and CMRC 2018 (same format) to eval samples.

One sample per question. Its answers become one information point whose only
keyword is the set of distinct answer texts (``any_of``); the gold paragraph
is the source span in the exported article document.

Coarse keywords -- the rule (``derive_coarse``):

Candidates are contiguous token spans of the question (up to 8 words, or up
to 12 CJK characters) that do not start or end with a stopword, contain no
interrogative (what/which/who/..., 什么/哪/谁/多少/...), do not overlap an
answer, are not a bad label, and occur in the gold paragraph (strict match).

1. ``name``: the candidate that is a proper-noun phrase (every non-stopword
   capitalised or a number, not counting the question's first word) with the
   most words;
2. ``title``: else the article title (underscores read as spaces), if the
   paragraph contains it;
3. ``question``: else the longest candidate;
4. ``none``: else no coarse keyword; the sample is scored without a coarse filter.

So a derived coarse keyword is always in the gold paragraph; the importer
reports how often one was found and how often it sits within 300 characters
of the answer (a proxy for "in the same chunk").

Bad answer labels are reported, by record (``data[i].paragraphs[j].qas[k].answers[m]``),
and the sample is still imported with the flag in ``meta["label_flags"]``:

* ``answer_start_mismatch``: ``answer_start`` is missing, -1, or does not point
  at the answer text (the span is left out of ``meta["answer_starts"]``);
* ``answer_mid_word``: the span starts or ends inside a word -- a Latin letter or
  digit of the span touches one just outside it ("AXR" inside "JAXR"). CJK
  text has no word boundaries and is never flagged.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path
from typing import cast

from pydantic import ValidationError

from cofe._errors import InputError, InputProblem
from cofe.evalset import AnyOf, EvalSample, Keyword, QueryType, SourceRef
from cofe.importers._result import ImportResult, load_json
from cofe.matching import (
    STOPWORDS,
    MatchMode,
    is_cjk,
    label_problem,
    normalize_strict,
    strict_tokens,
    surface,
)

_INTERROGATIVES_EN = frozenset(
    ["what", "which", "who", "whom", "whose", "when", "where", "why", "how"]
)
_INTERROGATIVES_ZH = (
    "什么",
    "哪",
    "谁",
    "多少",
    "几",
    "怎么",
    "怎样",
    "如何",
    "为何",
    "为什么",
    "吗",
)
_UNSAFE = re.compile(r'[\\/:*?"<>|\s]+')
NEAR_ANSWER_CHARS = 300


def derive_coarse(
    question: str, paragraph: str, answers: list[str], title: str
) -> tuple[str | None, str]:
    """The coarse keyword for a question, and which step of the rule chose it."""
    raw = strict_tokens(question, fold=False)
    tokens = [token.casefold() for token in raw]
    norm_paragraph = normalize_strict(paragraph)
    norm_answers = [normalize_strict(answer) for answer in answers]
    best_name: tuple[int, int, int] | None = None
    best_any: tuple[int, int] | None = None
    name_text = any_text = None
    for start in range(len(tokens)):
        for end in range(start + 1, len(tokens) + 1):
            span = tokens[start:end]
            cjk = all(is_cjk(t) for t in span)
            if end - start > (12 if cjk else 8):
                break
            if span[0] in STOPWORDS or span[-1] in STOPWORDS:
                continue
            text = surface(span)
            if any(t in _INTERROGATIVES_EN for t in span) or any(
                w in text for w in _INTERROGATIVES_ZH
            ):
                continue
            normalized = " " + " ".join(span) + " "
            if label_problem(normalized, MatchMode.STRICT) is not None:
                continue
            if any(normalized in a or (a.strip() and a in normalized) for a in norm_answers):
                continue
            if normalized not in norm_paragraph:
                continue
            # a proper-noun phrase: every non-stopword is capitalised or a number ("Super Bowl 50"),
            # one at least capitalised; the question's first word is capitalised anyway
            content = [i for i in range(start, end) if tokens[i] not in STOPWORDS]
            capitalised = [raw[i][:1].isupper() for i in content]
            if (
                start > 0
                and any(capitalised)
                and all(
                    cap or raw[i].isdigit() for cap, i in zip(capitalised, content, strict=True)
                )
            ):
                key = (len(content), len(text), -start)
                if best_name is None or key > best_name:
                    best_name, name_text = key, surface(raw[start:end])
            key2 = (len(text), -start)
            if best_any is None or key2 > best_any:
                best_any, any_text = key2, surface(raw[start:end])
    if name_text is not None:
        return name_text, "name"
    readable = title.replace("_", " ").strip()
    if readable and normalize_strict(readable) and normalize_strict(readable) in norm_paragraph:
        return readable, "title"
    if any_text is not None:
        return any_text, "question"
    return None, "none"


MISMATCH = "answer_start_mismatch"
MID_WORD = "answer_mid_word"


def _latin_or_digit(char: str) -> bool:
    """A letter of the Latin script or an ASCII digit: the characters a word is made of here."""
    if char.isascii():
        return char.isalnum()
    return char.isalpha() and unicodedata.name(char, "").startswith("LATIN")


def _label_flag(context: str, text: str, start: object) -> str | None:
    """What is wrong with one answer span of ``context``, as a flag; None if nothing is."""
    if not isinstance(start, int) or isinstance(start, bool) or start < 0:
        return f"{MISMATCH}: answer_start is {start!r}, not an offset into the paragraph"
    found = context[start : start + len(text)]
    if found != text:
        nearest = _nearest(context, text, start)
        where = f"; the text occurs at {nearest}" if nearest is not None else ""
        return (
            f"{MISMATCH}: answer_start {start} points at {_short(found)}, "
            f"not at the answer {_short(text)}{where}"
        )
    # the span without surrounding spaces
    lo = start + len(text) - len(text.lstrip())
    hi = start + len(text.rstrip())
    cuts = []
    if lo > 0 and _latin_or_digit(context[lo - 1]) and _latin_or_digit(context[lo]):
        word_lo = lo - 1
        while word_lo > 0 and _latin_or_digit(context[word_lo - 1]):
            word_lo -= 1
        word_hi = lo
        while word_hi < len(context) and _latin_or_digit(context[word_hi]):
            word_hi += 1
        cuts.append((context[lo : min(word_hi, hi)], context[word_lo:word_hi]))
    if hi < len(context) and _latin_or_digit(context[hi - 1]) and _latin_or_digit(context[hi]):
        word_hi = hi + 1
        while word_hi < len(context) and _latin_or_digit(context[word_hi]):
            word_hi += 1
        word_lo = hi - 1
        while word_lo > 0 and _latin_or_digit(context[word_lo - 1]):
            word_lo -= 1
        cut = (context[max(word_lo, lo) : hi], context[word_lo:word_hi])
        if cut not in cuts:
            cuts.append(cut)
    if not cuts:
        return None
    return f"{MID_WORD}: " + " and ".join(f"{part!r} inside {word!r}" for part, word in cuts)


def _short(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _nearest(context: str, text: str, start: int) -> int | None:
    """The occurrence of ``text`` in ``context`` closest to ``start``, if any."""
    best, at = None, context.find(text)
    while at >= 0:
        if best is None or abs(at - start) < abs(best - start):
            best = at
        at = context.find(text, at + 1)
    return best


def _doc_name(title: str, taken: set[str]) -> str:
    base = _UNSAFE.sub("_", title).strip("._") or "article"
    name, n = f"{base}.txt", 1
    while name in taken:
        n += 1
        name = f"{base}-{n}.txt"
    taken.add(name)
    return name


def import_squad(path: str | os.PathLike[str], *, dataset: str | None = None) -> ImportResult:
    path = Path(path)
    data = load_json(path)
    articles = data.get("data") if isinstance(data, dict) else None
    if not isinstance(articles, list):
        raise InputError(
            InputProblem(str(path), None, "data", "expected SQuAD format: {'data': [articles]}")
        )
    dataset = dataset or path.stem
    result = ImportResult([])
    taken: set[str] = set()
    counts: dict[str, int] = {
        "articles": 0,
        "paragraphs": 0,
        "questions": 0,
        "imported": 0,
        "coarse_from_name": 0,
        "coarse_from_title": 0,
        "coarse_from_question": 0,
        "coarse_none": 0,
        "coarse_near_answer": 0,
        "answer_start_mismatch": 0,
        "answer_mid_word": 0,
        "label_flagged": 0,
    }
    seen_ids: set[str] = set()
    for a, article in enumerate(articles):
        where_a = f"data[{a}]"
        try:
            title = str(article["title"])
            paragraphs = article["paragraphs"]
        except (KeyError, TypeError) as error:
            result.problems.append(InputProblem(str(path), None, where_a, f"missing field {error}"))
            continue
        name = _doc_name(title, taken)
        parts: list[str] = []
        offset = 0
        counts["articles"] += 1
        for p, paragraph in enumerate(paragraphs):
            where_p = f"{where_a}.paragraphs[{p}]"
            context = paragraph.get("context") if isinstance(paragraph, dict) else None
            if not isinstance(context, str):
                result.problems.append(
                    InputProblem(str(path), None, f"{where_p}.context", "missing or not text")
                )
                continue
            if parts:
                offset += 2  # the "\n\n" joining paragraphs
            start = offset
            parts.append(context)
            offset += len(context)
            counts["paragraphs"] += 1
            for q, qa in enumerate(paragraph.get("qas", [])):
                counts["questions"] += 1
                imported = _question(
                    path,
                    f"{where_p}.qas[{q}]",
                    qa,
                    context,
                    start,
                    title,
                    name,
                    dataset,
                    counts,
                    result,
                )
                if imported is None:
                    continue
                sample, label_problems = imported
                if sample.id in seen_ids:
                    result.problems.append(
                        InputProblem(
                            str(path),
                            None,
                            f"{where_p}.qas[{q}].id",
                            f"duplicate id {sample.id!r}; skipped",
                        )
                    )
                    continue
                seen_ids.add(sample.id)
                result.samples.append(sample)
                result.problems.extend(label_problems)
                counts["label_flagged"] += bool(label_problems)
        result.documents[name] = "\n\n".join(parts)
    counts["imported"] = len(result.samples)
    found = (
        counts["coarse_from_name"] + counts["coarse_from_title"] + counts["coarse_from_question"]
    )
    result.stats = {
        **counts,
        "coarse_found_share": round(found / max(counts["imported"], 1), 4),
        "coarse_near_answer_share": round(counts["coarse_near_answer"] / max(found, 1), 4),
    }
    return result


def _question(
    path: Path,
    where: str,
    qa: object,
    context: str,
    start: int,
    title: str,
    doc_name: str,
    dataset: str,
    counts: dict[str, int],
    result: ImportResult,
) -> tuple[EvalSample, list[InputProblem]] | None:
    """The sample of one question and the problems of its answer labels (reported only if the
    sample is kept); None, with the problem reported, when it cannot be imported."""
    if not isinstance(qa, dict):
        result.problems.append(InputProblem(str(path), None, where, "expected an object"))
        return None
    answers = [
        (m, a)
        for m, a in enumerate(qa.get("answers") or [])
        if isinstance(a, dict) and str(a.get("text", "")).strip()
    ]
    if not answers:
        result.problems.append(
            InputProblem(str(path), None, f"{where}.answers", "no answer text; question skipped")
        )
        return None
    texts = list(dict.fromkeys(str(a["text"]).strip() for _, a in answers))
    keyword: Keyword = texts[0] if len(texts) == 1 else AnyOf(any_of=texts)
    starts: list[int] = []
    flags: dict[str, list[int]] = {}  # flag -> the answers it concerns: one problem per flag
    for m, answer in answers:
        s = answer.get("answer_start")
        text = str(answer["text"])
        flag = _label_flag(context, text, s)
        # a span _label_flag accepts (None, or only cut mid-word) has an int start
        if (flag is None or flag.startswith(MID_WORD)) and isinstance(s, int):
            starts.append(start + s)
        if flag is not None:
            counts[flag.split(":")[0]] += 1
            flags.setdefault(flag, []).append(m)
    label_problems: list[InputProblem] = []
    for flag, indices in flags.items():
        also = "".join(f", answers[{m}]" for m in indices[1:])
        label_problems.append(
            InputProblem(
                str(path),
                None,
                f"{where}.answers[{indices[0]}]",
                f"{flag}"
                + (f" (same in {also[2:]})" if also else "")
                + "; the sample is kept, flagged in meta.label_flags",
            )
        )
    coarse, how = derive_coarse(str(qa.get("question", "")), context, texts, title)
    counts["coarse_none" if how == "none" else f"coarse_from_{how}"] += 1
    if coarse and starts:
        lo = max(0, starts[0] - start - NEAR_ANSWER_CHARS)
        hi = starts[0] - start + len(texts[0]) + NEAR_ANSWER_CHARS
        if normalize_strict(coarse) in normalize_strict(context[lo:hi]):
            counts["coarse_near_answer"] += 1
    try:
        sample = EvalSample(
            id=str(qa.get("id") or where),
            # pydantic checks the type: a missing or non-text question is a ValidationError,
            # reported below
            query=cast(str, qa.get("question")),
            query_type=QueryType.FACTUAL,
            coarse_keywords=[coarse] if coarse else [],
            fine_keywords=[[keyword]],
            reference_answer=texts[0],
            source=SourceRef(doc=doc_name, start=start, end=start + len(context)),
            meta={
                "dataset": dataset,
                "title": title,
                "answer_starts": starts,
                "coarse_rule": how,
                **({"label_flags": list(flags)} if flags else {}),
            },
        )
    except ValidationError as error:
        problem = InputProblem.from_validation(str(path), None, error)
        result.problems.append(
            InputProblem(str(path), None, f"{where}.{problem.field}", problem.message)
        )
        return None
    return sample, label_problems
