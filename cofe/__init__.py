"""cofe: tells a RAG team which stage of their pipeline is failing.

Coarse and fine keywords (CoFE-RAG, Liu et al. 2024) judge every stage of a
recorded run -- parse, chunking, retrieval, reranking, generation -- and each
bad case is traced to the first stage that lost the information.
"""

from typing import TYPE_CHECKING

from cofe._lazy import lazy_names
from cofe._version import __version__

if TYPE_CHECKING:  # the names below, for type checkers; at run time each loads on first use
    from cofe._errors import (
        CofeError,
        ConfigurationError,
        EndpointError,
        InputError,
        InputProblem,
    )
    from cofe.config import CoarseScope, ScoreConfig
    from cofe.diagnose import Verdict
    from cofe.evalset import (
        AnyOf,
        EvalSample,
        EvalSet,
        QueryType,
        SourceRef,
        read_evalset,
        write_evalset,
    )
    from cofe.matching import MatchMode
    from cofe.results import ScoreResult, read_scores
    from cofe.runlog import (
        Chunk,
        Manifest,
        ParsedDocument,
        RankedChunk,
        RunLog,
        RunWriter,
        SampleRecord,
        Stage,
        StageError,
        read_run,
    )
    from cofe.runner import RunReport, run_pipeline
    from cofe.stages import score_run

# Where each public name lives: ``import cofe`` stays cheap (no pandas, no pydantic models)
# until a name is used -- a pytest plugin or a command's --help pays for nothing it does
# not touch.
_HOMES = {
    **dict.fromkeys(
        ("CofeError", "ConfigurationError", "EndpointError", "InputError", "InputProblem"),
        "cofe._errors",
    ),
    "Verdict": "cofe.diagnose",
    **dict.fromkeys(
        (
            "AnyOf",
            "EvalSample",
            "EvalSet",
            "QueryType",
            "SourceRef",
            "read_evalset",
            "write_evalset",
        ),
        "cofe.evalset",
    ),
    "MatchMode": "cofe.matching",
    "ScoreResult": "cofe.results",
    "read_scores": "cofe.results",
    **dict.fromkeys(
        (
            "Chunk",
            "Manifest",
            "ParsedDocument",
            "RankedChunk",
            "RunLog",
            "RunWriter",
            "SampleRecord",
            "Stage",
            "StageError",
            "read_run",
        ),
        "cofe.runlog",
    ),
    "RunReport": "cofe.runner",
    "run_pipeline": "cofe.runner",
    **dict.fromkeys(("CoarseScope", "ScoreConfig"), "cofe.config"),
    "score_run": "cofe.stages",
}


__all__ = [
    "AnyOf",
    "Chunk",
    "CoarseScope",
    "CofeError",
    "ConfigurationError",
    "EndpointError",
    "EvalSample",
    "EvalSet",
    "InputError",
    "InputProblem",
    "Manifest",
    "MatchMode",
    "ParsedDocument",
    "QueryType",
    "RankedChunk",
    "RunLog",
    "RunReport",
    "RunWriter",
    "SampleRecord",
    "ScoreConfig",
    "ScoreResult",
    "SourceRef",
    "Stage",
    "StageError",
    "Verdict",
    "__version__",
    "read_evalset",
    "read_run",
    "read_scores",
    "run_pipeline",
    "score_run",
    "write_evalset",
]

__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
