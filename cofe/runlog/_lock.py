"""One writer per run folder.

Two ``cofe run`` on one ``--out``, or a run and a re-score, would interleave
appends and answer samples twice. Every writer holds an exclusive ``flock`` on
``RUN/.cofe-lock`` while it works; the kernel drops the lock when the holder
dies (even by ``kill -9``), so a crashed run never blocks the next one. The
file also marks the folder as one cofe wrote, which ``--fresh`` relies on.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from cofe._errors import InputError, InputProblem

LOCK = ".cofe-lock"


class RunFolderBusy(InputError):
    """Another process is writing to this run folder."""


def _holder(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        return "another process"
    return f"process {text}" if text.isdigit() else "another process"


@contextlib.contextmanager
def run_folder_lock(
    run_dir: str | os.PathLike[str], *, purpose: str, reading: bool = False
) -> Iterator[None]:
    """Hold the run folder's lock for the ``with`` block; refuse at once if it is held.

    ``reading``: the caller only reads the folder, so one it may not write to (a shipped
    example, a read-only mount) is read without the lock instead of refused."""
    root = Path(run_dir)
    path = root / LOCK
    if root.exists() and not root.is_dir():
        raise InputError(InputProblem(str(root), None, None, "is a file, not a run folder"))
    if reading and not path.exists():  # no writer has ever worked here: nothing to wait for,
        yield  # and a reader leaves no file behind
        return
    try:
        if not reading:
            root.mkdir(parents=True, exist_ok=True)
        handle = os.open(path, os.O_RDWR | (0 if reading else os.O_CREAT), 0o644)
    except OSError as error:
        if reading and error.errno in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOENT):
            yield
            return
        raise
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunFolderBusy(InputProblem(str(root), None, None,
                f"{_holder(path)} is writing to this run folder; wait for it to finish, or "
                f"choose another folder ({purpose} needs it alone)")) from None  # fmt: skip
        os.ftruncate(handle, 0)
        os.write(handle, f"{os.getpid()}\n".encode())
        yield
    finally:
        os.close(handle)  # closing releases the lock; the file stays as cofe's mark
