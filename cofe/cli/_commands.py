"""The sub-commands of ``cofe``: each one's name, the module under ``cofe.cli`` that defines
and runs it, and its line in ``cofe --help``.

The list lives here, apart from the modules, so that ``cofe score`` imports the score
module only: the others (the judge's with ``socket``, the local LLM's with ``subprocess``,
the monitor's 600 lines) are listed by name and help line without being imported. Each
module reads its help line from here, so the line has one home.
"""

from __future__ import annotations

from typing import NamedTuple


class Command(NamedTuple):
    name: str
    module: str  # under cofe.cli
    help: str


# in the order `cofe --help` lists them
COMMANDS = (
    Command("demo", "_demo", "run the default pipeline on shipped data and compare"),
    Command("run", "_run", "run a pipeline over an eval set and score it"),
    Command("judge", "_judge", "label each answer's claims with an LLM judge"),
    Command("score", "_score", "score a recorded run stage by stage"),
    Command(
        "compare",
        "_compare",
        "compare runs of one eval set: means with CIs, paired tests, verdict transitions",
    ),
    Command(
        "check",
        "_check",
        "the CI gate: fail (exit 1) when a stage's measure drops or misses a threshold",
    ),
    Command("sweep", "_sweep", "run a grid of configurations and compare them"),
    Command(
        "plan",
        "_plan",
        "sample-size planning: the questions and documents a drop needs, per measure",
    ),
    Command(
        "replay",
        "_replay",
        "replay failed samples with one stage replaced by an oracle: what a fix is worth",
    ),
    Command("report", "_report", "write a self-contained HTML report of one or more runs"),
    Command("import", "_import", "import an eval set (cofe-rag, squad, jsonl)"),
    Command("parse", "_parse", "print a document's parsed text (to write keywords from)"),
    Command("annotate", "_annotate", "generate a checked eval set from documents with an LLM"),
    Command("review", "_annotate", "export an eval set for people / import their decisions"),
    Command("schema", "_schema", "print the JSON Schema of every run-log file"),
    Command("monitor", "_monitor", "monitor each stage of a live pipeline"),
    Command("llm", "_llm", "a local LLM for cofe judge and cofe annotate"),
)

HELP = {command.name: command.help for command in COMMANDS}

# Commands that validate only cofe's own files (run logs, eval sets, scores) and run no
# code of the user's: they start with pydantic's plugins off (``cli.main``), as pydantic
# would otherwise read the entry points of every installed distribution when cofe's first
# model is built (~0.05 s with importing importlib.metadata, a tenth of a small scoring)
# to find plugins that would only observe cofe's internal records. `run`, `sweep`,
# `replay` and `demo` import or call a pipeline, `judge` and `annotate` an LLM client, and
# `monitor` serves a user's traffic: a plugin there may be what the user installed it for.
OWN_MODELS_ONLY = frozenset({"score", "compare", "check", "report", "plan", "schema"})
