"""cofe: tells a RAG team which stage of their pipeline is failing.

Coarse and fine keywords (CoFE-RAG, Liu et al. 2024) judge every stage of a
recorded run -- parse, chunking, retrieval, reranking, generation -- and each
bad case is traced to the first stage that lost the information.
"""

from cofe._errors import InputError, InputProblem
from cofe._version import __version__
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
from cofe.stages import CoarseScope, ScoreConfig, score_run

__all__ = [
    "AnyOf",
    "Chunk",
    "CoarseScope",
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
