"""The content-addressed cache: hits, misses, damaged entries, no-op mode."""

from pathlib import Path

import numpy as np

from cofe._cache import Cache, content_key


def test_round_trip_and_damaged_entries_are_misses(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    key = content_key("k", [1, 2, 3])
    assert cache.get_json("x", key) is None and cache.misses == 1
    cache.put_json("x", key, {"a": [1, "б"]})
    cache.put_array("v", key, np.arange(6, dtype=np.float32).reshape(2, 3))
    assert cache.get_json("x", key) == {"a": [1, "б"]}
    assert cache.get_array("v", key).tolist() == [[0, 1, 2], [3, 4, 5]]
    for path in tmp_path.rglob("*.*"):
        path.write_bytes(b"\x00garbage")  # a torn or damaged entry
    assert cache.get_json("x", key) is None and cache.get_array("v", key) is None
    assert not list(tmp_path.rglob(".tmp-*"))  # no temporary file left behind


def test_keys_change_with_any_part_and_none_stores_nothing(tmp_path: Path) -> None:
    assert content_key("a", 1) != content_key("a", 2) != content_key("a", "1")
    off = Cache(None)
    off.put_json("x", "k", 1)
    assert off.get_json("x", "k") is None
    folder, hit = off.directory("d", "k", lambda p: None)
    assert folder is None and not hit
