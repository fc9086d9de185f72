"""Alert rules in cofe's one rule language; the spelling before it reads the same, warned."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
import tomli_w

from cofe._errors import InputError
from cofe.cli import main
from cofe.monitor import DEFAULT_RULES, AlertRule, load_rules, rules_toml
from cofe.rules import RuleSpellingWarning


def _old_toml(rules: list[AlertRule]) -> str:
    """Rules as cofe wrote them before the one language: the model's own fields."""
    required = ("name", "source", "stage", "measure")
    tables = [
        {k: getattr(r, k) for k in required}
        | {k: v for k, v in r.model_dump(exclude_defaults=True).items() if v is not None}
        for r in rules
    ]
    return tomli_w.dumps({"rule": tables})


def _load(tmp_path: Path, text: str) -> list[AlertRule]:
    path = tmp_path / "rules.toml"
    path.write_text(text, encoding="utf-8")
    return load_rules(path)


def test_the_default_rules_read_the_same_in_both_spellings(tmp_path: Path):
    new = rules_toml(DEFAULT_RULES)
    assert "target = " in new and "measure = " not in new and "above" not in new
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new spelling reads without a warning
        assert _load(tmp_path, new) == list(DEFAULT_RULES)
    with pytest.warns(RuleSpellingWarning) as caught:
        assert _load(tmp_path, _old_toml(list(DEFAULT_RULES))) == list(DEFAULT_RULES)
    [warning] = caught  # one per file
    message = str(warning.message)
    assert message.startswith(f"{tmp_path / 'rules.toml'}:5: ")  # rule 1's measure line
    assert f"{len(DEFAULT_RULES)} rule(s) here" in message and "\n" not in message
    assert 'target = "lost@parse", max_rise = 0.1' in message
    assert warning.filename == __file__


@pytest.mark.parametrize(
    ("new", "old"),
    [
        (  # a traffic signal, either way, relative to the baseline
            'target = "retrieval/PoolSize"\nmax_change = 0.2\nrelative = true\n',
            'source = "traffic"\nstage = "retrieval"\nmeasure = "PoolSize"\n'
            'direction = "either"\nmin_effect = 0.2\nrelative = true\n',
        ),
        (  # a threshold: traffic that stopped
            'target = "all/Traces"\nmin = 1\ncooldown = "6h"\n',
            'source = "traffic"\nstage = "all"\nmeasure = "Traces"\nkind = "threshold"\n'
            'below = 1\ncooldown = "6h"\n',
        ),
        (  # a band
            'target = "generation/RefusalRate"\nmin = 0.01\nmax = 0.3\nseverity = "page"\n',
            'source = "traffic"\nstage = "generation"\nmeasure = "RefusalRate"\n'
            'kind = "threshold"\nbelow = 0.01\nabove = 0.3\nseverity = "page"\n',
        ),
        (  # a canary verdict share, up
            'target = "cut_by_rerank@reranking"\nmax_rise = 0.05\nalpha = 0.01\n',
            'source = "canary"\nstage = "reranking"\nmeasure = "cut_by_rerank@reranking"\n'
            "min_effect = 0.05\nalpha = 0.01\n",
        ),
        (  # a canary results column, down; its stage read from the chain
            'target = "corpus/EntityAnchoring"\nmax_drop = 0.03\n',
            'source = "canary"\nstage = "chunking"\nmeasure = "corpus/EntityAnchoring"\n'
            'direction = "down"\nmin_effect = 0.03\n',
        ),
        (  # the context's stage depends on the run: said
            'target = "context/KeywordRecall@4"\nstage = "reranking"\nmax_drop = 0.05\n',
            'source = "canary"\nstage = "reranking"\nmeasure = "context/KeywordRecall@4"\n'
            'direction = "down"\nmin_effect = 0.05\n',
        ),
    ],
)
def test_a_rule_in_the_new_spelling_is_the_rule_of_the_old(tmp_path: Path, new: str, old: str):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        [read] = _load(tmp_path, f'[[rule]]\nname = "r"\n{new}')
    with pytest.warns(RuleSpellingWarning):
        [before] = _load(tmp_path, f'[[rule]]\nname = "r"\n{old}')
    assert read == before


