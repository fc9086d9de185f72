"""Files written whole or not at all.

Everything cofe writes that a person keeps (scores, reports, manifests,
comparisons) is written to a temporary name beside the target and renamed
over it, so a crash, a full disk or Ctrl-C leaves the old file or the new
one, never half of one -- and never a stray temporary file.

What cofe keeps inside a folder of its own (a run folder's logs and judgements, a scores
folder) is opened without following a link and must be a regular file
(:func:`open_own_for_append`, :func:`refuse_link`): a run folder from someone else whose
``judgements.jsonl`` links to a user's file would otherwise have that file cut and
appended to. Temporary files a killed process left (``.NAME.PID.tmp``, its PID gone) are
removed by the next writer of the folder (:func:`remove_stale_temporaries`).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import IO

from cofe._errors import InputError, InputProblem

_TEMPORARY = re.compile(r"^\..+\.(\d+)\.tmp$")


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


def _not_own(path: Path, what: str) -> InputError:
    return InputError(
        InputProblem(
            str(path),
            None,
            None,
            f"{what}; cofe writes only files and folders of its own here -- remove it "
            "(or copy what it points to in its place) and run the command again",
        )
    )


def refuse_link(path: str | os.PathLike[str]) -> None:
    """Refuse a symbolic link where cofe is about to write (``InputError``)."""
    if Path(path).is_symlink():
        raise _not_own(Path(path), "is a symbolic link")


def open_own(path: str | os.PathLike[str], flags: int, mode: str) -> IO[bytes]:
    """``path`` opened with ``os.open`` ``flags``, never through a link, and only if it is a
    regular file (a FIFO or a device is refused, not blocked on): ``InputError`` otherwise."""
    path = Path(path)
    try:
        handle = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _not_own(path, "is a symbolic link") from None
        if error.errno in (errno.ENXIO, errno.EISDIR):
            raise _not_own(path, "is not a regular file") from None
        raise
    if not stat.S_ISREG(os.fstat(handle).st_mode):
        os.close(handle)
        raise _not_own(path, "is not a regular file")
    os.set_blocking(handle, True)
    return os.fdopen(handle, mode)


def open_own_for_append(path: str | os.PathLike[str]) -> IO[bytes]:
    return open_own(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, "ab")


def remove_stale_temporaries(folder: str | os.PathLike[str]) -> int:
    """Remove ``.NAME.PID.tmp`` files in ``folder`` whose process is gone (a writer killed
    with -9 never removes its own); the number removed."""
    removed = 0
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        match = _TEMPORARY.match(name)
        if match is None or int(match.group(1)) == os.getpid() or _alive(int(match.group(1))):
            continue
        try:
            os.unlink(os.path.join(folder, name))
            removed += 1
        except OSError:
            pass
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # another user's process: its file is not ours to remove
    return True
