"""A pipeline factory for the crash/resume tests (imported by ``cofe run --pipeline``)."""

from __future__ import annotations

import os
import time

from cofe.adapters import PythonPipeline
from cofe.runlog import Chunk

CHUNKS = [
    Chunk(chunk_id=f"c{i}", doc_id="d", text=f"fact number {i} is {i * 7}") for i in range(50)
]


def build() -> PythonPipeline:
    delay = float(os.environ.get("COFE_TEST_DELAY", "0.01"))

    def retrieve(query: str):
        time.sleep(delay)
        n = sum(map(ord, query)) % 50
        return [(CHUNKS[n], 1.0), (CHUNKS[(n + 1) % 50], 0.5)]

    def generate(query: str, context: list[Chunk]) -> str:
        return context[0].text

    return PythonPipeline(chunks=CHUNKS, retrieve=retrieve, generate=generate, name="slow-test")
