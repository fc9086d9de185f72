"""Replies checked for sense, not only for JSON.

A small model writes valid JSON that says nothing about the sample: it lists the worked
example's claims, labels claims that do not exist, copies the example's labels and its
correctness value, or calls a claim supported by the context and not by the source that
holds the context. Each is either repaired (recorded in ``Judgement.repairs`` as
``"code: detail"``, counted in ``cofe judge``'s summary) or makes the judgement unscored
with the reason; none passes as a number.

The codes:

* ``copied_example`` -- a claim or question naming the invented example's entities, which
  neither the question nor the answer names: dropped;
* ``not_in_answer`` -- a claim sharing under half its content words with the question and the
  answer (the model answered the question instead of splitting the answer): dropped;
* ``uncovered_sentence`` -- a sentence of the answer with under half its content words in the
  claims kept (the model answered the question instead, or left a sentence out -- often the
  one false sentence after right ones): the sentence is added as a claim, verbatim;
* ``no_such_claim`` -- a label for a claim number the sample does not have: dropped;
* ``second_label`` -- a second label for one claim: dropped (the first is kept);
* ``asked_again`` -- claims the checks reply left unlabelled (a small model labels as many
  claims as its example has): asked once more, alone, in a narrower call;
* ``context_in_source`` -- supported by the context, not by the source, although every context
  chunk lies inside the source: the source label is set to supported (the context's text *is*
  the source's text, so what one states the other does).

Unscored: every claim dropped (``claims: ...``); the answer-claim labels repeat the example's
labels for a different number of claims (``checks: ...``). Across samples: a correctness score
equal to the example's on a suspicious share of a run's judgements (``correctness_echo``) is
not used; answer-claim context labels that follow the example's pattern (not supported,
supported, not supported, in that order) on a suspicious share of them (``label_echo``: by
chance one sample in four or eight) make every claim label of the run unscored -- the local
1.5B model labelled three of four benchmark answers so, whatever the answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar

from cofe.judges._prompts import (
    EXAMPLE_CLAIM_LABELS,
    EXAMPLE_CORRECTNESS,
    EXAMPLE_MARKERS,
)
from cofe.judges._prompts import reference_claims as sentences
from cofe.matching import is_cjk

# the revision of these checks, kept with each judgement: 2 added uncovered_sentence
SENSE_REVISION = 2
ECHO_MIN_SAMPLES = 8  # fewer judgements cannot tell an echo from a run of equal answers
ECHO_SHARE = 0.75  # the example's correctness on at least this share of them: an echo
IN_ANSWER_SHARE = 0.5  # a claim's content words found in the question or answer, at least
COVERED_SHARE = 0.5  # an answer sentence's content words found in the claims kept, at least
# words about answering, not about the world ("Based on the context, here is the answer.",
# "I hope this helps!", "I don't know."): a sentence of these alone is no claim to add
_ABOUT_ANSWERING = frozenset(
    "based according context passage passages text document documents provided given answer "
    "answers question questions here hope helps help information following key points summary "
    "know don sure sorry cannot can unable mention mentions mentioned say says said state "
    "states stated note let me you your we our".split()
)
_ABOUT_ANSWERING_ZH = re.compile(
    "根据|按照|上下文|文中|文章|材料|段落|原文|提到|提及|所述|答案|回答|问题|如下|以下|总结|"
    "信息|希望|帮助|抱歉|无法|不知道|没有|我们|我|你"
)
# a sentence to add needs this much left once those are set aside: two words (a CJK character
# counts a half: Chinese words are mostly two characters)
MIN_SENTENCE_WEIGHT = 2.0

_WORD = re.compile(r"[^\W_]+")
# words that carry no content of their own (a claim "The X is Y." shares "the", "is" with
# anything); CJK text is compared character by character instead
_STOP = frozenset(
    "a an the of in on at to for by with from and or but is are was were be been being it its "
    "this that these those as not no do does did has have had he she they them his her their "
    "there which who whom whose what when where why how than then so such also".split()
)


def _content(text: str) -> set[str]:
    """Content words (lower case, two letters or more) and every CJK character."""
    units: set[str] = set()
    for word in _WORD.findall(text.casefold()):
        cjk = [ch for ch in word if is_cjk(ch)]
        units.update(cjk)
        rest = "".join(ch if not is_cjk(ch) else " " for ch in word).split()
        units.update(w for w in rest if len(w) > 1 and w not in _STOP)
    return units


def copies_example(text: str, given: str) -> bool:
    """Does ``text`` name the worked example's invented entities that ``given`` (the question
    and the answer) does not?"""
    low, seen = text.casefold(), given.casefold()
    return any(marker in low and marker not in seen for marker in EXAMPLE_MARKERS)


def in_answer(claim: str, given: str) -> bool:
    """Are at least half the claim's content words in the question or the answer?"""
    words = _content(claim)
    if not words:
        return True  # nothing to compare (punctuation, a number alone): not refused for that
    return len(words & _content(given)) >= IN_ANSWER_SHARE * len(words)


# an answer with fewer content words (a name, a date) may answer a question sharing none
MIN_ANSWER_WORDS = 4


def from_answer(asked: str, answer: str) -> bool:
    """Is ``asked`` a question the answer could answer: does it share a content word with it?
    A small model asked for questions the answer answers often writes the user's question
    again (its own parts), whatever the answer says: about another topic, that shares none."""
    words = _content(answer)
    return len(words) < MIN_ANSWER_WORDS or bool(_content(asked) & words)


