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
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from cofe._atomic import refuse_link, remove_stale_temporaries, write_text_atomically
from cofe._errors import InputError, InputProblem
from cofe._text import neutralise, restore
from cofe.config import ScoreConfig  # the settings a folder records
from cofe.results._columns import COUNT, FLAG, MAYBE_TEXT, RANK, TABLES, TEXT, USER_TEXT, typed
from cofe.results._result import ScoreResult
from cofe.results._rows import Coded, Column, Rows, ScoredRows, is_missing

if TYPE_CHECKING:
    import pandas as pd

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
        writer.add_rows(ScoredRows.of_result(result))
        writer.add_table(Rows.of_frame(result.latency, "latency"))
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
        refuse_link(self.out)  # a scores/ linking to a user's folder: 9 files written there
        if self.out.exists() and not self.out.is_dir():
            raise NotADirectoryError(f"{self.out}: is a file; give a folder for the scores")
        self.out.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(self.out)  # left by a scorer killed with -9
        for name in (SUMMARY, *(f"{n}.csv" if n in CSV_TABLES else n for n in _ROW_FILES)):
            refuse_link(self.out / name)  # renamed over, a link would go; said, not lost
        (self.out / SUMMARY).unlink(missing_ok=True)  # from here on: no complete scoring here
        try:
            for name, tmp in self._tmp.items():
                self._handles[name] = handle = tmp.open("w", encoding="utf-8", newline="")
                if name in CSV_TABLES:  # the header, even when no row follows
                    handle.write(",".join(map(_csv_cell, TABLES[name])) + EOL)
        except BaseException:
            self.__exit__()
            raise
        return self

    def add_rows(self, rows: ScoredRows) -> None:
        """A part's rows: the tables but latency (added once, from every part's seconds)."""
        for table in (rows.scores, rows.points, rows.skipped, rows.recalls):
            self.add_table(table)
        verdicts = rows.verdicts
        # column by column, each as Python values (a missing one None), then zipped into rows
        columns = {
            name: _values(verdicts.columns.get(name), verdicts.length)
            for name in TABLES["verdicts"]
        }
        names = list(columns)
        lines = (dict(zip(names, row, strict=True)) for row in zip(*columns.values(), strict=True))
        self._handles["verdicts.jsonl"].write(_jsonl(lines))

    def add_table(self, rows: Rows) -> None:
        handle = self._handles[rows.table]
        for text in csv_chunks(_neutralised(rows)):
            handle.write(text)

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


def _values(column: Column | None, length: int) -> list[Any]:
    """A column's rows as Python values, a missing one None (JSON's null)."""
    if column is None:
        return [None] * length
    if isinstance(column, Coded):
        values: list[Any] = column.label_array()[column.codes].tolist()
        return values
    return [None if value != value else value for value in column.tolist()]


# a text the csv module writes as it is (quoted only for these, or when empty and alone)
_PLAIN_CELL = re.compile(r'[^,"\r\n]+')


def _csv_cell(value: object) -> str:
    """One text cell as the csv module writes it in a row of several (quoted only when it
    must be; an empty text is an empty cell -- alone on its row it would be written "")."""
    if value == "":
        return ""
    if type(value) is str and _PLAIN_CELL.fullmatch(value):
        return value  # most cells: no writer needed
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator=EOL).writerow([value])
    return buffer.getvalue()[: -len(EOL)]


def _label_cell(label: Any, kind: str) -> str:
    """A coded column's value as pandas writes its cell in a column of that type."""
    if is_missing(label):
        return ""
    if kind == FLAG:
        return "True" if label else "False"
    if kind in (RANK, COUNT):
        return str(int(label))
    return _csv_cell(label)


