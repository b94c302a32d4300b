"""Generative AI serving: OVMS's OpenAI-compatible ``/v3`` (and ``/v1``) endpoints.

The REST frontend routes a ``/v3`` request here by the JSON ``model`` field; an
``HttpLLMCalculator`` graph binds that name to an LLM engine (engine_client.py), which runs
openvino-genai in a process of its own (engine_process.py) so that its forward passes, which hold
the GIL, never stall the server.
"""
