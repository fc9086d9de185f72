"""Problems with input files, named by file, line and field."""

from __future__ import annotations

from dataclasses import dataclass

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
        message = first["msg"]
        if (
            first["type"] == "string_pattern_mismatch"
            and first.get("ctx", {}).get("pattern") == r"\S"
        ):
            message = "must not be blank (whitespace only)"  # the identifier rule of cofe._ids
        if len(errors) > 1:
            message += f" (and {len(errors) - 1} more problem(s) in this record)"
        return cls(file, line, field, message)


class InputError(ValueError):
    """Raised where a bad record cannot be skipped (e.g. a broken manifest)."""

    def __init__(self, problem: InputProblem) -> None:
        super().__init__(str(problem))
        self.problem = problem


class InputWarning(UserWarning):
    """Something in the input was repaired rather than refused (the record is kept)."""
