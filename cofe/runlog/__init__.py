"""The run log: the single record of what a pipeline did, read by scoring and reports.

The index of a run's records (``RecordIndex`` and its helpers, numpy-backed) loads on
first use: reading a manifest or writing a run does not load numpy.
"""

from typing import TYPE_CHECKING

from cofe._lazy import lazy_names
from cofe.runlog._compat import staged, stages_from, top_k_from
from cofe.runlog._lock import LOCK, run_folder_lock
from cofe.runlog._models import (
    CHUNK,
    DERIVED_KINDS,
    QUERY_OUTPUTS,
    RUNLOG_SCHEMA_VERSION,
    Chunk,
    Manifest,
    ParsedDocument,
    QueryOutputs,
    Ranked,
    RankedChunk,
    SampleRecord,
    Stage,
    StageError,
)
from cofe.runlog._outputs import (
    MORE_FIELDS,
    ChunkRef,
    CompactRecord,
    Outputs,
    RecordFacts,
    Refs,
    compact,
    compact_record,
    errors_by_stage,
    gc_paused,
    more_fields,
    read_compact,
    reorders,
    stream_records,
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

if TYPE_CHECKING:
    from cofe.runlog._index import HeldRecords, RecordIndex, SeenIds, id_hash

_LAZY = ("HeldRecords", "RecordIndex", "SeenIds", "id_hash")

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
    "MORE_FIELDS",
    "QUERY_OUTPUTS",
    "RUNLOG_SCHEMA_VERSION",
    "SAMPLES",
    "Chunk",
    "ChunkRef",
    "CompactRecord",
    "HeldRecords",
    "Manifest",
    "Outputs",
    "ParsedDocument",
    "QueryOutputs",
    "Ranked",
    "RankedChunk",
    "RecordFacts",
    "RecordIndex",
    "Refs",
    "RunLog",
    "RunWriter",
    "SampleRecord",
    "SeenIds",
    "Stage",
    "StageError",
    "compact",
    "compact_record",
    "errors_by_stage",
    "gc_paused",
    "id_hash",
    "more_fields",
    "read_compact",
    "read_corpus",
    "read_keyed",
    "read_manifest",
    "read_run",
    "reorders",
    "run_folder_lock",
    "runlog_json_schema",
    "staged",
    "stages_from",
    "stream_records",
    "top_k_from",
]

__getattr__, __dir__ = lazy_names(__name__, dict.fromkeys(_LAZY, "cofe.runlog._index"), __all__)
