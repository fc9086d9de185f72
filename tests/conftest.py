"""Shared fixtures: build small run directories by hand."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from cofe import (
    Chunk,
    EvalSample,
    Manifest,
    ParsedDocument,
    RankedChunk,
    RunLog,
    RunWriter,
    SampleRecord,
    write_evalset,
)
from cofe.evalset import file_sha256

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# headless Debian Chromium with none of its own network chatter (the machine's network is closed)
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

REPO = Path(__file__).resolve().parent.parent
EXAMPLE_RUN = REPO / "examples" / "squad-bm25"


def ranked(*chunk_ids: str) -> list[RankedChunk]:
    return [
        RankedChunk(chunk_id=c, score=float(len(chunk_ids) - i)) for i, c in enumerate(chunk_ids)
    ]


MakeRun = Callable[..., Path]


@pytest.fixture
def make_run(tmp_path: Path) -> MakeRun:
    """``make_run(samples, chunks={id: text}, records=[...], docs={id: text})`` -> run dir.

    Chunks are given as ``{chunk_id: text}`` (doc "d1") or ``{chunk_id: (doc_id, text)}``.
    """
    counter = {"n": 0}

    def build(
        samples: Sequence[EvalSample],
        chunks: dict[str, str | tuple[str, str]],
        records: Sequence[SampleRecord],
        docs: dict[str, str] | None = None,
    ) -> Path:
        counter["n"] += 1
        root = tmp_path / f"run{counter['n']}"
        root.mkdir()
        evalset = root / "source-evalset.jsonl"
        write_evalset(evalset, samples)
        writer = RunWriter(root)
        writer.start(
            Manifest(run_id=f"test-{counter['n']}", evalset_sha256=file_sha256(evalset)), evalset
        )
        if docs:
            writer.add_documents(
                ParsedDocument(doc_id=d, source=f"{d}.txt", text=t) for d, t in docs.items()
            )
        writer.add_chunks(
            Chunk(chunk_id=c, doc_id=v[0], text=v[1])
            if isinstance(v, tuple)
            else Chunk(chunk_id=c, doc_id="d1", text=v)
            for c, v in chunks.items()
        )
        writer.add_samples(records)
        return root

    return build


def memory_run(
    chunks: dict[str, str | tuple[str, str]],
    records: Sequence[SampleRecord],
    docs: dict[str, str] | None = None,
) -> RunLog:
    """The same as a run directory, in memory (for fast property tests)."""
    return RunLog(
        path=Path("memory"),
        manifest=Manifest(run_id="memory"),
        documents={
            d: ParsedDocument(doc_id=d, source=f"{d}.txt", text=t) for d, t in (docs or {}).items()
        },
        chunks={
            c: Chunk(chunk_id=c, doc_id=v[0], text=v[1])
            if isinstance(v, tuple)
            else Chunk(chunk_id=c, doc_id="d1", text=v)
            for c, v in chunks.items()
        },
        records={r.sample_id: r for r in records},
    )


def recall_at(result, step: str, measure: str, sample_id: str = "q") -> float:
    rows = result.scores[
        (result.scores.sample_id == sample_id)
        & (result.scores.step == step)
        & (result.scores.measure == measure)
    ]
    assert len(rows) == 1, (
        f"{step}/{measure} not scored for {sample_id}: {result.skipped.to_dict('records')}"
    )
    return float(rows.value.iloc[0])


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any connection that is not to loopback (what CI's closed network would do, but loudly)."""
    import socket

    real_connect = socket.socket.connect

    def guarded(self, address):  # type: ignore[no-untyped-def]
        host = address[0] if isinstance(address, tuple) else address
        if (
            isinstance(host, str)
            and host not in ("127.0.0.1", "::1", "localhost")
            and "/" not in host
        ):
            raise AssertionError(f"network access attempted: {address!r}")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)


CAPITALS = {
    "france.txt": "Paris is the capital of France. The Eiffel Tower was finished in 1889.\n\n"
    "The Louvre is the most visited museum in the world.",
    "germany.md": "# Germany\n\nBerlin is the capital of Germany. The Brandenburg Gate stands in Berlin.",
    "italy.html": "<html><body><h1>Italy</h1><p>Rome is the capital of Italy. "
    "The Colosseum held 50,000 spectators.</p></body></html>",
}


@pytest.fixture
def small_docs(tmp_path: Path) -> Path:
    """A folder of three small documents in three formats."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in CAPITALS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def small_evalset(tmp_path: Path) -> Path:
    from cofe import EvalSample

    samples = [
        EvalSample(
            id="q1",
            query="When was the Eiffel Tower finished?",
            query_type="factual",
            coarse_keywords=["Eiffel Tower"],
            fine_keywords=[["1889"]],
            reference_answer="In 1889.",
            source={"doc": "france.txt"},
        ),
        EvalSample(
            id="q2",
            query="What is the capital of Germany?",
            query_type="factual",
            coarse_keywords=["Germany"],
            fine_keywords=[["Berlin"]],
            reference_answer="Berlin.",
            source={"doc": "germany.md"},
        ),
        EvalSample(
            id="q3",
            query="How many spectators did the Colosseum hold?",
            query_type="factual",
            coarse_keywords=["Colosseum"],
            fine_keywords=[["50,000"]],
            reference_answer="50,000.",
            source={"doc": "italy.html"},
        ),
    ]
    path = tmp_path / "evalset.jsonl"
    write_evalset(path, samples)
    return path


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium driven by Playwright (the HTML report's and the dashboard's tests);
    a machine without it fails, never skips."""
    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is not installed: apt-get install chromium (.ci/run does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()
