"""Find a pipeline by name: ``default`` or ``package.module:factory``."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from cofe.adapters import Pipeline


def load_pipeline(spec: str, **options: Any) -> Pipeline:
    """``default`` builds :class:`DefaultPipeline` from ``options``; ``mod:factory`` calls ``factory()``.

    A factory may return a cofe pipeline, or a callable ``query -> answer`` of a LangChain,
    LangGraph, Haystack, DSPy or LlamaIndex pipeline (sync or async; a LangChain runnable's
    ``invoke``), recorded through its OpenInference spans (``OpenInferencePipeline``).

    The current directory is importable, as with ``python -m``, so a user's
    own ``my_rag.py`` is found as ``my_rag:build``.
    """
    if spec == "default":
        from cofe.pipeline import DefaultPipeline, PipelineConfig

        endpoint = options.pop("endpoint", None)
        return DefaultPipeline(PipelineConfig(**options), endpoint)
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"--pipeline {spec!r}: use 'default' or 'package.module:factory'")
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"--pipeline {spec!r}: cannot import {module_name!r}: {error}") from None
    factory = getattr(module, attr, None)
    if factory is None:
        raise ValueError(f"--pipeline {spec!r}: {module_name} has no attribute {attr!r}")
    pipeline = factory() if callable(factory) and not isinstance(factory, Pipeline) else factory
    missing = [m for m in ("describe", "prepare", "answer") if not hasattr(pipeline, m)]
    if missing and not isinstance(pipeline, type):
        # a framework's pipeline as it is: a callable query -> answer (or a LangChain
        # runnable), recorded through its OpenInference spans
        target = pipeline if callable(pipeline) else getattr(pipeline, "invoke", None)
        if callable(target):
            from cofe.adapters import OpenInferencePipeline

            return OpenInferencePipeline(target, name=attr)
    if missing:
        raise ValueError(
            f"--pipeline {spec!r} gave a {type(pipeline).__name__} without {', '.join(missing)}; "
            "return a cofe pipeline (e.g. cofe.adapters.PythonPipeline or LlamaIndexPipeline) "
            "or a function query -> answer of an instrumentable framework"
        )
    found: Pipeline = pipeline
    return found
