"""Writing and reading a results folder.

Each table is written to a temporary name and renamed into place; the old
summary is removed first and the new one written last, so a reader either
finds a complete scoring (``summary.json`` present) or none -- never a mix of
two. ``summary.json`` carries ``results_schema_version``: a newer one is
refused, an older one would be migrated here.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import pandas as pd

from cofe._atomic import write_text_atomically
from cofe._errors import InputError, InputProblem
from cofe._text import FORMULA_START, neutralise, restore
from cofe.results._columns import MAYBE_TEXT, TABLES, TEXT, USER_TEXT, typed
from cofe.results._result import ScoreResult
from cofe.stages import ScoreConfig  # the settings a folder records (cofe.stages loads lazily)

# 4: points.csv gains answer_decision and answer_rule (an older folder reads with them empty)
# 5: text cells a spreadsheet would run as a formula (=, +, -, @, tab, CR) or starting with an
#    apostrophe are written with a leading apostrophe, removed again on reading (older folders
#    are read as they are)
RESULTS_SCHEMA_VERSION = 5
NEUTRALISED_SINCE = 5
# rows end in CRLF (RFC 4180): a cell holding a carriage return is then quoted, and read back
EOL = "\r\n"
CSV_CHUNK = 100_000  # rows formatted at once: their text, not the whole table's, is in memory
# version 1 had no verdicts.source column: read as missing (no clustering by document);
# version 2 had no verdicts.answered and .refusal: read as missing (refusals unknown)
SUMMARY = "summary.json"
CSV_TABLES = ("scores", "points", "skipped", "recalls", "latency")
_ROW_FILES = (*CSV_TABLES, "verdicts.jsonl", "problems.jsonl", "problems.txt")
SCORE_FILES = (
    *(f"{name}.csv" for name in CSV_TABLES),
    "verdicts.jsonl",
    "problems.jsonl",
    "problems.txt",
    SUMMARY,
)


def _jsonl(rows: Iterable[Mapping[Any, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def scores_folder(run_dir: str | os.PathLike[str], config: ScoreConfig) -> Path:
    """Where ``cofe score`` writes a scoring of a run: ``scores/`` for the default settings,
    ``scores-<settings>/`` for others, so scorings with different settings sit side by side."""
    label = config.label()
    safe = "".join(ch if ch.isalnum() or ch in "=,.-_" else "_" for ch in label)
    return Path(run_dir) / (f"scores-{safe}" if safe else "scores")


def _settings_in(folder: Path) -> dict[str, Any] | None:
    """The settings of the complete scoring in a folder (None: there is none)."""
    try:
        summary = json.loads((folder / SUMMARY).read_text(encoding="utf-8"))
        return summary.get("config") if isinstance(summary, dict) else {}
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError):
        return {}  # unreadable: treated as other settings


def write_scores(
    result: ScoreResult, directory: str | os.PathLike[str], *, replace: bool = False
) -> Path:
    """Write a scoring to a folder. A folder holding a scoring made with other settings is
    refused unless ``replace``: a comparison must never read scores it did not ask for."""
    with ScoresWriter(directory, result.config, replace=replace) as writer:
        writer.add_rows(result)
        writer.add_problems(result.problems)
        writer.finish(result.to_dict())
    return writer.out


class ScoresWriter:
    """A results folder written a part at a time (the streaming scorer's batches, or one
    whole ``ScoreResult``): rows are appended to temporary files, which are renamed into
    place only when the scoring is complete, ``summary.json`` last -- a reader finds the
    old complete scoring, or none, or the new one."""

    def __init__(
        self, directory: str | os.PathLike[str], config: ScoreConfig, *, replace: bool = False
    ) -> None:
        self.out = Path(directory)
        self.config = config
        if not replace:
            self._refuse_other_settings()
        self._tmp = {name: self.out / f".{name}.{os.getpid()}.tmp" for name in _ROW_FILES}
        self._handles: dict[str, TextIO] = {}

    def _refuse_other_settings(self) -> None:
        existing = _settings_in(self.out)
        if existing is None:
            return
        wanted = self.config.model_dump(mode="json")
        try:
            # read as settings, not compared as raw JSON: a scoring written before a setting
            # existed holds its default implicitly (an older cofe's defaults are these)
            read = ScoreConfig.model_validate(existing)
            theirs = read.label() or "the defaults"
            same = read.model_dump(mode="json") == wanted
        except ValueError:
            theirs, same = "unreadable settings", False
        if not same:
            raise InputError(
                InputProblem(
                    str(self.out / SUMMARY),
                    None,
                    "config",
                    f"holds a scoring with other settings ({theirs}; this one: "
                    f"{self.config.label() or 'the defaults'}); write elsewhere or pass "
                    "--force to replace it",
                )
            )

    def __enter__(self) -> ScoresWriter:
        if self.out.exists() and not self.out.is_dir():
            raise NotADirectoryError(f"{self.out}: is a file; give a folder for the scores")
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / SUMMARY).unlink(missing_ok=True)  # from here on: no complete scoring here
        try:
            for name, tmp in self._tmp.items():
                self._handles[name] = handle = tmp.open("w", encoding="utf-8", newline="")
                if name in CSV_TABLES:  # the header, even when no row follows
                    typed(pd.DataFrame(), name).to_csv(handle, index=False, lineterminator=EOL)
        except BaseException:
            self.__exit__()
            raise
        return self

    def add_rows(self, result: ScoreResult) -> None:
        for name in CSV_TABLES:
            self.add_table(name, getattr(result, name))
        verdicts = typed(result.verdicts, "verdicts")
        # column by column (DataFrame.to_dict boxes every cell on its own, several times
        # slower): each column as Python values, a missing one None
        columns = {
            name: [
                None if gone else value
                for value, gone in zip(
                    values.astype(object).tolist(), values.isna().tolist(), strict=True
                )
            ]
            for name, values in verdicts.items()
        }
        names = list(columns)
        rows = (dict(zip(names, row, strict=True)) for row in zip(*columns.values(), strict=True))
        self._handles["verdicts.jsonl"].write(_jsonl(rows))

    def add_table(self, name: str, frame: pd.DataFrame) -> None:
        frame = _cells(typed(frame, name), name, neutralise)
        handle = self._handles[name]
        for start in range(0, len(frame), CSV_CHUNK):  # text for a slice at a time: bounded
            handle.write(csv_rows(frame.iloc[start : start + CSV_CHUNK]))

    def add_problems(self, problems: list[InputProblem]) -> None:
        rows = [
            {"file": p.file, "line": p.line, "field": p.field, "message": p.message}
            for p in problems
        ]
        self._handles["problems.jsonl"].write(_jsonl(rows))
        self._handles["problems.txt"].write("".join(f"{p}\n" for p in problems))

    def finish(self, summary: dict[str, Any]) -> None:
        for handle in self._handles.values():
            handle.close()
        for name, tmp in self._tmp.items():
            os.replace(tmp, self.out / (f"{name}.csv" if name in CSV_TABLES else name))
        text = json.dumps(summary, indent=2, ensure_ascii=False) + "\n"
        write_text_atomically(self.out / SUMMARY, text)  # last: the scoring is complete

    def __exit__(self, *exc: object) -> None:
        for handle in self._handles.values():
            handle.close()
        for tmp in self._tmp.values():  # renamed by finish, or left by a failure: gone
            tmp.unlink(missing_ok=True)


def _csv_cell(value: object) -> str:
    """One text cell as the csv module writes it in a row of several (quoted only when it
    must be; an empty text is an empty cell -- alone on its row it would be written "")."""
    if value == "":
        return ""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator=EOL).writerow([value])
    return buffer.getvalue()[: -len(EOL)]


def _csv_column(values: pd.Series) -> np.ndarray:
    """A column's cells as text: missing values empty, numbers and flags as pandas writes
    them, text quoted where needed -- each distinct text quoted once."""
    kind = values.dtype
    if pd.api.types.is_object_dtype(kind) or isinstance(kind, pd.StringDtype):
        codes, uniques = pd.factorize(values, use_na_sentinel=True)
        cells = np.array([*(_csv_cell(u) for u in uniques), ""], dtype=object)
        return cells[codes]  # the sentinel -1 picks the trailing ""
    missing = values.isna().to_numpy()
    if isinstance(kind, pd.BooleanDtype):
        text = np.where(values.to_numpy(dtype=bool, na_value=False), "True", "False")
    elif isinstance(kind, pd.Int64Dtype):
        text = values.to_numpy(dtype=np.int64, na_value=0).astype(str)
    else:  # float64, int64: numpy's shortest round-trip text, as pandas writes
        text = values.to_numpy().astype(str)
    cells = text.astype(object)
    cells[missing] = ""
    return cells


def csv_rows(frame: pd.DataFrame) -> str:
    """The frame's rows as CSV text, byte for byte what ``frame.to_csv(index=False,
    header=False, lineterminator=EOL)`` writes, in about half the time: each column is
    formatted whole, each distinct text quoted once (millions of score rows repeat a few
    thousand ids and a few dozen measure names)."""
    if not len(frame):
        return ""
    columns = [_csv_column(frame[name]) for name in frame.columns]
    return EOL.join(map(",".join, zip(*columns, strict=True))) + EOL


def _cells(frame: pd.DataFrame, table: str, change: Callable[[str], str]) -> pd.DataFrame:
    """``frame`` with ``change`` (``neutralise`` or ``restore``) applied to the text cells that
    need it: a keyword, an id or a query type cannot become a spreadsheet formula."""
    starts = FORMULA_START if change is neutralise else ("'",)
    frame = frame.copy(deep=False)
    for column, kind in TABLES[table].items():
        if column not in USER_TEXT or not len(frame):  # the rest start with cofe's words
            continue
        values = frame[column]
        # each distinct value looked at once (ids, steps and measures repeat on every row)
        changed = {v: change(v) for v in pd.unique(values.dropna()) if v.startswith(starts)}
        if changed:
            hit = values.isin(list(changed))
            values = values.copy()
            values[hit] = values[hit].map(changed)
            frame[column] = values.astype(kind)
    return frame


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """Any table about to be written as CSV (a comparison's, a sweep's) with every text cell a
    spreadsheet would run as a formula neutralised (``cofe._text.neutralise``)."""
    frame = frame.copy(deep=False)
    for column in frame.columns:
        values = frame[column]
        if values.dtype == object or isinstance(values.dtype, pd.StringDtype):
            frame[column] = values.map(
                lambda v: neutralise(v) if isinstance(v, str) else v, na_action="ignore"
            )
    return frame


def _read_csv(path: Path, table: str, *, neutralised: bool = True) -> pd.DataFrame:
    columns = TABLES[table]
    text_columns = [c for c, kind in columns.items() if kind in (TEXT, MAYBE_TEXT)]
    frame = pd.read_csv(
        path,
        dtype={c: str for c in text_columns},
        keep_default_na=False,
        na_values={c: [""] for c, kind in columns.items() if kind != TEXT},
    )
    missing = [c for c in columns if c not in frame]
    if missing:
        raise InputError(
            InputProblem(str(path), 1, missing[0], f"column missing (expected {list(columns)})")
        )
    frame = typed(frame, table)
    return _cells(frame, table, restore) if neutralised else frame


def read_scores(directory: str | os.PathLike[str]) -> ScoreResult:
    """Read a results folder written by ``ScoreResult.write`` (``cofe score --out``)."""
    folder = Path(directory)
    summary_path = folder / SUMMARY
    if not summary_path.exists():
        raise InputError(
            InputProblem(
                str(summary_path),
                None,
                None,
                "no summary.json: not a results folder, or the scoring did not finish",
            )
        )
    try:
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as error:
        raise InputError(
            InputProblem(str(summary_path), None, None, f"not JSON: {error}")
        ) from None
    version = summary.get("results_schema_version") if isinstance(summary, dict) else None
    if not isinstance(version, int):
        raise InputError(
            InputProblem(
                str(summary_path),
                None,
                "results_schema_version",
                "missing: written by an older cofe; score the run again",
            )
        )
    if version > RESULTS_SCHEMA_VERSION:
        raise InputError(
            InputProblem(
                str(summary_path),
                None,
                "results_schema_version",
                f"version {version} was written by a newer cofe (this one reads up to "
                f"{RESULTS_SCHEMA_VERSION}); upgrade cofe",
            )
        )
    neutralised = version >= NEUTRALISED_SINCE
    tables = {
        name: _read_csv(folder / f"{name}.csv", name, neutralised=neutralised)
        for name in CSV_TABLES
    }
    verdict_rows = [
        json.loads(line)
        for line in (folder / "verdicts.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    verdicts = typed(
        pd.DataFrame.from_records(verdict_rows, columns=list(TABLES["verdicts"])), "verdicts"
    )
    problems = [
        InputProblem(**json.loads(line))
        for line in (folder / "problems.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return ScoreResult(
        config=ScoreConfig.model_validate(summary["config"]),
        run=summary["run"],
        run_id=summary["run_id"],
        shape=summary["shape"],
        verdicts=verdicts,
        problems=problems,
        evalset_sha256=summary.get("evalset_sha256"),
        **tables,
    )
