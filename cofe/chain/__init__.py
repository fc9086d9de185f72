"""The RAG chain cofe judges: its stages and the steps where information is checked.

One declaration per stage and per step (``STAGE_SPECS``, ``STEP_SPECS``; ``STAGES`` and
``STEPS`` are their old names); the scorer,
``diagnose``, the results, the report, ``cofe check`` and the monitor read them.
"""

from cofe.chain._declared import (
    PASSES,
    POINT_COLUMNS,
    STAGE_ORDER,
    STAGE_SPECS,
    STAGES,
    STEP_ORDER,
    STEP_SPECS,
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
    "STAGE_SPECS",
    "STEPS",
    "STEP_ORDER",
    "STEP_SPECS",
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
