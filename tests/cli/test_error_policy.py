"""One error policy (issue 41): cofe's own errors -- input, configuration, endpoint -- are one
line with their kind's exit code; anything else is a bug and keeps its traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

import cofe
import cofe.cli._check as check_command
from cofe import CofeError, ConfigurationError, EndpointError, InputError
from cofe.cli import main
from cofe.llm import EndpointUnreachable, LLMReplyError

REPO = Path(__file__).resolve().parents[2]


def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["check", str(tmp_path), "--alpha", "2"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip() == "cofe: error: --alpha must be between 0 and 1, got 2.0"


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (InputError("a bad record"), 2),
        (ConfigurationError("no such store"), 2),
        (EndpointError("no model: give --model"), 2),  # misconfigured: a usage error
        (EndpointUnreachable("endpoint http://x: connection refused"), 1),  # a failure
        (LLMReplyError("the endpoint returned no choices"), 1),
    ],
)
def test_each_kind_is_one_line_with_its_exit_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], error: CofeError, code: int
) -> None:
    def fails(args: object) -> int:
        raise error

    monkeypatch.setattr(check_command, "run", fails)
    assert main(["check", "run"]) == code
    assert capsys.readouterr().err == f"cofe: error: {error}\n"


class _Model(BaseModel):
    n: int


def _validation_error() -> int:
    _Model.model_validate({"n": "many"})
    return 0


@pytest.mark.parametrize(
    "bug",
    [lambda: int("not a number"), _validation_error],
    ids=["bare ValueError", "unwrapped ValidationError"],
)
def test_a_bug_escapes_with_a_hint_to_report_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], bug: object
) -> None:
    monkeypatch.setattr(check_command, "run", lambda args: bug())  # type: ignore[operator]
    with pytest.raises(ValueError):  # not turned into an exit code: the traceback is kept
        main(["check", "run"])
    err = capsys.readouterr().err
    assert "a bug in cofe" in err and "please report it" in err


def test_a_bug_shows_its_traceback_on_the_command_line() -> None:
    program = (
        "import cofe.cli._check as c, sys\n"
        "c.run = lambda args: int('not a number')\n"
        "from cofe.cli import main\n"
        "sys.exit(main(['check', 'run']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert done.returncode == 1
    assert "Traceback (most recent call last)" in done.stderr
    assert "ValueError: invalid literal for int()" in done.stderr
    assert "please report it" in done.stderr


def test_the_kinds_share_one_root_and_stay_value_errors() -> None:
    # callers that caught ValueError before the root existed still catch every kind
    for kind in (InputError, ConfigurationError, EndpointError):
        assert issubclass(kind, CofeError) and issubclass(kind, ValueError)
    assert cofe.InputError is InputError
    from cofe.monitor.store import StoreError
    from cofe.pipeline import OfflineSetupError

    assert issubclass(StoreError, ConfigurationError)
    assert issubclass(OfflineSetupError, ConfigurationError)
    assert issubclass(OfflineSetupError, RuntimeError)
