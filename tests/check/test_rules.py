"""GateRule names as results columns; rules files whose errors name the file, line and field."""

from __future__ import annotations

import warnings

import pytest

from cofe._errors import InputError
from cofe.check import GateRule, Kind, make_rule, parse_column, parse_flag, read_rules
from cofe.check._rules import merged, rules_from_mapping
from cofe.rules import RuleSpellingWarning


@pytest.mark.parametrize(
    "name",
    [
        "context/KeywordRecall@4",
        "pool/KeywordRecall@30",
        "answer/PointRecall",
        "parse/KeywordRecall",
        "answered/PointRecall",
        "corpus/ChunkIntegrity",
        "context/nDCG@4",
        "answer/Faithfulness",
    ],
)
def test_results_columns_are_rule_names(name):
    assert parse_column(name) == name
    assert parse_column(f"  {name} ") == name


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("context/KeywordRecal@4", "did you mean context/KeywordRecall@4"),
        ("context/ndcg@4", "did you mean context/nDCG@4"),
        ("answer/PointRecal", "did you mean answer/PointRecall"),
        ("KeywordRecall@4", "names no step"),
        ("retrieval/KeywordRecall@4", "unknown step 'retrieval'"),
        ("corpus/nDCG@4", "nDCG is not measured at the corpus step (only at pool, context)"),
        ("context/nDCG", "'context/nDCG': nDCG needs a cutoff, e.g. nDCG@4"),
        ("context/nDCG@0", "cutoff must be at least 1"),
    ],
)
def test_unknown_names_say_what_is_near(name, message):
    with pytest.raises(ValueError) as caught:
        parse_column(name)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_flags_parse_into_rules_and_say_where_they_came_from():
    rule = parse_flag(Kind.MAX_DROP, "answer/PointRecall=0.02")
    assert rule == GateRule(
        Kind.MAX_DROP, "answer/PointRecall", 0.02, "--max-drop answer/PointRecall=0.02"
    )
    assert str(rule) == "answer/PointRecall drop <= 0.02"
    assert (rule.step, rule.measure) == ("answer", "PointRecall")
    share = parse_flag(Kind.MAX_SHARE, "not_retrieved=0.15")
    assert (share.target, share.step, str(share)) == (
        "not_retrieved",
        None,
        "share not_retrieved <= 0.15",
    )
    assert parse_flag(Kind.MAX_SHARE, "retrieval=0.3").target == "retrieval"  # a stage
    with pytest.raises(InputError, match="--max-drop: an allowed drop is at least 0"):
        parse_flag(Kind.MAX_DROP, "answer/PointRecall=-0.1")
    with pytest.raises(ValueError, match="must be a number"):
        make_rule(Kind.MIN, "answer/PointRecall", True)


NEW = """# the gate
alpha = 0.01
default_max_drop = 0.05

[[rule]]
target = "context/KeywordRecall@4"
min = 0.8

[[rule]]
target = 'context/RerankLoss@4'
max = 0.1

[[rule]]
target = "answer/PointRecall"
max_drop = 0.02

[[rule]]
target = "not_retrieved"
max = 0.15
"""
OLD = (  # the same rules, as cofe check's rules files were written before the one language
    "# the gate\nalpha = 0.01\ndefault_max_drop = 0.05\n\n"
    '[min]\n"context/KeywordRecall@4" = 0.8\n'
    "[max]\n'context/RerankLoss@4' = 0.1\n"
    '[max-drop]\n"answer/PointRecall" = 0.02\n'
    "[max_share]\nnot_retrieved = 0.15\n"
)
EXPECTED = [
    (Kind.MIN, "context/KeywordRecall@4", 0.8),
    (Kind.MAX, "context/RerankLoss@4", 0.1),
    (Kind.MAX_DROP, "answer/PointRecall", 0.02),
    (Kind.MAX_SHARE, "not_retrieved", 0.15),
]


def test_a_rules_file(tmp_path):
    file = tmp_path / "gate.toml"
    file.write_text(NEW)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new spelling reads without a warning
        rules = read_rules(file)
    assert (rules.alpha, rules.default_max_drop) == (0.01, 0.05)
    assert [(r.kind, r.target, r.limit) for r in rules.rules] == EXPECTED
    assert [r.origin for r in rules.rules] == [f"{file}:{n}" for n in (5, 9, 13, 17)]


def test_the_old_spelling_reads_the_same_rules_with_a_warning_naming_the_new(tmp_path):
    file = tmp_path / "gate.toml"
    file.write_text(OLD)
    with pytest.warns(RuleSpellingWarning) as caught:
        rules = read_rules(file)
    assert [(r.kind, r.target, r.limit) for r in rules.rules] == EXPECTED
    assert [r.origin for r in rules.rules] == [f"{file}:6", f"{file}:8", f"{file}:10", f"{file}:12"]
    [warning] = caught  # one per file, not one per rule
    message = str(warning.message)
    assert message.startswith(f"{file}:5: [min] tables")
    assert (
        'write a [[rule]] table for each: target = "context/KeywordRecall@4", min = 0.8' in message
    )
    assert "\n" not in message and isinstance(warning.message, DeprecationWarning)
    assert warning.filename == __file__  # the caller's line, not cofe's
    with pytest.warns(RuleSpellingWarning):  # a mapping of the old shape, too
        mapped = rules_from_mapping({"max_share": {"retrieval": 0.3}})
    assert [(r.kind, r.target) for r in mapped.rules] == [(Kind.MAX_SHARE, "retrieval")]


