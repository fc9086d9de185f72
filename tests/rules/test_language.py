"""The one rule language: the targets each form accepts and refuses, the comparisons, the
one-line errors, the schema, and the old spellings said once on stderr."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from cofe._errors import InputError
from cofe.rules import (
    Bound,
    Dialect,
    RuleFile,
    RuleSpellingWarning,
    old_spellings_said,
    parse_rules,
    parse_target,
    read_rule_file,
    rule_schema,
)


def _signals(stage: str, name: str) -> object:
    if (stage, name) != ("retrieval", "PoolSize"):
        raise InputError(f"no label-free signal {stage}/{name}; known: retrieval/PoolSize")
    return name


@pytest.mark.parametrize(
    ("text", "form", "scope", "name"),
    [
        ("context/KeywordRecall@4", "column", "context", "KeywordRecall@4"),
        (" answered/PointRecall ", "column", "answered", "PointRecall"),
        ("corpus/EntityAnchoring", "column", "corpus", "EntityAnchoring"),
        ("not_retrieved", "share", "", "not_retrieved"),
        ("retrieval", "share", "", "retrieval"),
        ("cut_by_rerank@reranking", "share", "reranking", "cut_by_rerank"),
        ("lost@retrieval", "share", "retrieval", "lost"),
        ("refused@generation", "share", "generation", "refused"),
        ("pipeline_error@none", "share", "none", "pipeline_error"),
        ("retrieval/PoolSize", "signal", "retrieval", "PoolSize"),
    ],
)
def test_each_form_of_target(text, form, scope, name):
    target = parse_target(text, signals=_signals, staged_shares=True)
    assert (target.form, target.scope, target.name) == (form, scope, name)
    assert target.text == text.strip()


@pytest.mark.parametrize(
    ("text", "options", "message"),
    [
        ("context/KeywordRecal@4", {}, "did you mean context/KeywordRecall@4"),
        ("KeywordRecall@4", {}, "names no step"),
        ("corpus/nDCG@4", {}, "not measured at the corpus step"),
        ("not_retreived", {}, "did you mean not_retrieved"),
        ("lost@retrieval", {}, "a verdict or a stage alone"),  # the gate counts no stage
        ("lost@retreival", {"staged_shares": True}, "unknown stage 'retreival'"),
        ("cut_by_rerunk@reranking", {"staged_shares": True}, "did you mean cut_by_rerank"),
        ("retrieval/PoolSize", {}, "unknown step 'retrieval'"),  # a reader of no signals
        ("retrieval/PoolSze", {"signals": _signals}, "no label-free signal retrieval/PoolSze"),
        (0.5, {}, "a target is a string"),
    ],
)
def test_targets_refused_say_what_is_near(text, options, message):
    with pytest.raises(InputError) as raised:
        parse_target(text, **options)
    assert message in str(raised.value) and "\n" not in str(raised.value)


DIALECT = Dialect(
    reader="test",
    bounds=tuple(Bound),
    severities=("low", "high"),
    default_severity="low",
    options=("window",),
    settings=("alpha",),
)


def _parse(tmp_path: Path, text: str) -> list:
    path = tmp_path / "r.toml"
    path.write_text(text, encoding="utf-8")
    return parse_rules(read_rule_file(path), DIALECT)


def test_a_file_of_rules(tmp_path: Path):
    rules = _parse(
        tmp_path,
        'alpha = 0.1\n\n[[rule]]\ntarget = "answer/PointRecall"\nmin = 0.5\nmax = 0.9\n'
        '\n[[rule]]\nname = "n"\ntarget = "retrieval"\nmax_change = 0.2\nseverity = "high"\n'
        "window = 3\n",
    )
    assert [(r.target.text, r.limits, r.severity, r.name) for r in rules] == [
        ("answer/PointRecall", ((Bound.MIN, 0.5), (Bound.MAX, 0.9)), "low", None),
        ("retrieval", ((Bound.MAX_CHANGE, 0.2),), "high", "n"),
    ]
    assert rules[1].option("window") == 3 and rules[0].origin.endswith("r.toml:3")
    assert str(rules[0]) == "answer/PointRecall >= 0.5 and answer/PointRecall <= 0.9"


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ('[[rule]]\ntarget = "retrieval"\nmax = true\n', ":3: rule 1.max:", "must be a number"),
        ('[[rule]]\ntarget = "retrieval"\nmax = 1e16\n', ":3: rule 1.max:", "at most 1e+15"),
        ('[[rule]]\ntarget = "retrieval"\nmin = 0.9\nmax = 0.1\n', ":3: rule 1.min:", "nothing"),
        ('[[rule]]\ntarget = "retrieval"\nmax = 1\nseverity = "hgh"\n', ":4:", "did you mean high"),
        ('[[rule]]\ntarget = "retrieval"\nmax = 1\nname = ""\n', ":4: rule 1.name:", "a word"),
        ('[[rule]]\ntarget = "retrieval"\nmax = 1\nwindw = 3\n', ":4:", "did you mean window"),
        ('[rule]\ntarget = "retrieval"\n', ":1: rule:", "two brackets"),
        ("rule = [1]\n", ": rule 1:", "a rule is a [[rule]] table"),
        ("beta = 1\n", ":1: beta:", "unknown table or setting"),
        ("[[rule]\n", ":1:", "not valid TOML"),
    ],
)
def test_a_bad_rule_is_one_line_naming_file_line_and_field(tmp_path, text, where, message):
    with pytest.raises(InputError) as raised:
        _parse(tmp_path, text)
    shown = str(raised.value)
    assert shown.startswith(f"{tmp_path / 'r.toml'}{where}") and message in shown, shown
    assert "\n" not in shown


def test_a_file_not_utf8_or_nested_too_deeply_is_one_line(tmp_path: Path):
    path = tmp_path / "r.toml"
    path.write_bytes(b'[[rule]]\ntarget = "\xff"\n')
    with pytest.raises(InputError, match="not UTF-8"):
        read_rule_file(path)
    path.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(InputError, match="nested too deeply"):
        read_rule_file(path)


def test_the_schema_lists_each_readers_keys():
    schema = rule_schema(DIALECT, {"window": {"type": "integer"}})
    assert set(schema["properties"]) == {"target", "name", "severity", "window", *Bound}
    assert schema["properties"]["severity"]["enum"] == ["low", "high"]
    assert schema["properties"]["max_drop"]["minimum"] == 0
    assert schema["required"] == ["target"] and schema["additionalProperties"] is False


def test_an_old_spelling_is_one_stderr_line_in_the_cli_and_other_warnings_pass(capsys):
    source = RuleFile("f.toml", "[min]\nx = 1\n", {})
    with pytest.warns(UserWarning, match="something else"), old_spellings_said():
        source.warn("old words; write new ones", "min")
        warnings.warn("something else", UserWarning, stacklevel=1)
    assert capsys.readouterr().err == (
        "cofe: warning: f.toml:1: old words; write new ones (see docs/rules.md)\n"
    )
    with pytest.warns(RuleSpellingWarning, match="f.toml:1: old words"):
        source.warn("old words", "min")


def test_rule_means_one_thing_and_the_answer_matchers_old_name_still_resolves():
    import cofe.matching

    with pytest.warns(
        DeprecationWarning, match="cofe.matching.Rule is now cofe.matching.DecidedBy"
    ):
        assert cofe.matching.Rule is cofe.matching.DecidedBy
