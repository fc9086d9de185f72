"""Issue 10, items 4, 5 and 20: lone surrogates, absurd numbers and nesting, streaming reads."""

from __future__ import annotations

import json
import os
import threading
import warnings
from pathlib import Path

from cofe import EvalSample, read_run, write_evalset
from cofe._cache import Cache
from cofe._errors import InputWarning
from cofe._jsonl import read_jsonl
from cofe.adapters import PythonPipeline
from cofe.evalset import read_evalset
from cofe.runlog import Chunk
from cofe.runner import run_pipeline

GOOD = {"id": "ok1", "query": "Who?", "coarse_keywords": ["Ann"], "fine_keywords": [["Ann"]]}


def _lines(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_lone_surrogate_in_an_eval_set_is_replaced_and_reported(tmp_path) -> None:
    bad = json.dumps({**GOOD, "id": "s1", "query": "Wh\\ud800o?"}).replace("\\\\", "\\")
    path = _lines(tmp_path / "e.jsonl", json.dumps(GOOD), bad)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = read_evalset(path)
    assert not data.problems
    assert [s.query for s in data.samples] == ["Who?", "Wh\ufffdo?"]
    messages = [str(w.message) for w in caught if issubclass(w.category, InputWarning)]
    assert messages == [f"{path}:2: 1 lone UTF-16 surrogate(s) replaced by U+FFFD"]


def test_surrogates_from_a_pipeline_never_crash_the_run_writer(tmp_path) -> None:
    chunks = [Chunk(chunk_id="c1", doc_id="d", text="Ann wrote it \ud83d.")]  # a broken emoji
    pipeline = PythonPipeline(
        chunks=chunks,
        retrieve=lambda q: [(chunks[0], 1.0)],
        generate=lambda q, ctx: "Ann\udc80",
        name="surrogates",
    )
    evalset = tmp_path / "e.jsonl"
    write_evalset(evalset, [EvalSample.model_validate(GOOD)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_pipeline(pipeline, evalset, tmp_path / "run", progress=False)
    assert any(issubclass(w.category, InputWarning) for w in caught)
    for name in ("chunks.jsonl", "samples.jsonl"):
        (tmp_path / "run" / name).read_bytes().decode("utf-8")  # valid UTF-8 throughout
    log = read_run(tmp_path / "run")
    assert not log.problems
    assert log.chunks["c1"].text == "Ann wrote it \ufffd."
    assert log.records["ok1"].answer == "Ann\ufffd"


def test_the_cache_stores_a_reply_with_surrogates(tmp_path) -> None:
    cache = Cache(tmp_path / "cache")
    cache.put_json("llm", "k", {"reply": "x\ud800y"})
    assert cache.get_json("llm", "k") == {"reply": "x\ufffdy"}


def test_a_huge_integer_or_deep_nesting_is_one_problem_and_the_rest_is_read(tmp_path) -> None:
    huge = json.dumps({**GOOD, "id": "big"})[:-1] + ', "n": ' + "9" * 5000 + "}"
    deep = json.dumps({**GOOD, "id": "deep"})[:-1] + ', "x": ' + "[" * 10000 + "]" * 10000 + "}"
    last = {**GOOD, "id": "ok2"}
    path = _lines(tmp_path / "e.jsonl", json.dumps(GOOD), huge, deep, json.dumps(last))
    data = read_evalset(path)
    assert [s.id for s in data.samples] == ["ok1", "ok2"]
    assert [(p.file, p.line) for p in data.problems] == [(str(path), 2), (str(path), 3)]
    assert "digits" in data.problems[0].message
    assert "nested too deeply" in data.problems[1].message


def test_a_run_log_with_a_hostile_record_is_read_around_it(tmp_path) -> None:
    chunks = [Chunk(chunk_id="c1", doc_id="d", text="Ann wrote it.")]
    pipeline = PythonPipeline(chunks=chunks, retrieve=lambda q: [(chunks[0], 1.0)], name="p")
    evalset = tmp_path / "e.jsonl"
    write_evalset(evalset, [EvalSample.model_validate(GOOD)])
    run_pipeline(pipeline, evalset, tmp_path / "run", progress=False)
    samples = tmp_path / "run" / "samples.jsonl"
    with samples.open("a", encoding="utf-8") as handle:
        handle.write('{"sample_id": "x", "n": ' + "[" * 100000 + "\n")
    log = read_run(tmp_path / "run")
    assert list(log.records) == ["ok1"]
    assert [(p.line, "nested too deeply" in p.message) for p in log.problems] == [(2, True)]


def test_records_are_read_as_they_arrive_not_after_the_whole_file(tmp_path) -> None:
    # a FIFO: the first record must come out while the writer still holds the rest back
    fifo = tmp_path / "samples.fifo"
    os.mkfifo(fifo)
    first_read = threading.Event()

    def writer() -> None:
        with fifo.open("w", encoding="utf-8") as handle:
            handle.write(json.dumps(GOOD) + "\n")
            handle.flush()
            first_read.wait(timeout=10)
            handle.write(json.dumps({**GOOD, "id": "ok2"}) + "\n")

    thread = threading.Thread(target=writer)
    thread.start()
    seen = []
    for _, record in read_jsonl(fifo, EvalSample):
        seen.append((record.id, first_read.is_set()))
        first_read.set()
    thread.join()
    assert seen == [("ok1", False), ("ok2", True)]


def test_whitespace_only_ids_are_refused_naming_line_and_field(tmp_path) -> None:
    path = _lines(tmp_path / "e.jsonl", json.dumps({**GOOD, "id": " \t "}), json.dumps(GOOD))
    data = read_evalset(path)
    assert [s.id for s in data.samples] == ["ok1"]
    assert [str(p) for p in data.problems] == [f"{path}:1: id: must not be blank (whitespace only)"]
    chunks = _lines(
        tmp_path / "chunks.jsonl", json.dumps({"chunk_id": "  ", "doc_id": "d", "text": "x"})
    )
    [(line, problem)] = list(read_jsonl(chunks, Chunk))
    assert (line, problem.field) == (1, "chunk_id") and "blank" in problem.message
