"""Issue 10, item 19: ``cofe run`` / ``cofe annotate`` probe the endpoint before the long work."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from cofe.cli import main
from cofe.testing import ScriptedOpenAI


def _refused_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def _docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir(parents=True)
    (docs / "a.txt").write_text("The Eiffel Tower is in Paris.\n", encoding="utf-8")
    return docs


def _evalset(tmp_path: Path) -> Path:
    # an eval set that exists: a missing one is refused by its flag before any probe
    path = tmp_path / "eval.jsonl"
    path.write_text(
        '{"id": "q1", "query": "Where is the Eiffel Tower?", "fine_keywords": [["Paris"]]}\n',
        encoding="utf-8",
    )
    return path


def _run_args(tmp_path: Path, url: str, model: str = "m") -> list[str]:
    return [
        "run",
        "--docs",
        str(_docs(tmp_path)),
        "--evalset",
        str(_evalset(tmp_path)),
        "--out",
        str(tmp_path / "run"),
        "--generator",
        "openai",
        "--base-url",
        url,
        "--model",
        model,
        "--cache",
        "none",
    ]


def _one_line_error(capsys, url: str) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("cofe: error: endpoint ") and url in err, err
    return err


@pytest.mark.parametrize("command", ["run", "annotate"])
def test_a_refused_connection_fails_in_seconds_naming_the_url(
    tmp_path, capsys, monkeypatch, command
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    url = _refused_url()
    args = (
        _run_args(tmp_path, url)
        if command == "run"
        else [
            "annotate",
            str(_docs(tmp_path)),
            "-o",
            str(tmp_path / "e.jsonl"),
            "--base-url",
            url,
            "--model",
            "m",
            "--cache",
            "none",
        ]
    )
    started = time.monotonic()
    assert main(args) != 0
    assert time.monotonic() - started < 5
    assert "refused" in _one_line_error(capsys, url).lower()
    assert not (tmp_path / "run").exists() and not (tmp_path / "e.jsonl").exists()


def test_an_unknown_model_and_a_401_are_one_line_errors(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-0123456789")
    with ScriptedOpenAI(models=["llama-3"], api_key="sk-right-0123456789") as server:
        assert main(_run_args(tmp_path / "a", server.base_url)) != 0
        err = _one_line_error(capsys, server.base_url)
        assert "401" in err and "sk-wrong-0123456789" not in err
        monkeypatch.setenv("OPENAI_API_KEY", "sk-right-0123456789")
        assert main(_run_args(tmp_path / "b", server.base_url, model="gpt-9")) != 0
        assert "'gpt-9' is not served" in _one_line_error(capsys, server.base_url)
        assert server.requests == []  # no chat call was spent on either


def test_no_probe_skips_the_check(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    url = _refused_url()
    args = [
        "annotate",
        str(_docs(tmp_path)),
        "-o",
        str(tmp_path / "e.jsonl"),
        "--base-url",
        url,
        "--model",
        "m",
        "--cache",
        "none",
        "--no-probe",
        "--timeout",
        "0.5",
        "--retries",
        "0",
    ]
    main(args)  # the run goes ahead (its calls then fail, each with a reason)
    assert "endpoint " + url not in capsys.readouterr().err