def keep_answer_claims(
    claims: Sequence[str], questions: Sequence[str], question: str, answer: str
) -> tuple[list[str], list[str], list[str]]:
    """The claims and questions a reply may keep, and the repairs made: claims copied from the
    example or not taken from the answer are dropped, and so are copied questions; a sentence
    of the answer the claims leave out is added, as written."""
    given = f"{question}\n{answer}"
    kept, repairs = [], []
    for claim in claims:
        if copies_example(claim, given):
            repairs.append(f"copied_example: answer claim {claim!r} is the worked example's")
        elif not in_answer(claim, given):
            repairs.append(f"not_in_answer: answer claim {claim!r} is not in the answer")
        else:
            kept.append(claim)
    if kept:  # no claim kept: unscored by the caller, nothing to complete
        covered = set().union(*(_content(claim) for claim in kept))
        for sentence in sentences(answer):
            words = _content(sentence)
            if not _states_something(sentence):
                continue
            if len(words & covered) < COVERED_SHARE * len(words):
                kept.append(sentence)
                covered |= words  # the same sentence twice is added once
                repairs.append(
                    f"uncovered_sentence: answer sentence {sentence!r} is in no claim: "
                    "judged as written"
                )
    kept_questions = []
    for asked in questions:
        if copies_example(asked, given):
            repairs.append(f"copied_example: question {asked!r} is the worked example's")
        else:
            kept_questions.append(asked)
    return kept, kept_questions, repairs


def _states_something(sentence: str) -> bool:
    """Does the sentence say something about the world, besides words about answering?"""
    words = _content(_ABOUT_ANSWERING_ZH.sub(" ", sentence)) - _ABOUT_ANSWERING
    cjk = sum(1 for w in words if is_cjk(w))
    return len(words) - cjk + cjk / 2 >= MIN_SENTENCE_WEIGHT


class _Numbered(Protocol):
    claim: int


class _ContextLabel(_Numbered, Protocol):
    context: bool


L = TypeVar("L", bound=_Numbered)


def first_labels(labels: Iterable[L], count: int, what: str) -> tuple[dict[int, L], list[str]]:
    """One label per claim number below ``count`` (the first given), and the repairs: a label
    for a claim that does not exist, or a second label for one, is dropped."""
    by_claim: dict[int, L] = {}
    repairs = []
    for label in labels:
        if label.claim >= count:
            repairs.append(
                f"no_such_claim: a label for {what} claim {label.claim}; there are {count}"
            )
        elif label.claim in by_claim:
            repairs.append(f"second_label: a second label for {what} claim {label.claim}")
        else:
            by_claim[label.claim] = label
    return by_claim, repairs


def copies_example_labels(labels: Sequence[_ContextLabel], count: int) -> bool:
    """Do the answer-claim labels repeat the example's (claim numbers and context labels, in
    order) while the answer has another number of claims? (A reply labelling the example.)"""
    if count == len(EXAMPLE_CLAIM_LABELS):
        return False  # the same pattern may be this answer's own
    pattern = tuple((label.claim, bool(label.context)) for label in labels)
    return pattern == tuple((claim, context) for claim, context, _s, _r in EXAMPLE_CLAIM_LABELS)


def _collapsed(text: str) -> str:
    return " ".join(text.split())


def context_inside_source(chunks: Sequence[str], source: str | None) -> bool:
    """Does every context chunk lie inside the source passage (white space aside)?"""
    if source is None or not chunks:
        return False
    whole = _collapsed(source)
    return all(_collapsed(chunk) in whole for chunk in chunks if chunk.strip())


def correctness_echo(values: Sequence[int]) -> str | None:
    """Why a run's correctness scores are not used: the worked example's value on a
    suspicious share of them (``values``: one per judged sample with a score), or None."""
    if len(values) < ECHO_MIN_SAMPLES:
        return None
    same = sum(1 for v in values if v == EXAMPLE_CORRECTNESS)
    if same >= ECHO_SHARE * len(values):
        return (
            f"the judge gave the worked example's correctness ({EXAMPLE_CORRECTNESS}) to "
            f"{same} of {len(values)} samples: an echo of the prompt, not a score"
        )
    return None


def follows_example(context_labels: Sequence[bool]) -> bool:
    """Do an answer's context labels (two or more) begin as the example's do?"""
    pattern = tuple(context for _claim, context, _s, _r in EXAMPLE_CLAIM_LABELS)
    n = len(context_labels)
    return n >= 2 and tuple(context_labels[: len(pattern)]) == pattern[: min(n, len(pattern))]


def label_echo(label_lists: Sequence[Sequence[bool]]) -> str | None:
    """Why a run's claim labels are not used: on a suspicious share of the judged answers with
    two claims or more, the context labels follow the worked example's pattern; or None."""
    eligible = [labels for labels in label_lists if len(labels) >= 2]
    if len(eligible) < ECHO_MIN_SAMPLES:
        return None
    same = sum(1 for labels in eligible if follows_example(labels))
    if same >= ECHO_SHARE * len(eligible):
        return (
            f"the judge's context labels follow the worked example's pattern on {same} of "
            f"{len(eligible)} answers with two claims or more: an echo of the prompt, "
            "not a judgement"
        )
    return None


def repair_code(repair: str) -> str:
    return repair.split(":", 1)[0]
