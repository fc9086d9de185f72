"""The framework-neutral span->record code (``cofe.adapters.assemble_spans``) on hand-built
OpenInference traces: composite retrievers, rerankers, the generating LLM's prompt, errors."""

from __future__ import annotations

from itertools import count
from typing import Any

from cofe.adapters import Span, assemble_spans
from cofe.runlog import Stage

_IDS = count(1)


def _span(
    kind: str | None,
    parent: Span | None = None,
    start: int = 0,
    status: str = "ok",
    **attributes: Any,
) -> Span:
    attrs = {k.replace("__", "."): v for k, v in attributes.items()}
    if kind is not None:
        attrs["openinference.span.kind"] = kind
    return Span(
        trace_id="1" * 32,
        span_id=f"{next(_IDS):016x}",
        parent_id=parent.span_id if parent else None,
        name=kind or "plain",
        start_ns=start,
        end_ns=start + 10,
        status=status,
        status_message="",
        attributes=attrs,
    )


def _docs(prefix: str, texts: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, text in enumerate(texts):
        out[f"{prefix}.{i}.document.content"] = text
        out[f"{prefix}.{i}.document.score"] = 1.0 - i / 10
    return out


def _retriever(parent: Span, texts: list[str], start: int) -> Span:
    return Span(**_fields("RETRIEVER", parent, start, _docs("retrieval.documents", texts)))


def _fields(kind: str, parent: Span | None, start: int, attrs: dict[str, Any]) -> dict[str, Any]:
    return {
        "trace_id": "1" * 32,
        "span_id": f"{next(_IDS):016x}",
        "parent_id": parent.span_id if parent else None,
        "name": kind,
        "start_ns": start,
        "end_ns": start + 10,
        "status": "ok",
        "status_message": "",
        "attributes": {"openinference.span.kind": kind, **attrs},
    }


def _llm(parent: Span, prompt: str, answer: str, start: int) -> Span:
    return Span(
        **_fields(
            "LLM",
            parent,
            start,
            {
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": prompt,
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": answer,
            },
        )
    )


def _texts(docs: Any) -> list[str]:
    return [d.text for d in docs]


def test_a_plain_retriever_and_reranker_read_as_the_monitor_reads_them() -> None:
    root = _span("CHAIN", **{"input__value": "q"})
    retriever = _retriever(root, ["a", "b", "c"], 1)
    reranker = Span(
        **_fields(
            "RERANKER",
            root,
            20,
            {
                **_docs("reranker.input_documents", ["a", "b", "c"]),
                **_docs("reranker.output_documents", ["c", "a"]),
            },
        )
    )
    llm = _llm(root, "context: c a", "the answer", 40)
    record = assemble_spans("t", [root, retriever, reranker, llm])
    assert record.query == "q"
    assert _texts(record.pool) == ["a", "b", "c"]
    assert _texts(record.context) == ["c", "a"]
    assert record.answer == "the answer"
    assert record.stages == (Stage.RETRIEVAL, Stage.RERANKING, Stage.GENERATION)
    assert record.problems == []


def test_a_composite_retriever_pools_its_inner_retrievals_and_its_output_is_the_context() -> None:
    root = _span("CHAIN", **{"input__value": "q"})
    outer = Span(**_fields("RETRIEVER", root, 1, _docs("retrieval.documents", ["y", "a"])))
    inner_a = _retriever(outer, ["a", "b"], 2)
    inner_b = _retriever(outer, ["x", "a", "y"], 3)
    rewrite = _llm(outer, "rewrite q", "q1\nq2", 1)  # inside the retriever: retrieval
    llm = _llm(root, "ctx: y a", "the answer", 40)
    record = assemble_spans("t", [root, outer, inner_a, inner_b, rewrite, llm])
    assert _texts(record.pool) == ["a", "x", "b", "y"]  # rank by rank, each once
    assert _texts(record.context) == ["y", "a"]
    assert record.retrievals == 2
    assert record.answer == "the answer"


def test_the_context_is_what_the_generating_prompt_holds() -> None:
    root = _span("CHAIN", **{"input__value": "q"})
    retriever = _retriever(root, ["alpha  beta", "gamma", "delta"], 1)
    llm = _llm(root, "Context:\nalpha beta\n\ndelta\nQ: q", "the answer", 40)  # spaces differ
    record = assemble_spans("t", [root, retriever, llm])
    assert _texts(record.context) == ["alpha  beta", "delta"]


def test_a_prompt_holding_none_of_the_documents_keeps_the_selection_and_says_so() -> None:
    root = _span("CHAIN", **{"input__value": "q"})
    retriever = _retriever(root, ["alpha", "gamma"], 1)
    llm = _llm(root, "summaries only", "the answer", 40)
    record = assemble_spans("t", [root, retriever, llm])
    assert _texts(record.context) == ["alpha", "gamma"]
    assert any("prompt holds none" in p for p in record.problems)


def test_several_outer_retrievals_of_an_agent_are_merged_and_the_last_llm_answers() -> None:
    root = _span("CHAIN", **{"input__value": "q"})
    first = _retriever(root, ["a", "b"], 1)
    decide = _llm(root, "should I search again? a b", "yes: q2", 15)
    second = _retriever(root, ["c", "a"], 30)
    final = _llm(root, "a b c", "the answer", 50)
    record = assemble_spans("t", [root, first, decide, second, final])
    assert _texts(record.pool) == ["a", "c", "b"]
    assert _texts(record.context) == ["a", "c", "b"]
    assert record.answer == "the answer" and record.retrievals == 2


def test_a_failing_retriever_is_blamed_and_leaves_no_pool() -> None:
    root = _span("CHAIN", status="error", **{"input__value": "q"})
    retriever = Span(
        **{**_fields("RETRIEVER", root, 1, {}), "status": "error", "status_message": "index gone"}
    )
    record = assemble_spans("t", [root, retriever])
    assert record.error_stage is Stage.RETRIEVAL and "index gone" in (record.error or "")
    assert record.pool is None and record.context is None


def test_every_test_docs_frameworks_md_names_exists() -> None:
    """The pattern table's test column names real tests (``…`` repeats the row above's file)."""
    import ast
    import re

    from tests.conftest import REPO

    doc = (REPO / "docs" / "frameworks.md").read_text(encoding="utf-8")
    named: list[tuple[str, str]] = []
    current = ""
    for row in re.findall(r"^\|.*\|\s*$", doc, re.M):
        for file, test in re.findall(r"`(test_[\w]+\.py|…)::(test_\w+)`", row):
            current = current if file == "…" else file
            named.append((current, test))
    assert len({t for _, t in named}) >= 15
    for file, test in named:
        tree = ast.parse((REPO / "tests" / "adapters" / file).read_text(encoding="utf-8"))
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert test in defined, f"{file}::{test} (docs/frameworks.md) does not exist"


def test_overlapping_chunks_are_given_only_where_they_stand_alone():
    """Chunks overlap: the next chunk's opening words end the chunk before it. A chunk is in
    the prompt only where it stands by itself, not inside a longer one it overlaps."""
    from cofe.adapters._span_assembly import PROMPT_PREFIX_CHARS, Doc, in_prompt

    tail = "It is tall and made of iron, with many rivets holding its beams together over levels."
    assert len(tail) < PROMPT_PREFIX_CHARS < len(tail) + 40
    first = Doc("a", None, None, "The tower was finished in 1889. " + tail)
    inside = Doc("b", None, None, tail)  # whole, but only inside `first`
    # the next chunk begins with the overlap: its first characters sit inside `first`
    overlap = Doc("c", None, None, tail + " Its lift was installed later by another firm.")
    alone = Doc("d", None, None, "Paris is a city.")
    prompt = f"Context:\nThe tower was finished in 1889. {tail} Its lift was installed\n\nParis is a city.\n"
    chosen = in_prompt([first, inside, overlap, alone], prompt)
    assert [d.chunk_id for d in chosen] == ["a", "d"]
    both = prompt + f"\n{tail}\n"  # the short chunk given by itself as well
    assert [d.chunk_id for d in in_prompt([first, inside, alone], both)] == ["a", "b", "d"]


def test_a_title_chunk_named_by_the_question_is_not_given():
    from cofe.adapters._span_assembly import Doc, in_prompt

    title = Doc("t", None, None, "明圣王后")
    body = Doc("b", None, None, "1674年显宗逝世，世子李焞继位，即肃宗。")
    prompt = "资料：1674年显宗逝世，世子李焞继位，即肃宗。\n问题：明圣王后的儿子是谁？"
    assert [d.chunk_id for d in in_prompt([body, title], prompt, "明圣王后的儿子是谁？")] == ["b"]
    assert [d.chunk_id for d in in_prompt([body, title], prompt + "\n明圣王后")] == ["b", "t"]