def test_a_rule_needs_no_name_or_source_when_its_target_says_them(tmp_path: Path):
    [rule] = _load(tmp_path, '[[rule]]\ntarget = "lost@retrieval"\nmax_rise = 0.1\n')
    assert (rule.name, rule.source, rule.stage, rule.measure) == (
        "canary lost@retrieval",
        "canary",
        "retrieval",
        "lost@retrieval",
    )


@pytest.mark.parametrize(
    ("table", "where", "message"),
    [
        (
            'target = "retrieval/PoolSze"\nmax = 5\n',
            ":3: rule 1 ('r').target",
            "no label-free signal retrieval/PoolSze",
        ),
        (
            'target = "not_retrieved"\nmax_rise = 0.1\n',
            ":3: rule 1 ('r').target",
            "a canary share names its stage: not_retrieved@STAGE",
        ),
        (
            'source = "traffic"\ntarget = "lost@retrieval"\nmax_rise = 0.1\n',
            ":4: rule 1 ('r').target",
            "a traffic rule watches a signal",
        ),
        (
            'source = "canary"\ntarget = "retrieval/PoolSize"\nmax = 5\n',
            ":4: rule 1 ('r').target",
            "a canary rule watches a verdict share",
        ),
        (
            'target = "context/KeywordRecall@4"\nmax_drop = 0.1\n',
            ":1: rule 1 ('r').stage",  # a key missing: its table's line
            "the context step's stage depends on the run",
        ),
        (
            'target = "lost@retreival"\nmax_rise = 0.1\n',
            ":3: rule 1 ('r').target",
            "unknown stage 'retreival'",
        ),
        (
            'target = "lost@retrieval"\nmax_rise = 0.1\nabove = 0.5\n',
            ":5: rule 1 ('r').above",
            "unknown field",
        ),
        (
            'target = "lost@retrieval"\nmax = 0.5\nmax_rise = 0.1\n',
            ":5: rule 1 ('r').max_rise",
            "a rule compares one way",
        ),
        ('target = "lost@retrieval"\nmax_rise = -0.1\n', ":4: rule 1 ('r').max_rise", "at least 0"),
        ('target = "lost@retrieval"\nmax = nan\n', ":4: rule 1 ('r').max", "finite number"),
        (
            'target = "lost@retrieval"\nmax_rise = 0.1\ncooldown = "soon"\n',
            ":5: rule 1 ('r').cooldown",
            "not a duration",
        ),
        (
            'target = "lost@retrieval"\nmax_rise = 0.1\nbaseline = 0\n',
            ":5: rule 1 ('r').baseline",
            "greater than or equal to 1",
        ),
        (
            'target = "lost@retrieval"\nmax_rise = 0.1\n[[rule]]\nname = "r"\n'
            'target = "lost@parse"\nmax_rise = 0.1\n',
            ":6: rule 2 ('r').name",
            "rule names must differ",
        ),
    ],
)
def test_a_bad_rule_is_one_line_naming_the_file_the_line_and_the_field(
    tmp_path: Path, table: str, where: str, message: str
):
    with pytest.raises(InputError) as raised:
        _load(tmp_path, f'[[rule]]\nname = "r"\n{table}')
    shown = str(raised.value)
    assert shown.startswith(f"{tmp_path / 'rules.toml'}{where}: ") and message in shown, shown
    assert "\n" not in shown


def test_the_cli_says_an_old_spelling_in_one_line_and_runs_the_rules(tmp_path: Path, capsys):
    path = tmp_path / "rules.toml"
    path.write_text(_old_toml([DEFAULT_RULES[0]]), encoding="utf-8")
    code = main(["monitor", "alerts", "--store", str(tmp_path / "m.db"), "--rules", str(path)])
    err = capsys.readouterr().err
    assert code == 0, err
    [line] = [line for line in err.splitlines() if "old spelling" in line]
    assert line.startswith(f"cofe: warning: {path}:5: ") and 'target = "lost@parse"' in line


def test_the_old_name_of_the_alert_rule_still_resolves():
    import cofe.monitor

    with pytest.warns(DeprecationWarning, match="cofe.monitor.Rule is now cofe.monitor.AlertRule"):
        assert cofe.monitor.Rule is AlertRule
