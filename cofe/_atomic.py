"""Files written whole or not at all.

Everything cofe writes that a person keeps (scores, reports, manifests,
comparisons) is written to a temporary name beside the target and renamed
over it, so a crash, a full disk or Ctrl-C leaves the old file or the new
one, never half of one -- and never a stray temporary file.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def replace_atomically(path: str | os.PathLike[str], write: Callable[[Path], object]) -> Path:
    """``write(tmp)`` to a temporary file, then rename it to ``path``."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path}: is a folder; give the name of a file to write")
    if path.exists() and not path.is_file():  # /dev/stdout, a FIFO: written in place, never
        write(path)  # replaced (renaming over a device node would destroy it)
        return path
    path = path.resolve() if path.is_symlink() else path  # keep the user's link, replace its file
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # per process: writers never share
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def write_text_atomically(path: str | os.PathLike[str], text: str) -> Path:
    return replace_atomically(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
