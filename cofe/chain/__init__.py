"""The RAG chain cofe judges: its stages and the steps where information is checked.

One declaration per stage and per step (``STAGES``, ``STEPS``); the scorer,
``diagnose``, the results, the report, ``cofe check`` and the monitor read them.
"""

from cofe.chain._declared import (
    PASSES,
    POINT_COLUMNS,
    STAGE_ORDER,
    STAGES,
    STEP_ORDER,
    STEP_STAGE,
    STEPS,
    PointKind,
    Reads,
    Stage,
    StageSpec,
    Step,
    StepSpec,
    stage_spec,
    step_spec,
)

__all__ = [
    "PASSES",
    "POINT_COLUMNS",
    "STAGES",
    "STAGE_ORDER",
    "STEPS",
    "STEP_ORDER",
    "STEP_STAGE",
    "PointKind",
    "Reads",
    "Stage",
    "StageSpec",
    "Step",
    "StepSpec",
    "stage_spec",
    "step_spec",
]
