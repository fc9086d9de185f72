"""Test helpers shipped with cofe: a real loopback HTTP server speaking the OpenAI protocol."""

from cofe.testing._openai_server import Fault, ScriptedOpenAI

__all__ = ["Fault", "ScriptedOpenAI"]
