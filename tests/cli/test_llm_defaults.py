"""Endpoint options left unset get small-model settings for `cofe llm serve`'s model (one
request at a time, long calls, JSON mode) and the usual ones for any other endpoint; a value
given on the command line always wins."""

import pytest

from cofe.cli import build_parser
from cofe.cli._judge import llm_defaults
from cofe.llm import LOCAL_MODEL_ID

COMMANDS = [["judge", "RUN"], ["annotate", "DOCS", "-o", "out.jsonl"], ["monitor", "judge"]]


@pytest.mark.parametrize("command", COMMANDS)
def test_the_local_model_gets_small_model_settings(command, monkeypatch):
    monkeypatch.delenv("OPENAI_MODEL", raising=False)
    args = llm_defaults(build_parser().parse_args([*command, "--model", LOCAL_MODEL_ID]))
    assert (args.concurrency, args.timeout, args.json_mode) == (1, 600.0, "json_object")
    other = llm_defaults(build_parser().parse_args([*command, "--model", "gpt-4o-mini"]))
    assert (other.concurrency, other.timeout, other.json_mode) == (4, 120.0, "off")
    given = llm_defaults(
        build_parser().parse_args(
            [*command, "--model", LOCAL_MODEL_ID, "--concurrency", "2", "--json-mode", "off"]
        )
    )
    assert (given.concurrency, given.timeout, given.json_mode) == (2, 600.0, "off")


def test_the_model_may_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_MODEL", LOCAL_MODEL_ID)
    args = llm_defaults(build_parser().parse_args(["judge", "RUN"]))
    assert args.concurrency == 1 and args.json_mode == "json_object"


def test_the_local_model_is_judged_step_by_step_unless_told_otherwise(
    tmp_path, monkeypatch, capsys
):
    """The step-by-step mode is the local model's default (measured: its dense replies do not
    separate right from wrong answers); any other model is judged densely; a flag wins."""
    import json

    from cofe.cli import main
    from tests.judges.test_steps import CASES, make_run

    monkeypatch.delenv("OPENAI_MODEL", raising=False)
    run = make_run(tmp_path / "run", CASES)
    for flags, steps in (
        (["--model", LOCAL_MODEL_ID], True),
        (["--model", "gpt-4o-mini"], False),
        (["--model", LOCAL_MODEL_ID, "--no-steps"], False),
        (["--model", "gpt-4o-mini", "--steps"], True),
    ):
        assert main(["judge", str(run), "--dry-run", *flags]) == 0
        assert json.loads(capsys.readouterr().out)["steps"] is steps, flags
