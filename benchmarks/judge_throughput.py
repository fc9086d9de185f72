"""`cofe judge` cost and throughput against the loopback scripted server, and RAGAS's call counts.

    python benchmarks/judge_throughput.py [--samples 48] [--latency 0.5] [--concurrency 1,4,16]

The shipped example run (``examples/squad-bm25``: SQuAD and CMRC questions,
recorded contexts, extractive answers) is judged by a *scripted stand-in* for
a hosted model (every call answered after ``--latency`` seconds; claims are
the answer's sentences, a claim counts as supported when most of its words are
in the passage). Reported per concurrency: wall time, samples/s, calls and
prompt tokens per sample (the client's usage; tokens as the scripted server
counts them: words). No cache, no embeddings: every call is real HTTP.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cofe.judges import judge_run  # noqa: E402
from cofe.llm import Endpoint, LLMClient  # noqa: E402
from cofe.testing import ScriptedOpenAI  # noqa: E402

EXAMPLE = ROOT / "examples" / "squad-bm25"
_FIELD = re.compile(
    r"^(Question|Answer|Reference|Context|Source|Answer claims|"
    r"Reference claims|问题|回答|参考答案|上下文|来源|回答断言|参考断言)[:：]\s?(.*)$",
    re.M,
)
_NUMBERED = re.compile(r"(\d+)\. (.*?)(?= \d+\. |$)")


def _fields(text: str) -> dict[str, str]:
    return {m[1]: m[2] for m in _FIELD.finditer(text)}


def _supported(claim: str, passage: str) -> bool:
    words = set(re.findall(r"\w+", claim.lower()))
    return bool(words) and len(words & set(re.findall(r"\w+", passage.lower()))) > len(words) / 2


def stand_in(messages, request) -> str:
    user = messages[-1]["content"]
    f = _fields(user)
    if "Answer claims" in f or "回答断言" in f:
        claims = [c for _, c in _NUMBERED.findall(f.get("Answer claims") or f.get("回答断言", ""))]
        refs = [c for _, c in _NUMBERED.findall(f.get("Reference claims") or f.get("参考断言", ""))]
        context, source = f.get("Context") or f.get("上下文", ""), f.get("Source") or f.get("来源")
        reference, answer = (
            f.get("Reference") or f.get("参考答案"),
            f.get("Answer") or f.get("回答", ""),
        )
        return json.dumps(
            {
                "answer_claims": [
                    {
                        "claim": i,
                        "context": _supported(c, context),
                        **({"source": _supported(c, source)} if source else {}),
                        **({"reference": _supported(c, reference)} if reference else {}),
                    }
                    for i, c in enumerate(claims)
                ],
                "reference_claims": [
                    {"claim": i, "answer": _supported(c, answer)} for i, c in enumerate(refs)
                ],
            },
            ensure_ascii=False,
        )
    answer = f.get("Answer") or f.get("回答", "")
    reference = f.get("Reference") or f.get("参考答案", "")
    sentences = [s.strip() for s in re.split(r"(?<=[.!?。！？])\s*", answer) if s.strip()]
    return json.dumps(
        {
            "answer_claims": sentences[:3],
            "reference_claims": [reference] if reference and reference != "(none)" else [],
            "questions": [f.get("Question") or f.get("问题", "")],
            "noncommittal": False,
        },
        ensure_ascii=False,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=48)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--concurrency", default="1,4,16")
    args = parser.parse_args()
    print(f"scripted stand-in latency {args.latency} s per call, {args.samples} samples")
    print(
        "| concurrency | samples | judged | wall s | samples/s | calls/sample | "
        "prompt tokens/sample | completion tokens/sample |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    with ScriptedOpenAI(stand_in, latency=args.latency) as server:
        for n in (int(c) for c in args.concurrency.split(",")):
            with tempfile.TemporaryDirectory() as tmp:
                run = Path(tmp) / "run"
                shutil.copytree(EXAMPLE, run, ignore=shutil.ignore_patterns("scores*"))
                _keep_first(run, args.samples)
                client = LLMClient(Endpoint(server.base_url, "stand-in", "none", timeout=30))
                started = time.perf_counter()
                report = judge_run(run, client, concurrency=n, controls=0)
                wall = time.perf_counter() - started
            u, done = client.usage, report.judged + report.unscored
            print(
                f"| {n} | {done} | {report.judged} | {wall:.1f} | {done / wall:.2f} | "
                f"{u.calls / done:.2f} | {u.prompt_tokens / done:.0f} | "
                f"{u.completion_tokens / done:.0f} |"
            )


def _keep_first(run: Path, n: int) -> None:
    """Judge only the first ``n`` samples of the eval set (the others lose their records)."""
    keep = [line for line in (run / "evalset.jsonl").read_text().splitlines()[:n]]
    ids = {json.loads(line)["id"] for line in keep}
    lines = (run / "samples.jsonl").read_text().splitlines()
    kept = [line for line in lines if json.loads(line)["sample_id"] in ids]
    (run / "samples.jsonl").write_text("\n".join(kept) + "\n")


if __name__ == "__main__":
    main()