def _neutralised(rows: Rows) -> Rows:
    """The rows with each text value from a user's data (an id, a keyword) that a spreadsheet
    would run as a formula neutralised: each distinct value looked at once."""
    columns = dict(rows.columns)
    for name in USER_TEXT & columns.keys():
        column = columns[name]
        if isinstance(column, Coded):
            labels = [neutralise(v) if isinstance(v, str) else v for v in column.labels]
            columns[name] = Coded(column.codes, labels)
    return Rows(rows.table, rows.length, columns)


def csv_chunks(rows: Rows, chunk: int = CSV_CHUNK) -> Iterator[str]:
    """The rows as CSV text, ``chunk`` rows at a time (the text of one chunk in memory, not the
    table's): byte for byte what pandas' ``to_csv(index=False, header=False,
    lineterminator=EOL)`` writes of the table as a DataFrame, several times faster -- each
    distinct value is formatted once, each column a slice at a time."""
    columns = [
        _cells_of(rows.columns.get(name), kind, len(rows))
        for name, kind in TABLES[rows.table].items()
    ]
    for start in range(0, len(rows), chunk):
        stop = min(start + chunk, len(rows))
        cells = [cells_of(start, stop) for cells_of in columns]
        yield EOL.join(map(",".join, zip(*cells, strict=True))) + EOL


def _cells_of(column: Column | None, kind: str, length: int) -> Callable[[int, int], np.ndarray]:
    """A column's CSV cells of rows ``start:stop``: missing values empty, numbers and flags
    as pandas writes them, text quoted where needed."""
    if column is None:
        return lambda start, stop: np.full(stop - start, "", dtype=object)
    if isinstance(column, Coded):
        by_label = np.empty(len(column.labels), dtype=object)
        by_label[:] = [_label_cell(label, kind) for label in column.labels]
        codes = column.codes
        return lambda start, stop: by_label[codes[start:stop]]
    values = column

    def numbers(start: int, stop: int) -> np.ndarray:
        part = values[start:stop]
        if (np.signbit(part) & (part == 0)).any():  # -0.0 would be taken for 0.0 below
            distinct, inverse = part, np.arange(len(part))
        else:  # a measure's values repeat (0, 1, halves, thirds): each formatted once
            distinct, inverse = np.unique(part, return_inverse=True)
        text = distinct.astype(str).astype(object)  # numpy's shortest round-trip, as pandas
        text[np.isnan(distinct)] = ""
        picked: np.ndarray = text[inverse.reshape(-1)]
        return picked

    return numbers


def _restored(frame: pd.DataFrame, table: str) -> pd.DataFrame:
    """``frame`` with the apostrophe ``neutralise`` put before a user's text cell removed."""
    import pandas as pd

    frame = frame.copy(deep=False)
    for column, kind in TABLES[table].items():
        if column not in USER_TEXT or not len(frame):  # the rest start with cofe's words
            continue
        values = frame[column]
        # each distinct value looked at once (ids, steps and measures repeat on every row)
        changed = {v: restore(v) for v in pd.unique(values.dropna()) if v.startswith("'")}
        if changed:
            hit = values.isin(list(changed))
            values = values.copy()
            values[hit] = values[hit].map(changed)
            frame[column] = values.astype(kind)
    return frame


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """Any table about to be written as CSV (a comparison's, a sweep's) with every text cell a
    spreadsheet would run as a formula neutralised (``cofe._text.neutralise``)."""
    import pandas as pd

    frame = frame.copy(deep=False)
    for column in frame.columns:
        values = frame[column]
        if values.dtype == object or isinstance(values.dtype, pd.StringDtype):
            frame[column] = values.map(
                lambda v: neutralise(v) if isinstance(v, str) else v, na_action="ignore"
            )
    return frame


def _read_csv(path: Path, table: str, *, neutralised: bool = True) -> pd.DataFrame:
    import pandas as pd

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
    return _restored(frame, table) if neutralised else frame


def read_scores(directory: str | os.PathLike[str]) -> ScoreResult:
    """Read a results folder written by ``ScoreResult.write`` (``cofe score --out``)."""
    import pandas as pd

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
