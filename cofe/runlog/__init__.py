"""The run log: the single record of what a pipeline did, read by scoring and reports."""

from cofe.runlog._compat import staged, stages_from, top_k_from
from cofe.runlog._lock import LOCK, run_folder_lock
from cofe.runlog._models import (
    CHUNK,
    DERIVED_KINDS,
    RUNLOG_SCHEMA_VERSION,
    Chunk,
    Manifest,
    ParsedDocument,
    RankedChunk,
    SampleRecord,
    Stage,
    StageError,
)
from cofe.runlog._schema import runlog_json_schema
from cofe.runlog._store import (
    CHUNKS,
    DOCUMENTS,
    EVALSET,
    JUDGE_CONTROLS,
    JUDGEMENTS,
    MANIFEST,
    SAMPLES,
    RunLog,
    RunWriter,
    read_corpus,
    read_keyed,
    read_manifest,
    read_run,
)

__all__ = [
    "CHUNK",
    "CHUNKS",
    "DERIVED_KINDS",
    "DOCUMENTS",
    "EVALSET",
    "JUDGEMENTS",
    "JUDGE_CONTROLS",
    "LOCK",
    "MANIFEST",
    "RUNLOG_SCHEMA_VERSION",
    "SAMPLES",
    "Chunk",
    "Manifest",
    "ParsedDocument",
    "RankedChunk",
    "RunLog",
    "RunWriter",
    "SampleRecord",
    "Stage",
    "StageError",
    "read_corpus",
    "read_keyed",
    "read_manifest",
    "read_run",
    "run_folder_lock",
    "runlog_json_schema",
    "staged",
    "stages_from",
    "top_k_from",
]
