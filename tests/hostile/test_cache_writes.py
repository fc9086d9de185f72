"""Issue 10, item 8: the disk cache is best-effort; a failed write is one warning, never a failure."""

from __future__ import annotations

import errno
import json
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

from cofe._cache import Cache, content_key
from cofe.llm import Endpoint, LLMClient
from cofe.testing import ScriptedOpenAI

MESSAGES = [{"role": "user", "content": "Where?"}]


def _disk_full(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.fixture
def read_only(tmp_path: Path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    if os.access(folder, os.W_OK):  # root ignores permissions
        folder.chmod(0o700)
        pytest.skip("running as root: a read-only folder is still writable")
    yield folder
    folder.chmod(0o700)


def _all_puts_fail_quietly(cache: Cache) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(5):
            cache.put_json("x", content_key(i), {"i": i})
            cache.put_array("v", content_key(i), np.arange(3))
        folder, hit = cache.directory("d", "k", lambda p: (p / "f.txt").write_text("built"))
    assert folder is not None and (folder / "f.txt").read_text() == "built" and not hit
    assert cache.get_json("x", content_key(0)) is None  # nothing stored: a miss
    return [w for w in caught if issubclass(w.category, RuntimeWarning)]


def test_a_full_disk_is_one_warning_per_cache_not_a_failure(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(os, "replace", _disk_full)
    cache = Cache(tmp_path)
    caught = _all_puts_fail_quietly(cache)
    assert len(caught) == 1 and "No space left" in str(caught[0].message)
    assert str(tmp_path) in str(caught[0].message) and cache.write_failed
    assert not list(tmp_path.rglob(".tmp-*.json"))  # no temporary file left behind


def test_a_full_disk_while_writing_leaves_no_half_entry(tmp_path, monkeypatch) -> None:
    cache = Cache(tmp_path)
    real_dumps = json.dumps

    def torn(value, **kw):  # half the entry reaches the disk, then the disk is full
        text = real_dumps(value, **kw)
        raise OSError(errno.ENOSPC, f"No space left on device after {len(text) // 2} bytes")

    monkeypatch.setattr(json, "dumps", torn)
    with pytest.warns(RuntimeWarning, match="No space left"):
        cache.put_json("x", "k", {"a": 1})
    monkeypatch.setattr(json, "dumps", real_dumps)
    assert cache.get_json("x", "k") is None and not [p for p in tmp_path.rglob("*") if p.is_file()]


def test_a_read_only_cache_folder_is_one_warning(read_only: Path) -> None:
    caught = _all_puts_fail_quietly(Cache(read_only / "cache"))
    assert len(caught) == 1 and "not writable" in str(caught[0].message)


def test_an_unreadable_entry_is_a_miss(tmp_path: Path, monkeypatch) -> None:
    cache = Cache(tmp_path)
    cache.put_json("x", "k", {"a": 1})
    monkeypatch.setattr(Path, "read_text", lambda *a, **k: _disk_full())
    assert cache.get_json("x", "k") is None and cache.misses == 1 and cache.hits == 0


def test_a_deeply_nested_entry_is_a_miss(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    cache.put_json("x", "k", {"a": 1})
    (entry,) = tmp_path.rglob("*.json")
    entry.write_text("[" * 100_000 + "]" * 100_000)
    assert cache.get_json("x", "k") is None


def test_an_llm_call_succeeds_when_its_cache_cannot_be_written(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(os, "replace", _disk_full)
    with ScriptedOpenAI(lambda m, r: "Paris.") as server:
        client = LLMClient(
            Endpoint.from_env(base_url=server.base_url, model="m", api_key="k"),
            cache=Cache(tmp_path),
        )
        with pytest.warns(RuntimeWarning, match="not writable"):
            assert client.complete(MESSAGES) == "Paris."
            assert client.complete(MESSAGES) == "Paris."
    assert client.usage.calls == 2 and client.usage.failures == 0


def test_a_read_only_file_system_is_one_warning_even_as_root(tmp_path, monkeypatch) -> None:
    # root ignores folder permissions: refuse the cache's folder creation as EROFS would
    def read_only_fs(self, *args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system", str(self))

    monkeypatch.setattr(Path, "mkdir", read_only_fs)
    caught = _all_puts_fail_quietly(Cache(tmp_path / "cache"))
    assert len(caught) == 1 and "Read-only file system" in str(caught[0].message)


def test_parsing_succeeds_when_the_parse_cache_cannot_be_written(tmp_path, monkeypatch) -> None:
    from cofe.pipeline._parse import parse_documents

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("The Eiffel Tower is in Paris.\n", encoding="utf-8")
    monkeypatch.setattr(os, "replace", _disk_full)
    with pytest.warns(RuntimeWarning, match="No space left"):
        result = parse_documents(docs, cache=Cache(tmp_path / "cache"))
    assert result.problems == [] and [d.doc_id for d in result.documents] == ["a.txt"]
    assert "Eiffel" in result.documents[0].text
