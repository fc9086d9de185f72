"""One writer per run folder; any number of readers while none writes.

Two ``cofe run`` on one ``--out``, or a run and a re-score, would interleave
appends and answer samples twice. Every writer holds an exclusive ``flock`` on
``RUN/.cofe-lock`` while it works; a process that only reads the folder (a
scoring written elsewhere, ``cofe score RUN --out DIR``) holds a shared one, so
readers never refuse each other and a writer never changes what one reads. The
kernel drops the lock when the holder dies (even by ``kill -9``), so a crashed
run never blocks the next one. The file also marks the folder as one cofe wrote,
which ``--fresh`` relies on.

The lock file is opened without following a symbolic link and must be a regular
file with no other name: a planted ``.cofe-lock`` pointing at another file is
refused, never truncated.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from cofe._errors import InputError, InputProblem

LOCK = ".cofe-lock"
_READ_ONLY = (errno.EACCES, errno.EPERM, errno.EROFS)


class RunFolderBusy(InputError):
    """Another process is writing to this run folder (or reading it, for a writer)."""


class RunFolderReadOnly(InputError):
    """The run folder cannot be written to (a read-only mount, no permission)."""


def _holder(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        return "another process"
    return f"process {text}" if text.isdigit() else "another process"


def _open(path: Path, *, reading: bool) -> int:
    """The lock file, opened without following a link (``O_NOFOLLOW``) and without blocking on
    a FIFO, checked to be a regular file of one name; anything else is refused."""
    flags = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    flags |= os.O_RDONLY if reading else os.O_RDWR | os.O_CREAT
    try:
        handle = os.open(path, flags, 0o644)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _not_a_lock(path, "is a symbolic link") from None
        if error.errno in (errno.ENXIO, errno.EISDIR):
            raise _not_a_lock(path, "is not a regular file") from None
        raise
    info = os.fstat(handle)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        os.close(handle)
        what = "is not a regular file" if not stat.S_ISREG(info.st_mode) else "has another name"
        raise _not_a_lock(path, what)
    os.set_blocking(handle, True)
    return handle


def _not_a_lock(path: Path, what: str) -> InputError:
    return InputError(
        InputProblem(
            str(path),
            None,
            None,
            f"{what}, not cofe's lock file; remove it and run the command again",
        )
    )


def _readers_only(path: Path) -> bool:
    """Whether the processes holding the lock only read (a shared lock is still granted)."""
    try:
        probe = _open(path, reading=True)
    except (OSError, InputError):
        return False
    try:
        fcntl.flock(probe, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(probe)


@contextlib.contextmanager
def run_folder_lock(
    run_dir: str | os.PathLike[str], *, purpose: str, reading: bool = False, hint: str = ""
) -> Iterator[None]:
    """Hold the run folder's lock for the ``with`` block; refuse at once if it is held.

    ``reading``: the caller only reads the folder: it takes the shared lock (other readers
    go on; a writer is refused, and refuses it), creates nothing, and a folder it may not
    write to (a shipped example, a read-only mount) is read as well. ``hint``: what to do
    instead when a writer finds the folder read-only (e.g. which flag writes elsewhere)."""
    root = Path(run_dir)
    path = root / LOCK
    if root.exists() and not root.is_dir():
        raise InputError(InputProblem(str(root), None, None, "is a file, not a run folder"))
    if reading and not os.path.lexists(path):  # no writer has ever worked here: nothing to
        yield  # wait for, and a reader leaves no file behind
        return
    try:
        if not reading:
            root.mkdir(parents=True, exist_ok=True)
        handle = _open(path, reading=reading)
    except OSError as error:
        if reading and error.errno in (*_READ_ONLY, errno.ENOENT):
            yield
            return
        if error.errno in _READ_ONLY:
            why = f"cannot write here ({error.strerror}); {purpose} writes in the run folder"
            why += f"; {hint}" if hint else ""
            raise RunFolderReadOnly(InputProblem(str(root), None, None, why)) from None
        raise
    try:
        try:
            fcntl.flock(handle, (fcntl.LOCK_SH if reading else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            if not reading and _readers_only(path):
                doing = "another process is reading this run folder"
            else:
                doing = f"{_holder(path)} is writing to this run folder"
            raise RunFolderBusy(
                InputProblem(
                    str(root),
                    None,
                    None,
                    f"{doing}; wait for it to finish, or choose another folder ({purpose} needs "
                    f"it {'unchanged' if reading else 'alone'})",
                )
            ) from None
        if not reading:
            os.ftruncate(handle, 0)
            os.write(handle, f"{os.getpid()}\n".encode())
        yield
    finally:
        os.close(handle)  # closing releases the lock; the file stays as cofe's mark