def test_a_band_and_a_share_bounded_by_max_in_the_new_spelling(tmp_path):
    rules = rules_from_mapping(
        {
            "rule": [
                {"target": "answer/PointRecall", "min": 0.5, "max": 0.9},
                {"target": "retrieval", "max": 0.3},
            ]
        }
    )
    assert [(r.kind, r.target, r.limit) for r in rules.rules] == [
        (Kind.MIN, "answer/PointRecall", 0.5),
        (Kind.MAX, "answer/PointRecall", 0.9),
        (Kind.MAX_SHARE, "retrieval", 0.3),
    ]
    assert parse_flag(Kind.MAX, "not_retrieved=0.2").kind == Kind.MAX_SHARE  # --max, a share


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        (
            '[[rule]]\ntarget = "context/KeywordRecall@4"\nmin = 0.8\n'
            '[[rule]]\ntarget = "context/KeywordRecal@4"\nmin = 0.8\n',
            ":5: rule 2.target:",
            "did you mean context/KeywordRecall@4",
        ),
        (
            '[[rule]]\ntarget = "context/KeywordRecall@4"\nmin = "high"\n',
            ":3: rule 1.min:",
            "min must be a number, not 'high'",
        ),
        (
            '[[rule]]\nname = "shares"\ntarget = "not_retreived"\nmax = 0.1\n',
            ":3: rule 1 ('shares').target:",
            "did you mean not_retrieved",
        ),
        ('[[rule]]\ntarget = "retrieval"\nmin = 0.1\n', ":3: rule 1.min:", "by max only"),
        ('[[rule]]\ntarget = "retrieval"\nmax = 1.5\n', ":3: rule 1.max:", "between 0 and 1"),
        (
            '[[rule]]\ntarget = "answer/PointRecall"\nmax_rise = 0.1\n',
            ":3: rule 1.max_rise:",
            "cofe check does not compare by max_rise",
        ),
        (
            '[[rule]]\ntarget = "answer/PointRecall"\nmin = 0.5\nmax_drop = 0.1\n',
            ":4: rule 1.max_drop:",
            "a rule compares one way",
        ),
        ('[[rule]]\ntarget = "answer/PointRecall"\n', ":1: rule 1:", "needs a comparison"),
        ("[[rule]]\nmin = 0.5\n", ":1: rule 1.target:", "every rule names its target"),
        (
            '[[rule]]\ntarget = "answer/PointRecall"\nmin = 0.5\nseverity = "page"\n',
            ":4: rule 1.severity:",
            "cofe check knows severities error, warning, not 'page'",
        ),
        (
            '[[rule]]\ntarget = "lost@retrieval"\nmax = 0.5\n',
            ":2: rule 1.target:",
            "a verdict or a stage alone",
        ),
        (
            '[[rule]]\ntarget = "retrieval/PoolSize"\nmax = 5\n',
            ":2: rule 1.target:",
            "unknown step 'retrieval'",
        ),
        ('[[rule]]\ntarget = "x/y"\nmn = 1\n', ":3: rule 1.mn:", "unknown field; did you mean min"),
        ("alpha = 0.05\n[minimum]\nx = 1\n", ":2: minimum:", "unknown table or setting"),
        ("alpha = 5\n", ":1: alpha:", "between 0 and 1"),
        ("rule = 1\n", ":1: rule:", "rules are [[rule]] tables"),
        # the old spelling's own problems, as before
        (
            '[min]\n"context/KeywordRecall@4" = 0.8\n"context/KeywordRecal@4" = 0.8\n',
            ":3: [min] context/KeywordRecal@4:",
            "did you mean context/KeywordRecall@4",
        ),
        ("min = 0.8\n", ":1: min:", 'e.g. [min] then "context/KeywordRecall@4" = 0.8'),
        ('[[rule]]\ntarget = "a/b" = \n', ":2:", "not valid TOML"),
    ],
)
def test_rules_file_errors_name_the_file_the_line_and_the_field(tmp_path, text, where, message):
    file = tmp_path / "gate.toml"
    file.write_text(text)
    with pytest.raises(InputError) as caught, warnings.catch_warnings():
        warnings.simplefilter("ignore", RuleSpellingWarning)
        read_rules(file)
    shown = str(caught.value)
    assert shown.startswith(f"{file}{where}") and message in shown, shown
    assert "\n" not in shown


def test_the_cli_says_an_old_spelling_in_one_line_on_stderr(tmp_path, capsys):
    from cofe.cli import main

    file = tmp_path / "gate.toml"
    file.write_text(OLD)
    code = main(["check", str(tmp_path / "no-such-run"), "--rules", str(file)])
    err = capsys.readouterr().err.splitlines()
    assert code == 2  # the missing run, after the rules were read
    assert err[0].startswith(f"cofe: warning: {file}:5: [min] tables")
    assert 'target = "context/KeywordRecall@4", min = 0.8' in err[0]
    assert len([line for line in err if "old spelling" in line]) == 1


def test_the_old_name_of_the_gate_rule_still_resolves():
    import cofe.check

    with pytest.warns(DeprecationWarning, match="cofe.check.Rule is now cofe.check.GateRule"):
        assert cofe.check.Rule is GateRule


def test_a_flag_replaces_the_files_rule_of_the_same_name():
    file_rules = [
        GateRule(Kind.MIN, "answer/PointRecall", 0.9, "f:2"),
        GateRule(Kind.MAX_DROP, "answer/PointRecall", 0.02, "f:4"),
    ]
    flag = GateRule(Kind.MIN, "answer/PointRecall", 0.5)
    assert merged(file_rules, [flag]) == [file_rules[1], flag]
