"""Generative AI serving: OVMS's OpenAI-compatible ``/v3`` (and ``/v1``) endpoints.

The REST frontend (ovmsx/frontend/v3_api.py) routes a ``/v3`` request by its JSON ``model``
field to a graph whose generative node serves it. The rooms (docs/architecture.md):

- ``openai/``: the protocol every task shares (request checks, errors, Responses API);
- ``engine/``: the engine process running an openvino-genai pipeline away from the server, and
  its client;
- one folder per task: ``text_generation/`` (LLMs), ``encoders/`` (embeddings, rerank);
- here: what every task reads alike (model folders and ``--task`` graphs, node options, the
  ``/v3`` node's checks, openvino-genai's error texts), the output parsers, and the calculators'
  registration (calculators.py).
"""
