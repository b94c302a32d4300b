"""The official openai client for the tests, pointed at a test server's /v3. Each client made
in a test is closed when the test ends (conftest.py), so that no keep-alive socket is left for
the garbage collector to report as unclosed in a later test."""

from __future__ import annotations

import openai
from rest_process import RestProcess

MADE: list[openai.OpenAI] = []


def client(server: RestProcess) -> openai.OpenAI:
    made = openai.OpenAI(base_url=f"http://{server.url}/v3", api_key="unused", max_retries=0)
    MADE.append(made)
    return made


def close_all() -> None:
    while MADE:
        MADE.pop().close()
