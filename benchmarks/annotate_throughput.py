"""Annotation throughput and cost per accepted sample, against the loopback scripted server.

    python benchmarks/annotate_throughput.py [--segments 48] [--latency 1.0]

Segments of the shipped SQuAD articles (400 tokens) are annotated by a
scripted model (``tests/annotators/_scripted.py``: one query per type, keywords
copied from the passage) that answers each call after ``--latency`` seconds,
like a hosted model writing a ~450-token reply. Reported per concurrency:
wall time, segments/s, accepted samples/s, calls and tokens per accepted
sample (tokens as the server counts them: words), and check rejections. The
LLM cache is off so that every run makes real calls.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annotators import AnnotateConfig, annotate  # noqa: E402
from cofe.evalset.importers import import_squad  # noqa: E402
from cofe.llm import Endpoint, LLMClient  # noqa: E402
from cofe.pipeline import documents_from_texts  # noqa: E402
from cofe.report._text import format_table  # noqa: E402
from cofe.testing import ScriptedOpenAI  # noqa: E402
from examples.build_squad_bm25 import DATA  # noqa: E402
from tests.annotators._scripted import draft  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", type=int, default=48)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--concurrency", default="1,4,16")
    args = parser.parse_args()
    squad = import_squad(DATA / "squad" / "squad-v1.1-dev-part-b.json")
    documents = documents_from_texts(sorted(squad.documents.items())[:8])
    rows = []
    with ScriptedOpenAI(draft, latency=args.latency) as server:
        for n in (int(c) for c in args.concurrency.split(",")):
            client = LLMClient(
                Endpoint.from_env(base_url=server.base_url, model="scripted", api_key="none")
            )
            config = AnnotateConfig(concurrency=n, max_segments=args.segments)
            with tempfile.TemporaryDirectory() as tmp:
                started = time.perf_counter()
                summary = annotate(
                    None,
                    Path(tmp) / "set.jsonl",
                    client,
                    config,
                    documents=documents,
                    progress=False,
                )
                wall = time.perf_counter() - started
            d = summary.to_dict()
            rows.append(
                [
                    n,
                    summary.segments,
                    summary.accepted,
                    f"{wall:.1f}",
                    f"{summary.segments / wall:.2f}",
                    f"{summary.accepted / wall:.2f}",
                    d["calls_per_accepted"],
                    d["tokens_per_accepted"],
                    ", ".join(f"{k} {v}" for k, v in sorted(summary.rejected_by_check.items())),
                ]
            )
    print(
        f"scripted model latency {args.latency} s per call, {args.segments} segments of 400 tokens"
    )
    print(
        format_table(
            [
                "concurrency",
                "segments",
                "accepted",
                "wall s",
                "segments/s",
                "accepted/s",
                "calls/accepted",
                "tokens/accepted",
                "rejected by check",
            ],
            rows,
        )
    )


if __name__ == "__main__":
    main()
