"""A content-addressed on-disk cache for parsed files, chunk lists, embeddings and indexes.

Keys are built from the *content* (file bytes, document texts, chunk texts)
plus every parameter that changes the output, so a second run with another
top-K or reranker reuses parsing, chunking and embeddings, and any change to
the inputs misses. Entries are written to a temporary name and renamed, so a
crash never leaves a half-written entry behind.

The cache is best-effort: a failed write (read-only folder, disk full) is one
warning per cache and the work goes on uncached; a failed or damaged read is
a miss.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

from cofe._jsonl import scrub_surrogates


def default_cache_dir() -> Path:
    env = os.environ.get("COFE_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "cofe"


def text_digests(texts: Iterable[str]) -> list[str]:
    """SHA-256 of each text: a cache key part that stands for a list of texts."""
    return [hashlib.sha256(t.encode()).hexdigest() for t in texts]


def content_key(*parts: Any) -> str:
    """A SHA-256 over JSON-encoded parts (strings, numbers, lists of texts...)."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(json.dumps(part, ensure_ascii=False, sort_keys=True).encode())
        digest.update(b"\x00")
    return digest.hexdigest()


class Cache:
    """``Cache(root)``; ``Cache(None)`` is a cache that never stores anything."""

    def __init__(self, root: str | os.PathLike[str] | None) -> None:
        self.root = Path(root) if root is not None else None
        self.hits = 0
        self.misses = 0
        self.write_failed: str | None = None  # the first failed write, warned about once

    def _write_failed(self, error: BaseException) -> None:
        """Warn once per cache: a full disk would otherwise warn for every entry."""
        if self.write_failed is None:
            self.write_failed = f"{type(error).__name__}: {error}"
            warnings.warn(
                f"cofe: cache {self.root} is not writable, continuing without it "
                f"({self.write_failed})",
                RuntimeWarning,
                stacklevel=3,
            )

    def _path(self, kind: str, key: str, suffix: str) -> Path | None:
        if self.root is None:
            return None
        digest = hashlib.sha256(key.encode()).hexdigest()
        return self.root / kind / digest[:2] / f"{digest}{suffix}"

    def _count(self, hit: bool) -> None:
        if hit:
            self.hits += 1
        else:
            self.misses += 1

    def _atomic(self, target: Path, write: Callable[[Path], object]) -> None:
        """Write to a temporary name and rename: readers never see half an entry.

        An ``OSError`` (read-only folder, disk full) is a warning, not a failure.
        """
        tmp: str | None = None
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=target.suffix)
            os.close(fd)
            write(Path(tmp))
            os.replace(tmp, target)
        except OSError as error:
            self._write_failed(error)
        finally:
            if tmp is not None and os.path.exists(tmp):
                with contextlib.suppress(OSError):  # a failed clean-up is not an error
                    os.unlink(tmp)

    def _get(self, kind: str, key: str, suffix: str, load: Callable[[Path], Any]) -> Any | None:
        path = self._path(kind, key, suffix)
        value = None
        if path is not None:
            try:
                value = load(path)
            except (OSError, ValueError, RecursionError, EOFError):
                # absent, unreadable or damaged: a miss; the entry will be rewritten
                value = None
        self._count(value is not None)
        return value

    def get_json(self, kind: str, key: str) -> Any | None:
        return self._get(kind, key, ".json", lambda p: json.loads(p.read_text(encoding="utf-8")))

    def put_json(self, kind: str, key: str, value: Any) -> None:
        path = self._path(kind, key, ".json")
        if path is not None:
            clean = scrub_surrogates(value)[0]  # lone surrogates: UTF-8 cannot hold them
            self._atomic(
                path,
                lambda p: p.write_text(json.dumps(clean, ensure_ascii=False), encoding="utf-8"),
            )

    def get_array(self, kind: str, key: str) -> np.ndarray | None:
        import numpy as np  # deferred: most commands never cache an array

        return self._get(kind, key, ".npy", lambda p: np.load(p, allow_pickle=False))

    def put_array(self, kind: str, key: str, value: np.ndarray) -> None:
        import numpy as np

        path = self._path(kind, key, ".npy")
        if path is not None:
            self._atomic(path, lambda p: np.save(p, value, allow_pickle=False))

    def directory(
        self, kind: str, key: str, build: Callable[[Path], None]
    ) -> tuple[Path | None, bool]:
        """A cached folder made by ``build(folder)``; returns (folder, was_hit)."""
        path = self._path(kind, key, "")
        if path is None:
            return None, False
        if path.is_dir():
            self._count(True)
            return path, True
        self._count(False)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=".tmp-"))
        except OSError as error:  # the cache cannot hold it: build outside, uncached
            self._write_failed(error)
            return self._uncached_directory(build), False
        try:
            build(tmp)
            os.replace(tmp, path)
        except OSError as error:
            if path.is_dir():  # another process won the race: use its folder
                return path, False
            self._write_failed(error)
            return self._uncached_directory(build), False
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        return path, False

    def _uncached_directory(self, build: Callable[[Path], None]) -> Path:
        """``build`` into a fresh temporary folder outside the cache (the caller reads it once)."""
        folder = Path(tempfile.mkdtemp(prefix="cofe-uncached-"))
        build(folder)
        return folder
