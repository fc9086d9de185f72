"""Is the gate's printed "detectable" drop right, and does its false-alarm rate stay at alpha?

    python benchmarks/gate_power.py [--worlds 20] [--draws 100] [--seed 43] [--json FILE]

A simulation beside the gate's false-alarm test (tests/check/test_simulation.py), for eval
sets of 2, 5, 20 and 64 source documents (40, 20, 10 and 5 questions each). Each *world*
draws per-document effects and per-question success rates (two information points per
question, as tests/check's noise pairs do); a run is one draw of every question's value
from its rates, so two runs of one world differ by noise only.

Per world:

* the **pilot**: two noise-only runs, and the detectable drop ``cofe check`` prints for a
  single ``max_drop`` rule on their paired differences (``Inference.power``, the function
  the gate calls; checked against ``check_results`` itself on the first world);
* **power at the printed drop**: ``--draws`` new pairs whose second run has every rate
  lowered so that the expected mean falls by exactly the printed drop; the share the
  paired test (``Inference.paired``, the gate's test) finds significant at alpha and
  downward -- 80 % if the printed drop is right;
* **the drop actually found 80 % of the time**: the same at 0.6x ... 1.4x the printed
  drop, interpolated where the share crosses 80 %; its ratio to the printed drop, and
  whether it is within 20 %;
* **false alarms**: ``--draws`` noise-only pairs; the share found significant (either
  way), which should stay at or below alpha.

A fifth set has the document sizes of the shipped example (262 questions: three documents
of 60, twenty of 1 to 5), where a few documents dominate the sign-flip test.

The tests follow ``choose_inference``: over questions below 20 documents, clustered by
document from 20 on. For 2 and 5 documents the table also shows what clustering by
document (the rule before issue 43) could detect: nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cofe.compare import choose_inference

ALPHA = 0.05
SETS = ((2, 40), (5, 20), (20, 10), (64, 5))  # documents, questions per document
# the shipped example's eval set: 262 questions, three documents of 60 and twenty small ones
UNEQUAL = (60, 60, 60, 5, 5, 5, 5, 5, 5, 5, 5, 5, 4, 4, 4, 4, 4, 4, 4, 3, 3, 2, 1)
MULTIPLIERS = (0.6, 0.8, 1.0, 1.2, 1.4)


def world(
    rng: np.random.Generator, documents: int, per: int | tuple[int, ...]
) -> tuple[pd.Series, np.ndarray]:
    sizes = per if isinstance(per, tuple) else (per,) * documents
    docs = np.repeat(np.arange(documents), sizes)
    n = len(docs)
    ids = pd.Index([f"q{i:04d}" for i in range(n)])
    effect = rng.normal(0, 0.8, documents)[docs]
    rates = 1 / (1 + np.exp(-(0.2 + effect + rng.normal(0, 1.0, n))))
    return pd.Series([f"doc{d}" for d in docs], index=ids), rates


def draw(rng: np.random.Generator, rates: np.ndarray, shift: float = 0.0) -> np.ndarray:
    return rng.binomial(2, np.clip(rates - shift, 0, 1)) / 2


def shift_for(rates: np.ndarray, drop: float) -> float:
    """The rate shift whose expected fall of the mean is ``drop`` (clipping at 0 counted)."""
    low, high = 0.0, 1.0
    for _ in range(50):
        mid = (low + high) / 2
        if float(np.mean(rates - np.clip(rates - mid, 0, 1))) < drop:
            low = mid
        else:
            high = mid
    return high


def found_share(rng, inference, ids, rates, drop, draws, seed) -> float:
    shift = shift_for(rates, drop)
    hits = 0
    for k in range(draws):
        old, new = draw(rng, rates), draw(rng, rates, shift)
        test = inference.paired(new, old, ids, resamples=499, seed=seed + k)
        hits += test.p_value < ALPHA and test.difference.estimate < 0
    return hits / draws


def crossing(multipliers, shares, target=0.8) -> float:
    """Where the detection share crosses ``target``, linearly interpolated (nan: never)."""
    for (m0, s0), (m1, s1) in zip(
        zip(multipliers, shares, strict=True),
        zip(multipliers[1:], shares[1:], strict=True),
        strict=False,
    ):
        if s0 < target <= s1:
            return m0 + (target - s0) * (m1 - m0) / (s1 - s0)
    if shares[0] >= target:
        return multipliers[0]
    return math.nan


def gate_prints(sources, old, new) -> float | None:
    """The detectable drop ``cofe check`` prints for one max_drop rule on these runs."""
    from cofe.check import GateRule, Kind, check_results
    from tests.check.conftest import synthetic

    base = synthetic({"answer/PointRecall": old}, list(sources.to_numpy()), run_id="old")
    run = synthetic({"answer/PointRecall": new}, list(sources.to_numpy()), run_id="new")
    rule = GateRule(Kind.MAX_DROP, "answer/PointRecall", 0.02)
    (outcome,) = check_results(run, [rule], base, resamples=499).outcomes
    return outcome.detectable


def one_set(documents: int, per: int | tuple[int, ...], worlds: int, draws: int, seed: int) -> dict:
    rng = np.random.default_rng(seed + documents)
    printed, at_printed, ratios, false_alarms, clustered_old = [], [], [], [], []
    unit = ""
    for w in range(worlds):
        sources, rates = world(rng, documents, per)
        ids = sources.index
        inference = choose_inference(sources)
        unit = inference.unit
        old, new = draw(rng, rates), draw(rng, rates)
        seen = inference.power(new, old, ids, alpha=ALPHA, drop=0.02)
        if w == 0:  # the gate prints the same figure
            by_gate = gate_prints(sources, old, new)
            assert by_gate is not None and abs(by_gate - seen.detectable) < 1e-9, (
                by_gate,
                seen.detectable,
            )
        forced = choose_inference(sources, min_documents=1)  # always by document
        clustered_old.append(forced.power(new, old, ids, alpha=ALPHA).detectable)
        mdd = seen.detectable
        printed.append(mdd)
        if math.isinf(mdd):
            continue
        shares = [
            found_share(rng, inference, ids, rates, m * mdd, draws, 1000 * w + 10 * i)
            for i, m in enumerate(MULTIPLIERS)
        ]
        at_printed.append(shares[MULTIPLIERS.index(1.0)])
        ratios.append(crossing(MULTIPLIERS, shares))
        alarms = 0
        for k in range(draws):
            a, b = draw(rng, rates), draw(rng, rates)
            alarms += inference.paired(a, b, ids, resamples=499, seed=77 + k).p_value < ALPHA
        false_alarms.append(alarms / draws)
    finite = [r for r in ratios if not math.isnan(r)]
    within = sum(abs(r - 1) <= 0.2 for r in finite)
    return {
        "documents": documents,
        "questions": sum(per) if isinstance(per, tuple) else documents * per,
        "sizes": "unequal (the example's)" if isinstance(per, tuple) else "equal",
        "unit": unit,
        "printed": float(np.median(printed)),
        "found_at_printed": float(np.mean(at_printed)) if at_printed else math.nan,
        "ratio_median": float(np.median(finite)) if finite else math.nan,
        "within_20": f"{within}/{len(ratios)}",
        "false_alarms": float(np.mean(false_alarms)) if false_alarms else math.nan,
        "clustered_detectable": float(np.median(clustered_old)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, default=20)
    parser.add_argument("--draws", type=int, default=100)
    parser.add_argument("--seed", type=int, default=43)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    started = time.perf_counter()
    rows = []
    sets: list[tuple[int, int | tuple[int, ...]]] = [*SETS, (len(UNEQUAL), UNEQUAL)]
    for documents, per in sets:
        rows.append(one_set(documents, per, args.worlds, args.draws, args.seed))
        print(f"  {documents} documents done ({time.perf_counter() - started:.0f} s)", flush=True)
    print(
        f"\n{args.worlds} worlds x {args.draws} draws per point, alpha {ALPHA}, power 0.8, "
        f"seed {args.seed}, {time.perf_counter() - started:.0f} s\n"
    )
    print(
        "| documents | questions | document sizes | tested over | printed detectable drop (median) | found at "
        "the printed drop | drop found 80 % of the time / printed (median) | within 20 % | "
        "false alarms (alpha 0.05) | clustered by document: detectable |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        old = r["clustered_detectable"]
        print(
            f"| {r['documents']} | {r['questions']} | {r['sizes']} | {r['unit']}s | {r['printed']:.3f} | "
            f"{r['found_at_printed']:.0%} | {r['ratio_median']:.2f} | {r['within_20']} | "
            f"{r['false_alarms']:.1%} | {'none' if math.isinf(old) else f'{old:.3f}'} |"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
