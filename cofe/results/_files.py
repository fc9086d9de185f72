"""Writing and reading a results folder.

Each table is written to a temporary name and renamed into place; the old
summary is removed first and the new one written last, so a reader either
finds a complete scoring (``summary.json`` present) or none -- never a mix of
two. ``summary.json`` carries ``results_schema_version``: a newer one is
refused, an older one would be migrated here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from cofe._atomic import replace_atomically, write_text_atomically
from cofe._errors import InputError, InputProblem
from cofe.results._columns import MAYBE_TEXT, TABLES, TEXT, typed
from cofe.results._result import ScoreResult

if TYPE_CHECKING:
    from cofe.stages._config import ScoreConfig

RESULTS_SCHEMA_VERSION = 2
# version 1 had no verdicts.source column: read as missing (no clustering by document)
SUMMARY = "summary.json"
CSV_TABLES = ("scores", "points", "skipped", "recalls", "latency")
SCORE_FILES = (
    *(f"{name}.csv" for name in CSV_TABLES),
    "verdicts.jsonl",
    "problems.jsonl",
    "problems.txt",
    SUMMARY,
)


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def scores_folder(run_dir: str | os.PathLike[str], config: ScoreConfig) -> Path:
    """Where ``cofe score`` writes a scoring of a run: ``scores/`` for the default settings,
    ``scores-<settings>/`` for others, so scorings with different settings sit side by side."""
    label = config.label()
    safe = "".join(ch if ch.isalnum() or ch in "=,.-_" else "_" for ch in label)
    return Path(run_dir) / (f"scores-{safe}" if safe else "scores")


def _settings_in(folder: Path) -> dict | None:
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
    out = Path(directory)
    if not replace:
        existing = _settings_in(out)
        wanted = result.config.model_dump(mode="json")
        if existing is not None and existing != wanted:
            from cofe.stages._config import ScoreConfig

            try:
                theirs = ScoreConfig.model_validate(existing).label() or "the defaults"
            except ValueError:
                theirs = "unreadable settings"
            raise InputError(
                InputProblem(
                    str(out / SUMMARY),
                    None,
                    "config",
                    f"holds a scoring with other settings ({theirs}; this one: "
                    f"{result.config.label() or 'the defaults'}); write elsewhere or pass "
                    "--force to replace it",
                )
            )
    out.mkdir(parents=True, exist_ok=True)
    (out / SUMMARY).unlink(missing_ok=True)  # from here on the folder holds no complete scoring
    for name in CSV_TABLES:
        frame = typed(getattr(result, name), name)
        replace_atomically(out / f"{name}.csv", lambda tmp, f=frame: f.to_csv(tmp, index=False))
    verdicts = typed(result.verdicts, "verdicts").astype(object)
    rows = verdicts.where(verdicts.notna(), None).to_dict(orient="records")
    write_text_atomically(out / "verdicts.jsonl", _jsonl(rows))
    problems = [
        {"file": p.file, "line": p.line, "field": p.field, "message": p.message}
        for p in result.problems
    ]
    write_text_atomically(out / "problems.jsonl", _jsonl(problems))
    text = "".join(f"{p}\n" for p in result.problems)
    write_text_atomically(out / "problems.txt", text)
    summary = json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n"
    write_text_atomically(out / SUMMARY, summary)
    return out


def _read_csv(path: Path, table: str) -> pd.DataFrame:
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
    return typed(frame, table)


def read_scores(directory: str | os.PathLike[str]) -> ScoreResult:
    """Read a results folder written by ``ScoreResult.write`` (``cofe score --out``)."""
    from cofe.stages._config import ScoreConfig

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
    tables = {name: _read_csv(folder / f"{name}.csv", name) for name in CSV_TABLES}
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
