"""The one-command demo: shipped SQuAD + CMRC data through the default pipeline at two chunk sizes."""

from cofe.demo._demo import DemoConfig, build_demo_inputs, run_demo

__all__ = ["DemoConfig", "build_demo_inputs", "run_demo"]
