"""Known-answer controls: can this judge, on this run, tell a right answer from a wrong one?

A judged number is worth reading only if the judge ranks answers known to be right above
answers known to be wrong. Agreement with itself (``--repeats``) cannot show that: a small
model that calls every claim "supported" agrees with itself perfectly. So ``cofe judge`` also
judges, for up to ``--controls N`` samples that have a reference answer, answers whose truth
is known without a reader, each with the sample's question, passages and reference:

- **gold**: the sample's reference answer, handed over as the answer -- right, and not in the
  passages' words (a reference is written, not copied), so the measures read against the
  passages (Faithfulness, SourceFaithfulness, AnswerRelevancy, the information points) must
  see through a paraphrase to rank it high;
- **gold_passage**: the passage's sentences that cover most of the reference (where they cover
  enough of it; else the reference again) -- right, and
  not in the reference's words, so the measures read against the reference (ClaimPrecision,
  ClaimRecall, AnswerCorrectness, CorrectnessScore) must see through a paraphrase the other
  way (a reference handed over as the answer would match itself word for word, and pass a
  judge that only matches words);
- **foreign**: another sample's reference answer (another source document, another
  question): right somewhere else, wrong here.

A judged measure that does not rank its gold controls above the foreign ones -- AUC
(Mann-Whitney, ties a half) under ``MIN_AUC`` over at least ``MIN_PAIRS`` pairs, once one
standard error is taken off it (Hanley and McNeil, 1982: over ten pairs an AUC of 0.85 is as
often a judge that separates at 0.75, as the local model's Chinese ClaimPrecision did) --
measures nothing this run can use: ``cofe score`` leaves it unscored for every sample, with the AUC in
the reason, instead of printing a number. The same holds for the judge's information-point
labels (the share of a sample's points labelled conveyed): when they fail, the answer step
decides by the offline matcher alone.

Passing is necessary, not sufficient: another sample's answer is the easiest wrong answer
there is (it is about something else). ``benchmarks/judge_validity.py`` measures the harder
kinds (a false sentence added, a partial answer) on labelled answers. Not covered: the
context measures (ContextRecall, ContextPrecision), whose labels no control tests.

The passages: the sample's recorded source span when it has one (so a retrieval miss does
not make a right answer look unsupported), else the context the generator saw -- preferring,
when choosing controls, samples whose context holds every fragment of their information
points. With fewer than ``MIN_PAIRS`` usable samples no control is judged: the gate could
not decide, and the calls would be spent for nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from cofe._jsonl import read_jsonl
from cofe.judges._alpha import JUDGED, judged_values
from cofe.judges._prompts import language, reference_claims
from cofe.judges._replies import Judgement
from cofe.judges._sense import _content
from cofe.measures import GATED, ClaimLabels
from cofe.runlog import JUDGE_CONTROLS

if TYPE_CHECKING:  # _judge imports this module: the inputs' type only, no cycle
    from cofe.judges._judge import JudgeInputs

Control = Literal["gold", "gold_passage", "foreign"]

DEFAULT_PAIRS = 10
# under this many pairs the AUC is too uncertain to overrule a measure (a judge labelling at
# random reaches 0.85 over 8 pairs about 1 time in 100)
MIN_PAIRS = 8
MIN_AUC = 0.85
POINTS = "PointLabels"  # the information points' labels, gated like a measure
# the measures read against the reference: their right answer is the passage's sentences (the
# reference itself would pass any judge that matches words); a sentence carrying more than a
# short reference is partly unsupported by it, which lowers ClaimPrecision, but above another
# document's answer (none of whose claims the reference supports)
_AGAINST_REFERENCE = frozenset(m.name for m in GATED if m.NEEDS_REFERENCE)
_POINT_VALUE = {"support": 1.0, "partial": 0.5, "not_support": 0.0}


@dataclass(frozen=True)
class ControlGate:
    """What the controls say, per judged measure: its AUC and pairs, and the measures (and
    ``POINTS``) the judge failed on, each with the reason ``cofe score`` gives."""

    figures: Mapping[str, tuple[float | None, int]]
    failed: tuple[tuple[str, str], ...]
    note: str | None = None  # why there is no gate (too few controls), or None

    def summary(self) -> dict[str, str]:
        """Per measure, one line a person reads (the judge's report)."""
        if self.note:
            return {"controls": self.note}
        failed = dict(self.failed)
        out = {}
        for name, (value, pairs) in self.figures.items():
            if value is None or pairs < MIN_PAIRS:  # no reference, no points, no embeddings...
                out[name] = f"not gated: valued on {pairs} control pairs, {MIN_PAIRS} needed"
                continue
            verdict = "unscored" if name in failed else "scored"
            out[name] = f"AUC {value:.2f} over {pairs} pairs: {verdict}"
        return out


def control_inputs(items: Sequence[JudgeInputs], pairs: int) -> list[JudgeInputs]:
    """The control judgements to make: for up to ``pairs`` samples, its gold answers (the
    reference; the passage's sentences covering it, when they cover enough) and its foreign
    answer, each marked ``control``. None when fewer than ``MIN_PAIRS`` samples can be
    controls."""
    if pairs <= 0:
        return []
    seen: set[tuple[str, str]] = set()
    usable: list[tuple[JudgeInputs, tuple[str, ...], bool]] = []
    for item in items:
        reference = (item.reference or "").strip()
        key = (item.sample.query, reference)
        if not reference or key in seen:
            continue
        passages, trusted = _passages(item)
        if passages:
            seen.add(key)
            usable.append((item, passages, trusted))
    if len(usable) < max(MIN_PAIRS, 2):
        return []
    # samples whose passages are known to hold the right answer first (a retrieval miss would
    # make a right answer rightly unsupported), the others only to make up the number
    known = [u for u in usable if u[2]]
    rest = [u for u in usable if not u[2]]
    pool = [known[k] for k in _spread(len(known), pairs)]
    pool += [rest[k] for k in _spread(len(rest), pairs - len(pool))] if len(pool) < pairs else []
    out: list[JudgeInputs] = []
    for item, passages, _ in pool:
        partner = _partner([u[0] for u in usable], item)
        if partner is None:
            continue
        gold = replace(item, answer=item.reference or "", chunks=passages, control="gold")
        out.append(gold)
        sentence = _closest_sentences(passages, item.reference or "")
        if sentence is not None:
            out.append(replace(gold, answer=sentence, control="gold_passage"))
        out.append(replace(gold, answer=partner.reference or "", control="foreign"))
    return out if sum(c.control == "foreign" for c in out) >= MIN_PAIRS else []


def traffic_controls(items: Sequence[JudgeInputs], pairs: int) -> list[JudgeInputs]:
    """Controls for samples with no reference answer (live traffic), for up to ``pairs`` of
    them: a right answer copied from the sample's own context -- its sentences that cover most
    of what the sample's answer says (supported by construction, on the answer's topic) --,
    marked ``gold``, and another sample's answer, about another context, marked ``foreign``.

    They gate only the measures read against the passages (Faithfulness, AnswerRelevancy),
    and weakly: copied sentences are the easiest right answer there is, so passing says only
    that the judge does not call everything supported; failing says its numbers are noise.
    None when fewer than ``MIN_PAIRS`` samples can be controls."""
    if pairs <= 0:
        return []
    usable = [i for i in items if i.answer.strip() and any(c.strip() for c in i.chunks)]
    if len(usable) < max(MIN_PAIRS, 2):
        return []
    out: list[JudgeInputs] = []
    n = len(usable)
    for k in _spread(n, pairs):
        item = usable[k]
        copied = _closest_sentences(item.chunks, item.answer)
        passages = _units(item.context)
        partner = next(
            (
                other
                for other in (usable[(k + step) % n] for step in range(n // 2, n // 2 + n))
                if other is not item
                and other.context != item.context
                and _foreign(other.answer, item.answer, passages)
            ),
            None,
        )
        if copied is None or partner is None:
            continue
        out.append(replace(item, answer=copied, control="gold"))
        out.append(replace(item, answer=partner.answer, control="foreign"))
    return out if sum(c.control == "foreign" for c in out) >= MIN_PAIRS else []


def _foreign(answer: str, own: str, passages: set[str]) -> bool:
    """Another answer is wrong here: not this one, and mostly not in these passages."""
    theirs = _units(answer)
    return (
        bool(theirs)
        and answer.strip().casefold() != own.strip().casefold()
        and len(theirs & passages) < 0.5 * len(theirs)
    )


def _closest_sentences(passages: Sequence[str], reference: str) -> str | None:
    """The passages' sentences that together cover most of the reference's content: up to
    three, taken greedily while each adds a fifth of it, joined in passage order (a reference
    answers a question from a few sentences, in its own words). None when they cover under
    ``MIN_COVER`` of it, when they are the reference itself, or when one is more than a
    paragraph (a passage with no sentence punctuation)."""
    wanted = _units(reference)
    if not wanted:
        return None
    limit = max(400, 3 * len(reference))
    sentences = [s for p in passages for s in reference_claims(p) if len(s) <= limit]
    shared = [_units(s) & wanted for s in sentences]
    chosen: list[int] = []
    covered: set[str] = set()
    while len(chosen) < 3:
        gains = [
            (len(units - covered), -len(sentences[n]), n)
            for n, units in enumerate(shared)
            if n not in chosen
        ]
        if not gains:
            break
        gain, _, best = max(gains)
        if gain < (max(1, 0.2 * len(wanted)) if chosen else 1):
            break
        chosen.append(best)
        covered |= shared[best]
    text = " ".join(sentences[n] for n in sorted(chosen))
    if len(covered) < MIN_COVER * len(wanted) or text.casefold() == reference.strip().casefold():
        return None
    return text


def _units(text: str) -> set[str]:
    """Content words and Chinese characters, without the commonest function characters
    (shared by any two Chinese sentences)."""
    return {u for u in _content(text) if u not in _CJK_COMMON}


_CJK_COMMON = frozenset(
    "的了是在和与或及也都就而之其这那个为以于被把将有着过等们一不中上下人大年月日"
)
MIN_COVER = 0.3  # of the reference's content a right answer from the passage must carry


def _passages(item: JudgeInputs) -> tuple[tuple[str, ...], bool]:
    """The passages a control is judged on, and whether a right answer is known to be in them
    (a recorded source span; or a context holding every fragment of every point)."""
    where = item.sample.source
    if where is not None and where.end is not None and item.source:
        return (item.source,), True
    if not any(c.strip() for c in item.chunks):
        return (), False
    text = item.context.casefold()
    covered = bool(item.points) and all(
        any(alternative.casefold() in text for alternative in fragment)
        for point in item.points
        for fragment in point
    )
    return item.chunks, covered


def _spread(n: int, k: int) -> list[int]:
    """``k`` indices spread evenly over ``range(n)`` (all of them when ``k >= n``)."""
    if k <= 0:
        return []
    if k >= n:
        return list(range(n))
    return [i * n // k for i in range(k)]


def _partner(usable: Sequence[JudgeInputs], item: JudgeInputs) -> JudgeInputs | None:
    """Another sample whose reference is wrong for ``item``: half the list away, in the same
    language, with another question and another reference -- from another source document
    when there is one; else (an eval set on one document) another question's, provided its
    reference is mostly not in ``item``'s passages (questions of one document share spans)."""
    index = next(i for i, u in enumerate(usable) if u is item)
    n = len(usable)
    tongue = language(item.sample.query)
    others = [usable[(index + step) % n] for step in range(n // 2, n // 2 + n)]
    others = [
        o
        for o in others
        if o is not item and not _same_answer(item, o) and language(o.sample.query) == tongue
    ]
    elsewhere = next((o for o in others if not _same_document(item, o)), None)
    if elsewhere is not None:
        return elsewhere
    passages = _units(f"{item.context}\n{item.source or ''}")
    for other in others:
        if _foreign(other.reference or "", item.reference or "", passages):
            return other
    return None


def _same_document(a: JudgeInputs, b: JudgeInputs) -> bool:
    sa, sb = a.sample.source, b.sample.source
    return sa is not None and sb is not None and sa.doc == sb.doc


def _same_answer(a: JudgeInputs, b: JudgeInputs) -> bool:
    ra, rb = (a.reference or "").strip().casefold(), (b.reference or "").strip().casefold()
    qa, qb = a.sample.query.strip().casefold(), b.sample.query.strip().casefold()
    return ra == rb or qa == qb


def read_controls(run_dir: str | os.PathLike[str]) -> dict[tuple[str, Control], Judgement]:
    """The controls judged so far, by (sample id, kind of control); the newest line wins."""
    path = Path(run_dir) / JUDGE_CONTROLS
    out: dict[tuple[str, Control], Judgement] = {}
    if path.exists():
        for _line, item in read_jsonl(path, Judgement):
            if isinstance(item, Judgement) and item.control is not None:
                out[(item.sample_id, item.control)] = item
    return out


def control_gate(
    controls: Iterable[Judgement],
    labels: Callable[[Judgement], ClaimLabels],
    *,
    model: str | None = None,
    versions: frozenset[str] | None = None,
    traffic: bool = False,
) -> ControlGate:
    """The gate from the judged controls (those of ``model`` and ``versions`` when given: a
    control says nothing about another model's labels). ``labels`` turns a judgement into the
    measures' labels (``labels_of``). ``traffic``: the controls are ``traffic_controls``
    (their reasons name what they are)."""
    values: dict[Control, dict[str, list[float]]] = {
        "gold": {},
        "gold_passage": {},
        "foreign": {},
    }
    pairs = 0
    kept = [
        c
        for c in controls
        if c.status == "judged"
        and (model is None or c.model == model)
        and (versions is None or c.prompt_version in versions)
    ]
    by_sample: dict[str, dict[Control, Judgement]] = {}
    for c in kept:
        if c.control is not None:
            by_sample.setdefault(c.sample_id, {})[c.control] = c
    for judged in by_sample.values():
        if "foreign" not in judged or "gold" not in judged:
            continue
        pairs += 1
        # a sample with no passage answer (its sentences cover too little of the reference)
        # controls the measures that look for the reference with the reference itself
        judged.setdefault("gold_passage", judged["gold"])
        for kind, judgement in judged.items():
            for name, value in _values(labels(judgement)).items():
                values[kind].setdefault(name, []).append(value)
    if pairs < MIN_PAIRS:
        return ControlGate(
            {},
            (),
            note=f"not gated: {pairs} sample(s) with judged controls, {MIN_PAIRS} needed (cofe "
            "judge --controls N; a run needs that many samples with a reference answer, whose "
            "wrong answer another sample's reference can be)",
        )
    figures: dict[str, tuple[float | None, int]] = {}
    failed: list[tuple[str, str]] = []
    for name in [m.name for m in JUDGED] + [POINTS]:
        against: Control = "gold_passage" if name in _AGAINST_REFERENCE else "gold"
        high, low = values[against].get(name, []), values["foreign"].get(name, [])
        separation, valued = auc(high, low), min(len(high), len(low))
        figures[name] = (separation, valued)
        if separation is None or valued < MIN_PAIRS:
            continue  # too few valued controls (no reference, no points...): not gated
        error = auc_error(separation, len(high), len(low))
        if separation - error < MIN_AUC:
            what = "its information-point labels" if name == POINTS else name
            right = _TRAFFIC_GOLD if traffic else _GOLD_NAMES[against]
            wrong = "other traces' answers" if traffic else "other samples' reference answers"
            ranked = "windows" if traffic else "runs"
            failed.append(
                (
                    name,
                    f"the judge failed its controls on {what}: it did not rank right answers "
                    f"({right}) above {wrong} -- AUC {separation:.2f} ± {error:.2f} over "
                    f"{valued} pairs, {MIN_AUC} needed beyond its error; its values would rank "
                    f"{ranked} on noise",
                )
            )
    return ControlGate(figures, tuple(failed))


_TRAFFIC_GOLD = "sentences copied from each trace's context"  # traffic_controls' right answers
_GOLD_NAMES = {
    "gold": "the reference answers",
    "gold_passage": "the passages' sentences closest to the references, else the references",
}


def _values(labels: ClaimLabels) -> dict[str, float]:
    """Each judged measure's value on one control (and the share of points conveyed)."""
    out = judged_values(labels)
    valued = [_POINT_VALUE[p] for p in labels.points if p is not None]
    if valued:
        out[POINTS] = sum(valued) / len(valued)
    return out


def auc_error(value: float, highs: int, lows: int) -> float:
    """The standard error of an AUC of ``value`` over ``highs`` and ``lows`` values (Hanley
    and McNeil, 1982): what a handful of controls can and cannot show."""
    q1, q2 = value / (2 - value), 2 * value * value / (1 + value)
    variance = (
        value * (1 - value) + (highs - 1) * (q1 - value**2) + (lows - 1) * (q2 - value**2)
    ) / (highs * lows)
    return float(max(variance, 0.0) ** 0.5)


def auc(high: list[float], low: list[float]) -> float | None:
    """P(a value of ``high`` > one of ``low``), ties a half (Mann-Whitney U over the pairs);
    None if either is empty."""
    if not high or not low:
        return None
    wins = sum((h > lo) + 0.5 * (h == lo) for h in high for lo in low)
    return wins / (len(high) * len(low))
