"""``cofe judge RUN``: an LLM judge labels each answer's claims (stored next to the run).

Two calls per answered sample: the claims of the answer (from the question and
the answer only; the reference's claims are its sentences, with no call), then
each claim checked against the context the generator saw, the source document
and the reference (a third call asks again, alone, about claims the second left
unlabelled). Replies are checked for sense: what is repaired is counted
under "repairs", what cannot be is an unscored sample with its reason, and a
correctness score echoing the prompt's example is not used ("correctness_echo"). Resumable: run it again and only samples not yet
judged with the same inputs are sent. ``cofe score RUN`` then reports
Faithfulness, SourceFaithfulness, ClaimPrecision, ClaimRecall and
AnswerCorrectness, and the ``unsupported_claims`` verdict.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cofe._distributed import connect, disconnect
from cofe._errors import InputError
from cofe.cli._commands import HELP
from cofe.cli._run import make_cache
from cofe.llm import JSON_MODES, LOCAL_MODEL_ID

if TYPE_CHECKING:
    from cofe.pipeline import Embedder

_LOCAL_NOTE = f"for `cofe llm serve`'s {LOCAL_MODEL_ID}"
# a hosted endpoint answers calls at once in seconds; the small local model answers one
# request at a time in tens of seconds, and writes valid JSON only in JSON mode
_DEFAULTS = {"concurrency": 4, "timeout": 120.0, "json_mode": "off"}
_LOCAL_DEFAULTS = {"concurrency": 1, "timeout": 600.0, "json_mode": "json_object"}


def llm_defaults(args: argparse.Namespace) -> argparse.Namespace:
    """Fill the endpoint options left unset: small-model settings for the local model that
    ``cofe llm serve`` runs, the usual ones for any other."""
    model = args.model or os.environ.get("OPENAI_MODEL")
    chosen = _LOCAL_DEFAULTS if model == LOCAL_MODEL_ID else _DEFAULTS
    for name, value in chosen.items():
        if getattr(args, name, None) is None:
            setattr(args, name, value)
    return args


def add_llm_options(p: argparse.ArgumentParser, *, limit: str) -> None:
    """The endpoint options every LLM pass takes (``cofe judge``, ``cofe monitor judge``,
    ``cofe annotate``): where, how many calls at once, how long a request may take, the
    JSON mode, and ``--limit N`` -- at most N of what ``limit`` names (a first look at a
    slow model; the next pass takes the rest)."""
    p.add_argument("--base-url", help="endpoint base URL (default: $OPENAI_BASE_URL)")
    p.add_argument("--model", help="model name (default: $OPENAI_MODEL)")
    p.add_argument("--concurrency", type=int, help=f"calls at once (default 4; {_LOCAL_NOTE}: 1)")
    p.add_argument(
        "--timeout", type=float, help=f"seconds per request (default 120; {_LOCAL_NOTE}: 600)"
    )
    p.add_argument(
        "--json-mode",
        choices=JSON_MODES,
        help="ask the endpoint to constrain replies to JSON (default off; "
        f"{_LOCAL_NOTE}: json_object, which small models need)",
    )
    p.add_argument(
        "--limit", type=int, metavar="N", help=f"{limit} (a first look; run again for the rest)"
    )


def add_steps_option(p: argparse.ArgumentParser) -> None:
    """``--steps/--no-steps`` (``cofe judge``, ``cofe monitor judge``); ``steps_default``
    fills it when neither is given."""
    p.add_argument(
        "--steps",
        action=argparse.BooleanOptionalAction,
        help="step by step: after the claims call, one call per claim instead of one "
        "checks call (more, simpler calls; for a small model that mislabels a "
        f"dense reply); the summary shows the calls (default: on {_LOCAL_NOTE}, "
        "where it was measured to separate right from wrong answers far better; off "
        "otherwise: other models are not measured here)",
    )


def steps_default(args: argparse.Namespace) -> bool:
    """``--steps`` as given, else the mode measured for the model (benchmarks/README.md,
    "Judge validity"): the step mode for the local model."""
    if args.steps is None:
        args.steps = (args.model or os.environ.get("OPENAI_MODEL")) == LOCAL_MODEL_ID
    return bool(args.steps)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "judge",
        help=HELP["judge"],
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("run_dir", type=Path)
    add_llm_options(p, limit="judge at most N samples not yet judged")
    p.add_argument(
        "--repeats",
        type=int,
        default=1,
        metavar="K",
        help="judge every sample K times and report the judge's agreement with itself",
    )
    add_steps_option(p)
    p.add_argument(
        "--controls",
        type=int,
        default=10,
        metavar="N",
        help="first judge known-answer controls for N samples with a reference answer (3 "
        "judgements each: the reference and the passage's closest sentence, right, and another "
        "document's reference, wrong, each judged as the answer); a measure the judge cannot "
        "tell them apart on is unscored by cofe score (default 10; 0: none; else at least 8)",
    )
    p.add_argument("--cache", type=Path, help="cache folder for replies ('none' disables)")
    p.add_argument(
        "--no-probe",
        action="store_true",
        help="do not check that the endpoint answers before starting",
    )
    p.add_argument(
        "--no-embeddings",
        action="store_true",
        help="skip AnswerRelevancy/AnswerSimilarity (they load the packaged MiniLM)",
    )
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="judge on a Dask cluster (scheduler address, or 'local'); workers read "
        'OPENAI_API_KEY from their own environment; needs pip install "cofe[dask]"',
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="count the samples and estimate the calls and prompt tokens; call nothing",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    llm_defaults(args)
    steps_default(args)
    from cofe.judges import (
        CONTROL_MIN_PAIRS,
        POINT_LABELS,
        checks_messages,
        claim_messages,
        claims_messages,
        control_inputs,
        judge_inputs,
        judge_run,
        reference_claim_messages,
        reference_claims,
    )
    from cofe.llm import Endpoint, LLMClient, estimate_tokens  # the client: only when judging

    if args.repeats < 1:
        raise InputError(f"--repeats must be at least 1, not {args.repeats}")
    if args.controls < 0 or 0 < args.controls < CONTROL_MIN_PAIRS:
        raise InputError(
            f"--controls must be 0 (none) or at least {CONTROL_MIN_PAIRS} (fewer cannot decide "
            f"anything), not {args.controls}"
        )
    if args.dry_run:
        items, unanswered = judge_inputs(args.run_dir)
        controls = control_inputs(items, args.controls)
        tokens = calls = 0
        for item in [*items, *controls]:
            q = item.sample.query
            references = reference_claims(item.reference)
            messages = [*claims_messages(q, item.answer)]
            if args.steps:  # a claim a sentence of the answer; one call each, and the whole
                sentences = reference_claims(item.answer)
                for sentence in sentences:
                    messages += claim_messages(
                        q, sentence, item.context, item.source, item.reference
                    )
                for statement in references:
                    messages += reference_claim_messages(q, statement, item.answer, item.context)
                messages += checks_messages(
                    q, item.answer, item.context, item.source, item.reference, [], [], item.points
                )
                calls += 2 + len(sentences) + len(references)
            else:  # the checks call, with the answer itself standing in for its claims
                messages += checks_messages(
                    q,
                    item.answer,
                    item.context,
                    item.source,
                    item.reference,
                    [item.answer],
                    references,
                    item.points,
                )
                # claims, checks, and a follow-up for claims the checks left unlabelled
                calls += 3
            tokens += sum(estimate_tokens(m["content"]) for m in messages)
        print(
            json.dumps(
                {
                    "samples_to_judge": len(items),
                    "controls_to_judge": len(controls),
                    "not_answered": unanswered,
                    "repeats": args.repeats,
                    "steps": args.steps,
                    # a reply's JSON repair aside
                    "calls_at_most": calls * args.repeats,
                    "prompt_tokens_estimate": tokens * args.repeats,
                },
                indent=2,
            )
        )
        return 0
    endpoint = Endpoint.from_env(base_url=args.base_url, model=args.model, timeout=args.timeout)
    if not args.no_probe:  # fail in seconds, naming the URL, before reading the run
        endpoint.probe()
    client = LLMClient(endpoint, cache=make_cache(args.cache), json_mode=args.json_mode)
    cluster = connect(args.dask) if args.dask else None
    try:
        report = judge_run(
            args.run_dir,
            client,
            concurrency=args.concurrency,
            progress=sys.stderr.isatty(),
            embedder=_embedder(args),  # on a cluster: says whether workers load it
            repeats=args.repeats,
            cluster=cluster,
            limit=args.limit,
            steps=args.steps,
            controls=args.controls,
        )
    finally:
        if cluster is not None:
            disconnect(cluster)
    asked = report.judged + report.unscored
    summary = {
        **report.__dict__,
        "steps": args.steps,
        # what a sample's judgement cost in this pass (the step-by-step mode's price, shown;
        # the controls' calls are counted apart, in control_calls)
        "calls_per_sample": round((client.usage.calls - report.control_calls) / asked, 2)
        if asked
        else None,
        "usage": client.usage.to_dict(),
        "judgements": str(args.run_dir / "judgements.jsonl"),
    }
    if args.repeats > 1:
        from cofe.judges import judge_agreement

        agreement = judge_agreement(args.run_dir)
        agreement.to_csv(args.run_dir / "judge_agreement.csv", index=False)
        summary["agreement"] = json.loads(agreement.to_json(orient="records"))
    print(json.dumps(summary, indent=2, ensure_ascii=False))
    failed = [name for name, line in report.controls.items() if line.endswith("unscored")]
    measures = [name for name in failed if name != POINT_LABELS]
    if measures:  # the lines a person must not miss under the JSON
        print(
            "cofe judge: this judge failed its known-answer controls on "
            f'{", ".join(measures)}: cofe score leaves them unscored (see "controls" above)',
            file=sys.stderr,
        )
    if POINT_LABELS in failed:
        print(
            "cofe judge: this judge failed its known-answer controls on its information-point "
            "labels: the answer step ignores them and decides by the offline matcher",
            file=sys.stderr,
        )
    return 0


def _embedder(args: argparse.Namespace) -> Embedder | None:
    """The packaged MiniLM when the dense extra is installed (else the measures say why)."""
    if args.no_embeddings:
        return None
    try:
        from cofe.pipeline import shared_embedder

        embedder = shared_embedder()
        embedder.model  # noqa: B018 (load now: a missing package fails here, not per sample)
        return embedder
    except Exception as error:  # no sentence-transformers / model package: measured without
        print(
            f"cofe judge: no embeddings ({type(error).__name__}: {error}); "
            "AnswerRelevancy and AnswerSimilarity stay unscored",
            file=sys.stderr,
        )
        return None
