"""Rule names as results columns; rules files whose errors name the file, line and field."""

from __future__ import annotations

import pytest

from cofe._errors import InputError
from cofe.check import Kind, Rule, make_rule, parse_column, parse_flag, read_rules
from cofe.check._rules import merged


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
    assert rule == Rule(
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


def test_a_rules_file(tmp_path):
    file = tmp_path / "gate.toml"
    file.write_text(
        "# the gate\nalpha = 0.01\ndefault_max_drop = 0.05\n\n"
        '[min]\n"context/KeywordRecall@4" = 0.8\n'
        "[max]\n'context/RerankLoss@4' = 0.1\n"
        '[max-drop]\n"answer/PointRecall" = 0.02\n'
        "[max_share]\nnot_retrieved = 0.15\n"
    )
    rules = read_rules(file)
    assert (rules.alpha, rules.default_max_drop) == (0.01, 0.05)
    assert [(r.kind, r.target, r.limit) for r in rules.rules] == [
        (Kind.MIN, "context/KeywordRecall@4", 0.8),
        (Kind.MAX, "context/RerankLoss@4", 0.1),
        (Kind.MAX_DROP, "answer/PointRecall", 0.02),
        (Kind.MAX_SHARE, "not_retrieved", 0.15),
    ]
    assert [r.origin for r in rules.rules] == [f"{file}:6", f"{file}:8", f"{file}:10", f"{file}:12"]


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        (
            '[min]\n"context/KeywordRecall@4" = 0.8\n"context/KeywordRecal@4" = 0.8\n',
            ":3: [min] context/KeywordRecal@4:",
            "did you mean context/KeywordRecall@4",
        ),
        (
            '[min]\n"context/KeywordRecall@4" = "high"\n',
            ":2: [min] context/KeywordRecall@4:",
            "must be a number",
        ),
        (
            "[max_share]\nnot_retreived = 0.1\n",
            ":2: [max_share] not_retreived:",
            "did you mean not_retrieved",
        ),
        (
            "alpha = 0.05\n[minimum]\nx = 1\n",
            ":2: minimum:",
            "unknown table or setting; did you mean min",
        ),
        ("alpha = 5\n", ":1: alpha:", "between 0 and 1"),
        ("min = 0.8\n", ":1: min:", 'e.g. [min] then "context/KeywordRecall@4" = 0.8'),
        ('[min]\n"a/b" = \n', ":2:", "not valid TOML"),
    ],
)
def test_rules_file_errors_name_the_file_the_line_and_the_field(tmp_path, text, where, message):
    file = tmp_path / "gate.toml"
    file.write_text(text)
    with pytest.raises(InputError) as caught:
        read_rules(file)
    shown = str(caught.value)
    assert shown.startswith(f"{file}{where}") and message in shown, shown


def test_a_flag_replaces_the_files_rule_of_the_same_name():
    file_rules = [
        Rule(Kind.MIN, "answer/PointRecall", 0.9, "f:2"),
        Rule(Kind.MAX_DROP, "answer/PointRecall", 0.02, "f:4"),
    ]
    flag = Rule(Kind.MIN, "answer/PointRecall", 0.5)
    assert merged(file_rules, [flag]) == [file_rules[1], flag]
