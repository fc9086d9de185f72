"""Automatic checks of drafted queries (what the CoFE-RAG authors did by hand).

1. ``verbatim``: every coarse and fine keyword must occur in the segment after
   the matcher's strict normalisation. A near miss (case, a typo, a dropped
   word: rapidfuzz alignment ≥ ``REPAIR_MIN_RATIO``) is replaced by the
   segment's own text at the best-matching span, widened to whole words, and
   counted as *repaired*; anything further off rejects the query.
2. ``labels``: a keyword the matcher would refuse (a single letter, stopwords
   only...) rejects the query.
3. ``coarse_anchor``: at least one coarse keyword must also occur in the query
   or the document's title; coarse keywords that do not are dropped.
4. ``duplicate``: a query equal (after normalisation) or near-equal
   (token-set ratio ≥ ``NEAR_DUPLICATE``) to one already accepted is dropped.

What verbatim checks cannot see (checked first, in this order):

* ``question``: the query must ask something -- end with a question mark, open with
  an instruction ("Explain ...", "Compare ...", "请说明..."), or, in Chinese, hold an
  interrogative (什么, 哪, 如何, 吗 ...); a statement is rejected;
* ``type``: the type must fit the query -- comparative names a comparison (compare,
  than, differ, 比较, 区别 ...), tutorial asks how to do something (how to, steps,
  如何, 步骤 ...), analytical asks why or how (why, how, explain, cause, 为什么, 原因
  ...); a query that fits none is relabelled factual (a repair: the query stays);
* ``own_keywords`` (after ``verbatim`` and ``labels``): an information point whose
  every fragment the query already states is not something the answer must convey:
  dropped (a repair); a query holding all its points states its own answer and is
  rejected.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from annotators._reply import DraftQuery
from cofe.matching import MatchMode, is_cjk, label_problem, normalize_strict

REPAIR_MIN_RATIO = 85.0
NEAR_DUPLICATE = 90.0
CHECKS = ("question", "type", "verbatim", "labels", "own_keywords", "coarse_anchor", "duplicate")

# what makes a query a question (English: a question mark, or an instruction's verb first)
_INSTRUCTIONS = frozenset(
    "explain describe compare contrast list name give identify outline summarize summarise "
    "state tell show find discuss define analyse analyze evaluate determine calculate".split()
)
_ZH_ASKING = re.compile(
    r"什么|谁|哪|怎么|怎样|如何|为什么|为何|多少|几|吗|呢|是否|请|比较|区别|说明|描述|介绍"
)
# what makes each type fit its query (lower case; Chinese by substring)
_TYPE_CUES: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    "comparative": (
        re.compile(
            r"\b(?:compar\w*|contrast\w*|differ\w*|versus|vs|than|between|both|similar\w*|"
            r"unlike|whereas|more|less|fewer|larger|smaller|bigger|higher|lower|"
            r"older|younger|longer|shorter|earlier|later|better|worse)\b"
        ),
        re.compile(r"比较|相比|对比|区别|不同|差异|异同|更|之间|两者|哪个|哪一"),
    ),
    "tutorial": (
        re.compile(
            r"\bhow (?:to|do|does|did|can|could|should|would|is|are|was|were)\b|"
            r"\b(?:steps?|procedure|process|method|instructions?|guide)\b"
        ),
        re.compile(r"如何|怎么|怎样|步骤|方法|流程|过程"),
    ),
    "analytical": (
        re.compile(
            r"\b(?:why|how|explain\w*|caus\w*|reasons?|effects?|impacts?|led|lead|"
            r"result\w*|role|significan\w*|relat\w*|influenc\w*|affect\w*|purpose)\b"
        ),
        re.compile(r"为什么|为何|原因|如何|怎样|怎么|影响|作用|意义|分析|关系|导致|结果|目的"),
    ),
}


def is_question(query: str) -> bool:
    """Does the query ask something (see the module's ``question`` check)?"""
    text = query.strip()
    if text.endswith(("?", "？")):
        return True
    if any(is_cjk(ch) for ch in text):
        return bool(_ZH_ASKING.search(text))
    first = text.split(maxsplit=1)[0].casefold().strip(",:;") if text else ""
    return first in _INSTRUCTIONS


def fits_type(query: str, kind: str) -> bool:
    """Does the query read as a question of ``kind``? (Factual fits any question.)"""
    if kind not in _TYPE_CUES:
        return True
    english, chinese = _TYPE_CUES[kind]
    return bool(english.search(query.casefold()) or chinese.search(query))


_WORD_CHAR = re.compile(r"\w")


@dataclass
class CheckStats:
    """Per check: items that passed, were repaired, were rejected."""

    passed: Counter[str] = field(default_factory=Counter)
    repaired: Counter[str] = field(default_factory=Counter)
    rejected: Counter[str] = field(default_factory=Counter)

    def counts(self) -> dict[str, dict[str, int]]:
        """The raw counters, as a progress line stores them."""
        return {
            "passed": dict(self.passed),
            "repaired": dict(self.repaired),
            "rejected": dict(self.rejected),
        }

    def add_counts(self, counts: dict[str, dict[str, int]]) -> None:
        self.passed.update(counts.get("passed", {}))
        self.repaired.update(counts.get("repaired", {}))
        self.rejected.update(counts.get("rejected", {}))

    def to_dict(self) -> dict[str, dict[str, float | None]]:
        """Per check: counts, and the acceptance rate (``None`` when nothing was checked)."""
        out: dict[str, dict[str, float | None]] = {}
        for check in CHECKS:
            seen = self.passed[check] + self.repaired[check] + self.rejected[check]
            out[check] = {
                "checked": seen,
                "passed": self.passed[check],
                "repaired": self.repaired[check],
                "rejected": self.rejected[check],
                "acceptance": round((seen - self.rejected[check]) / seen, 4) if seen else None,
            }
        return out


@dataclass(frozen=True)
class Checked:
    """A query that passed every check (keywords possibly repaired), or the reason it failed."""

    draft: DraftQuery
    type: str = ""  # the type accepted: the draft's, or factual when that did not fit
    coarse: list[str] = field(default_factory=list)
    fine: list[list[str]] = field(default_factory=list)
    repairs: list[dict[str, str]] = field(default_factory=list)
    rejected: str | None = None
    check: str | None = None


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """Grow a span to whole words (CJK characters are words of their own)."""

    def inside_word(i: int) -> bool:
        return 0 <= i < len(text) and bool(_WORD_CHAR.match(text[i])) and not is_cjk(text[i])

    while start > 0 and inside_word(start) and inside_word(start - 1):
        start -= 1
    while end < len(text) and inside_word(end - 1) and inside_word(end):
        end += 1
    return start, end


def locate(keyword: str, segment: str, normalized_segment: str) -> tuple[str | None, float]:
    """(text as it occurs in the segment, match ratio); ``None`` when nothing is close enough."""
    norm = normalize_strict(keyword)
    if norm and norm in normalized_segment:
        return keyword, 100.0
    if not keyword.strip():
        return None, 0.0
    alignment = fuzz.partial_ratio_alignment(keyword.casefold(), segment.casefold())
    if alignment is None or alignment.score < REPAIR_MIN_RATIO:
        return None, alignment.score if alignment else 0.0
    start, end = _widen(segment, alignment.dest_start, alignment.dest_end)
    candidate = segment[start:end].strip(" ,.;:!?，。；：！？、")
    if candidate and normalize_strict(candidate) in normalized_segment:
        return candidate, alignment.score
    return None, alignment.score


class Checker:
    """Checks drafts in order; remembers accepted queries to catch duplicates."""

    def __init__(self) -> None:
        self.accepted_queries: list[str] = []
        self._seen: set[str] = set()

    def remember(self, query: str) -> None:
        norm = normalize_strict(query)
        self._seen.add(norm)
        self.accepted_queries.append(norm)

    def check(self, draft: DraftQuery, segment: str, title: str, stats: CheckStats) -> Checked:
        normalized = normalize_strict(segment)
        repairs: list[dict[str, str]] = []

        if not is_question(draft.query):
            stats.rejected["question"] += 1
            return Checked(
                draft, rejected=f"the query is not a question: {draft.query!r}", check="question"
            )
        stats.passed["question"] += 1
        kind = draft.type
        if fits_type(draft.query, kind):
            stats.passed["type"] += 1
        else:
            repairs.append(
                {
                    "field": "type",
                    "from": kind,
                    "to": "factual",
                    "why": "the query does not read as " + kind,
                }
            )
            kind = "factual"
            stats.repaired["type"] += 1
        typed = len(repairs)  # the repairs before the keywords' own

        def fix_all(keywords: list[str], where: str) -> tuple[list[str], str | None]:
            """The keywords as the segment writes them, or the first one it does not hold."""
            fixed: list[str] = []
            for j, keyword in enumerate(keywords):
                found, ratio = locate(keyword, segment, normalized)
                if found is None:
                    return fixed, keyword
                if found != keyword:
                    repairs.append(
                        {
                            "field": f"{where}[{j}]",
                            "from": keyword,
                            "to": found,
                            "ratio": f"{ratio:.0f}",
                        }
                    )
                fixed.append(found)
            return fixed, None

        groups = [("coarse keyword", "coarse_keywords", draft.coarse_keywords)] + [
            ("fine keyword", f"fine_keywords[{i}]", point)
            for i, point in enumerate(draft.fine_keywords)
        ]
        fixed_groups = []
        for label, where, keywords in groups:
            fixed, missing = fix_all(keywords, where)
            if missing is not None:
                stats.rejected["verbatim"] += 1
                return Checked(
                    draft, rejected=f"{label} {missing!r} is not in the segment", check="verbatim"
                )
            fixed_groups.append(fixed)
        coarse, fine = fixed_groups[0], fixed_groups[1:]
        (stats.repaired if len(repairs) > typed else stats.passed)["verbatim"] += 1

        for keyword in [*coarse, *(k for point in fine for k in point)]:
            problem = label_problem(normalize_strict(keyword), MatchMode.STRICT)
            if problem:
                stats.rejected["labels"] += 1
                return Checked(draft, rejected=f"keyword {keyword!r}: {problem}", check="labels")
        stats.passed["labels"] += 1

        query_text = normalize_strict(draft.query)
        kept = [
            point for point in fine if not all(normalize_strict(k) in query_text for k in point)
        ]
        if not kept:
            stats.rejected["own_keywords"] += 1
            return Checked(
                draft,
                rejected="the query holds every fine keyword it asks for "
                "(it states its own answer)",
                check="own_keywords",
            )
        for i, point in enumerate(fine):
            if point not in kept:
                repairs.append(
                    {
                        "field": f"fine_keywords[{i}]",
                        "from": " | ".join(point),
                        "to": "",
                        "why": "the query states it",
                    }
                )
        (stats.repaired if len(kept) < len(fine) else stats.passed)["own_keywords"] += 1
        fine = kept

        anchor_text = normalize_strict(draft.query + " \n " + title)
        anchored = [k for k in coarse if normalize_strict(k) in anchor_text]
        if not anchored:
            stats.rejected["coarse_anchor"] += 1
            return Checked(
                draft,
                rejected="no coarse keyword occurs in the query or the document "
                f"title ({', '.join(map(repr, coarse))})",
                check="coarse_anchor",
            )
        (stats.repaired if len(anchored) < len(coarse) else stats.passed)["coarse_anchor"] += 1

        norm_query = normalize_strict(draft.query)
        if norm_query in self._seen:
            stats.rejected["duplicate"] += 1
            return Checked(draft, rejected="duplicate of an accepted query", check="duplicate")
        if self.accepted_queries:
            near = process.extractOne(
                norm_query,
                self.accepted_queries,
                scorer=fuzz.token_set_ratio,
                score_cutoff=NEAR_DUPLICATE,
            )
            if near is not None:
                stats.rejected["duplicate"] += 1
                return Checked(
                    draft,
                    rejected=f"near-duplicate ({near[1]:.0f}%) of an accepted "
                    f"query: {near[0].strip()!r}",
                    check="duplicate",
                )
        stats.passed["duplicate"] += 1
        self.remember(draft.query)
        return Checked(draft, type=kind, coarse=anchored, fine=fine, repairs=repairs)
