"""How a run is scored: ``ScoreConfig`` and ``CoarseScope``.

Below the scorer (``cofe.stages``) and the results folder (``cofe.results``), which both
read it: the folder records the settings it was scored with.
"""

from cofe.config._score import CoarseScope, ScoreConfig

__all__ = ["CoarseScope", "ScoreConfig"]
