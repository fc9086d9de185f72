"""cofe's errors: one root, three kinds, and problems with input files named by file,
line and field.

The policy (docs/DESIGN.md, "Errors"): cofe raises a ``CofeError`` on purpose, when the
input, the configuration or an endpoint is at fault, and the CLI shows it as one line
with the kind's exit code. Any other exception escaping a command -- a bare
``ValueError``, a pydantic ``ValidationError`` nobody wrapped -- is a bug in cofe: it keeps
its traceback. The kinds keep ``ValueError`` as a second base because they (and the
classes re-parented under them) were ``ValueError`` before, and callers may catch that.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:  # only named: `cofe --help` and a command's parser load no pydantic
    from pydantic import ValidationError


@dataclass(frozen=True, slots=True)
class InputProblem:
    """One bad record: where it is and what is wrong with it."""

    file: str
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )

    @classmethod
    def from_validation(cls, file: str, line: int | None, error: ValidationError) -> InputProblem:
        """Name the first failing field of a pydantic error (and how many more failed)."""
        errors = error.errors(include_url=False)
        first = errors[0]
        field = ".".join(str(part) for part in first["loc"]) or None
        message = str(first["msg"]).removeprefix("Value error, ")  # a validator's own words
        if (
            first["type"] == "string_pattern_mismatch"
            and first.get("ctx", {}).get("pattern") == r"\S"
        ):
            message = "must not be blank (whitespace only)"  # the identifier rule of cofe._ids
        if len(errors) > 1:
            message += f" (and {len(errors) - 1} more problem(s) in this record)"
        return cls(file, line, field, message)


class CofeError(Exception):
    """The root of every error cofe raises on purpose; its kind says whose fault it is."""

    exit_code: ClassVar[int] = 2  # the CLI's exit code: 2 a usage error, 1 a failure


class InputError(CofeError, ValueError):
    """The input kind: a file, record or value given to cofe is wrong (a broken manifest, a
    bad line, an option's value out of range). ``problem`` names file, line and field when
    the error came from a file."""

    def __init__(self, problem: InputProblem | str) -> None:
        super().__init__(str(problem))
        self.problem = problem if isinstance(problem, InputProblem) else None


class ConfigurationError(CofeError, ValueError):
    """The configuration kind: settings that cannot work together, an optional part not
    installed, a store or pipeline cofe cannot use as asked."""


class EndpointError(CofeError, ValueError):
    """The endpoint kind: an LLM endpoint not configured well enough to call, or (the
    subclasses with exit code 1) one that failed when called."""


class InputWarning(UserWarning):
    """Something in the input was repaired rather than refused (the record is kept)."""
