"""The ``cofe`` command: one module per sub-command."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, NoReturn, TextIO

from cofe._errors import CofeError, InputWarning
from cofe._lazy import lazy_names
from cofe._version import __version__
from cofe.cli._args import option_strings, suggestion
from cofe.cli._commands import COMMANDS, OWN_MODELS_ONLY

if TYPE_CHECKING:
    from cofe.cli._reference import reference_markdown

__all__ = ["COMMANDS", "build_parser", "main", "reference_markdown"]
# the docs site's page, loaded by the site's build, not by a command
__getattr__, __dir__ = lazy_names(__name__, {"reference_markdown": "cofe.cli._reference"}, __all__)


class _Parser(argparse.ArgumentParser):
    """argparse, with a suggestion for a misspelt option (``--topk``: did you mean
    ``--top-k``?), searched among every command's options."""

    def error(self, message: str) -> NoReturn:
        if message.startswith("unrecognized arguments:"):
            known = list(option_strings(build_parser()))  # every command's, not only the one run
            hints = [
                f"{word} -> did you mean {hint}?"
                for word in message.split(":", 1)[1].split()
                if word.startswith("-") and (hint := suggestion(word, known))
            ]
            if hints:
                message += " (" + "; ".join(hints) + ")"
        super().error(message)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """``cofe``'s parser. With ``only`` (a command's name, or "" for none) the other commands
    are listed by name and help line without importing their modules -- what ``cofe score``
    needs to start -- and ``only``'s module adds its full parser; without it, every command's
    full parser (the CLI reference, and a misspelt option's suggestions)."""
    parser = _Parser(
        prog="cofe", description="Find which stage of a RAG pipeline loses the information."
    )
    parser.add_argument("--version", action="version", version=f"cofe {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    wanted = {c.module for c in COMMANDS if only is None or c.name == only}
    for command in COMMANDS:
        if command.name in sub.choices:  # added with an earlier command of its module
            continue
        if command.module in wanted:
            importlib.import_module(f"cofe.cli.{command.module}").add_parser(sub)
        else:  # a name in the list and in `cofe --help`, its options unread
            sub.add_parser(command.name, help=command.help)
    return parser


def _command_in(argv: Sequence[str]) -> str:
    """The sub-command ``argv`` names, or "" (none, or not one of cofe's): ``cofe`` takes no
    option with a value before it, so it is the first word that is not an option."""
    first = next((word for word in argv if not word.startswith("-")), "")
    return first if any(c.name == first for c in COMMANDS) else ""


def _one_line_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """cofe's own warnings (a repaired record, a cache that could not be written) as one
    line on stderr; other libraries' warnings keep Python's format."""
    if issubclass(category, InputWarning) or f"{os.sep}cofe{os.sep}" in filename:
        print(f"cofe: warning: {message}", file=file or sys.stderr)
    else:
        _show_warning(message, category, filename, lineno, file, line)


_show_warning = warnings.showwarning
# the extra that brings an optional module (the core installs none of them)
_EXTRA_OF = {
    "openai": "pipeline",
    "httpx": "pipeline",
    "httpcore": "pipeline",
    "llama_cpp": "llm",
    "bm25s": "bm25",
    "unstructured": "pipeline",
    "llama_index": "pipeline",
    "sentence_transformers": "dense",
    "torch": "dense",
    "distributed": "dask",
    "dask": "dask",
    "psycopg": "postgres",
}


# printed above the traceback of an error cofe did not raise on purpose
_BUG_HINT = (
    "cofe: internal error (a bug in cofe, not in your input): please report it with the "
    "traceback below and the command that ran"
)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    command = _command_in(argv)
    with _plugins_off(command in OWN_MODELS_ONLY):
        return _main(command, argv)


_NO_PLUGINS = "PYDANTIC_DISABLE_PLUGINS"  # pydantic's one switch (plugin/_loader.py)


@contextlib.contextmanager
def _plugins_off(wanted: bool) -> Iterator[None]:
    """pydantic's plugins off while a command of ``OWN_MODELS_ONLY`` runs, unless the user
    set the switch (empty: every plugin on); as it was after, for a caller of ``main``."""
    if not wanted or _NO_PLUGINS in os.environ:
        yield
        return
    os.environ[_NO_PLUGINS] = "__all__"
    try:
        yield
    finally:
        os.environ.pop(_NO_PLUGINS, None)


def _main(command: str, argv: Sequence[str]) -> int:
    args = build_parser(only=command).parse_args(argv)
    warnings.showwarning = _one_line_warning
    try:
        code: int = args.run(args)  # the sub-command's ``run``, set by its parser
        sys.stdout.flush()  # a closed pipe shows here, not as a traceback at exit
        return code
    except BrokenPipeError:  # the reader (``| head``) stopped: not an error, and no traceback
        with contextlib.suppress(OSError):  # stdout must not be flushed again at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # as a process killed by SIGPIPE, what shells expect from ``| head``
    except CofeError as error:  # the input, the configuration or an endpoint: one line
        print(f"cofe: error: {error}", file=sys.stderr)
        return error.exit_code
    except (
        FileNotFoundError,
        IsADirectoryError,
        NotADirectoryError,
        FileExistsError,
    ) as error:  # a path given that is not there, or is of the wrong kind: one line
        print(f"cofe: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # disk full, no permission, ...: a failure, still one line
        print(f"cofe: error: {error}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as error:  # an optional part not installed: say which extra
        extra = _EXTRA_OF.get((error.name or "").split(".")[0])
        hint = f': pip install -e ".[{extra}]"' if extra else ""
        print(f"cofe: error: {error.name} is not installed{hint}", file=sys.stderr)
        return 2
    except Exception as error:
        if type(error).__module__.split(".")[0] not in ("sqlite3", "psycopg"):
            # anything else -- a bare ValueError, a ValidationError nobody wrapped -- is a
            # bug in cofe: its traceback is what a report needs
            print(_BUG_HINT, file=sys.stderr)
            raise
        # a database that fails under the monitor (locked, gone, full): one line, no password
        from cofe.monitor.store import shown_location

        print(f"cofe: error: the monitoring store: {shown_location(str(error))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("cofe: interrupted", file=sys.stderr)
        return 130
    finally:
        warnings.showwarning = _show_warning
