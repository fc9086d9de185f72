"""``cofe judge --dask``: the judge's slices as tasks on a Dask cluster.

Next to what it distributes (``judge_one``); the cluster's plumbing -- connect, gather --
is ``cofe._distributed``'s, shared with the scorer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypedDict

from cofe._parallel import thread_map
from cofe.judges._judge import JudgeInputs, judge_one
from cofe.judges._replies import Judgement
from cofe.llm import Endpoint, LLMClient

if TYPE_CHECKING:
    from cofe.pipeline import Embedder


class _ClientSpec(TypedDict):
    """What a worker needs to build its own ``LLMClient``: never the API key."""

    base_url: str | None
    model: str
    timeout: float
    max_retries: int
    deadline: float | None
    max_reply_bytes: int
    max_tokens: int
    temperature: float
    json_mode: str


def judge_on_cluster(
    client: LLMClient,
    tasks: list[tuple[JudgeInputs, int]],
    on_judged: Callable[[Judgement], None],
    cluster: Any,
    *,
    concurrency: int,
    embeddings: bool,
    steps: bool = False,
    slice_size: int = 16,
) -> None:
    """``cofe judge --dask``: each task judges a slice of the samples on a worker, with its
    own client to the same endpoint (``concurrency`` calls at a time per task); judgements
    come back as tasks finish and are recorded by ``on_judged`` in this process. Only the
    endpoint's address, model and limits travel: a worker reads the API key from its own
    ``OPENAI_API_KEY``, so the key is never sent over the cluster."""
    from distributed import as_completed

    endpoint = client.endpoint
    spec: _ClientSpec = {
        "base_url": endpoint.base_url,
        "model": endpoint.model,
        "timeout": endpoint.timeout,
        "max_retries": endpoint.max_retries,
        "deadline": endpoint.deadline,
        "max_reply_bytes": endpoint.max_reply_bytes,
        "max_tokens": client.max_tokens,
        "temperature": client.temperature,
        "json_mode": client.json_mode,
    }
    slices = [tasks[i : i + slice_size] for i in range(0, len(tasks), slice_size)]
    futures = [
        cluster.submit(_judge_slice, spec, part, concurrency, embeddings, steps, pure=False)
        for part in slices
    ]
    try:
        for future in as_completed(futures):  # type: ignore[no-untyped-call]  # distributed: untyped
            judged, usage = future.result()
            client.usage.add(**usage)  # the workers' calls, counted with this client's
            for judgement, unreachable, failure in judged:
                # the worker's endpoint health, counted here: ``on_judged`` stops the pass
                # (``check_endpoint``) when the endpoint is dead for the workers too
                client.count_elsewhere(unreachable, failure)
                on_judged(judgement)
    finally:
        cluster.cancel(futures)


def _judge_slice(
    spec: _ClientSpec,
    tasks: list[tuple[JudgeInputs, int]],
    concurrency: int,
    embeddings: bool,
    steps: bool = False,
) -> tuple[list[tuple[Judgement, bool, str | None]], dict[str, float]]:
    """On a worker: judge ``(inputs, repeat)`` tasks with a client built from ``spec``; each
    judgement comes back with whether its last call could not reach the endpoint, and why."""
    endpoint = Endpoint.from_env(
        base_url=spec["base_url"],
        model=spec["model"],
        timeout=spec["timeout"],
        max_retries=spec["max_retries"],
        deadline=spec["deadline"],
        max_reply_bytes=spec["max_reply_bytes"],
    )
    llm = LLMClient(
        endpoint,
        max_tokens=spec["max_tokens"],
        temperature=spec["temperature"],
        json_mode=spec["json_mode"],
    )
    embedder: Embedder | None = None
    if embeddings:
        from cofe.pipeline import shared_embedder  # torch: only when embeddings are asked

        embedder = shared_embedder()  # one per worker process, loaded by its first task
    out: list[tuple[Judgement, bool, str | None]] = []

    def judge(task: tuple[JudgeInputs, int]) -> tuple[Judgement, bool, str | None]:
        judgement = judge_one(llm, task[0], embedder, task[1], steps)
        return judgement, llm.last_call_unreachable(), llm.last_failure()  # this thread's

    thread_map(
        judge,
        tasks,
        out.append,
        concurrency=concurrency,
    )
    counts = llm.usage.to_dict()
    counts.pop("total_tokens")
    return out, counts
