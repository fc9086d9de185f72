"""Test helpers shipped with cofe: a real loopback HTTP server speaking the OpenAI protocol;
spans as an OTLP request and a real collector process (monitoring)."""

from cofe.testing._openai_server import Fault, ScriptedOpenAI
from cofe.testing._otlp import free_port, otlp_request, start_collector, trickle

__all__ = ["Fault", "ScriptedOpenAI", "free_port", "otlp_request", "start_collector", "trickle"]
