"""The RAG chain cofe judges: its stages and the steps where information is checked.

One declaration per stage and per step (``STAGES``, ``STEPS``); the scorer,
``diagnose``, the results, the report, ``cofe check`` and the monitor read them.
"""

from cofe.chain._declared import (
    PASSES,
    STAGE_ORDER,
    STAGES,
    STEP_ORDER,
    STEP_STAGE,
    STEPS,
    Stage,
    StageSpec,
    Step,
    StepSpec,
    stage_spec,
    step_spec,
)

__all__ = [
    "PASSES",
    "STAGES",
    "STAGE_ORDER",
    "STEPS",
    "STEP_ORDER",
    "STEP_STAGE",
    "Stage",
    "StageSpec",
    "Step",
    "StepSpec",
    "stage_spec",
    "step_spec",
]
