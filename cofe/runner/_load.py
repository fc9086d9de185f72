"""Find a pipeline by name: ``default`` or ``package.module:factory``."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cofe._errors import ConfigurationError, InputError, InputProblem
from cofe.adapters import Pipeline


def load_factory(spec: str) -> Callable[..., Any]:
    """The object ``package.module:factory`` names (a factory, or a pipeline itself).

    The current directory is importable, as with ``python -m``, so a user's
    own ``my_rag.py`` is found as ``my_rag:build``.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigurationError(f"--pipeline {spec!r}: use 'default' or 'package.module:factory'")
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ConfigurationError(
            f"--pipeline {spec!r}: cannot import {module_name!r}: {error}"
        ) from None
    factory = getattr(module, attr, None)
    if factory is None:
        raise ConfigurationError(f"--pipeline {spec!r}: {module_name} has no attribute {attr!r}")
    found: Callable[..., Any] = factory
    return found


def as_pipeline(built: Any, spec: str) -> Pipeline:
    """What a factory returned, as a cofe pipeline: a cofe pipeline as it is; a callable
    ``query -> answer`` of a framework's pipeline (or a LangChain runnable, through its
    ``invoke``) recorded through its OpenInference spans (``OpenInferencePipeline``)."""
    missing = [m for m in ("describe", "prepare", "answer") if not hasattr(built, m)]
    if missing and not isinstance(built, type):
        target = built if callable(built) else getattr(built, "invoke", None)
        if callable(target):
            from cofe.adapters import OpenInferencePipeline

            return OpenInferencePipeline(target, name=spec.partition(":")[2] or spec)
    if missing:
        raise ConfigurationError(
            f"--pipeline {spec!r} gave a {type(built).__name__} without {', '.join(missing)}; "
            "return a cofe pipeline (e.g. cofe.adapters.PythonPipeline or LlamaIndexPipeline) "
            "or a function query -> answer of an instrumentable framework"
        )
    found: Pipeline = built
    return found


def load_pipeline(spec: str, **options: Any) -> Pipeline:
    """``default`` builds :class:`DefaultPipeline` from ``options``; ``mod:factory`` calls
    ``factory(**options)``.

    A factory may return a cofe pipeline, or a callable ``query -> answer`` of a LangChain,
    LangGraph, Haystack, DSPy or LlamaIndex pipeline (sync or async; a LangChain runnable's
    ``invoke``), recorded through its OpenInference spans (``OpenInferencePipeline``).
    ``cofe sweep`` builds each cell the same way, with the cell's parameters as ``options``.
    """
    if spec == "default":
        from cofe.pipeline import DefaultPipeline, PipelineConfig

        endpoint = options.pop("endpoint", None)
        try:
            config = PipelineConfig(**options)
        except ValidationError as error:  # options a person gave: one line, not pydantic's
            raise InputError(
                InputProblem.from_validation("pipeline options", None, error)
            ) from None
        return DefaultPipeline(config, endpoint)
    factory = load_factory(spec)
    is_factory = callable(factory) and not isinstance(factory, Pipeline)
    return as_pipeline(factory(**options) if is_factory else factory, spec)
