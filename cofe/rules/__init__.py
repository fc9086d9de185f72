"""One rule language for thresholds: what ``cofe check`` gates on and what the monitor alerts on.

A rules file is ``[[rule]]`` tables (``docs/rules.md``): a ``target`` -- a results column
``step/Measure@K``, a share of a verdict or a stage, or a traffic signal ``stage/Signal`` --,
a comparison (``min``, ``max``, ``max_drop``, ``max_rise``, ``max_change``) and a
``severity``. Each consumer names what it runs as a ``Dialect``; the parsing, the one-line
errors naming file, line and field, and the JSON Schema live here once. Old spellings still
read, with a ``RuleSpellingWarning`` (a ``DeprecationWarning``) that says the new one.
"""

from cofe.rules._language import (
    DOC,
    Bound,
    Dialect,
    Rule,
    RuleFile,
    RuleSpellingWarning,
    number,
    old_spellings_said,
    parse_rule,
    parse_rules,
    read_rule_file,
    rule_schema,
    spell,
)
from cofe.rules._target import (
    ANSWERED,
    RULE_STEPS,
    Target,
    close_matches,
    higher_is_better,
    parse_column,
    parse_share,
    parse_target,
    share_names,
    suggest,
)

__all__ = [
    "ANSWERED",
    "DOC",
    "RULE_STEPS",
    "Bound",
    "Dialect",
    "Rule",
    "RuleFile",
    "RuleSpellingWarning",
    "Target",
    "close_matches",
    "higher_is_better",
    "number",
    "old_spellings_said",
    "parse_column",
    "parse_rule",
    "parse_rules",
    "parse_share",
    "parse_target",
    "read_rule_file",
    "rule_schema",
    "share_names",
    "spell",
    "suggest",
]
