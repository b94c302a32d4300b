"""``--api_key_file`` guards the /v3 generation endpoints with ``Authorization: Bearer <key>``,
as OVMS does (and OVMS's 500 for a missing or wrong key); listing models is not guarded."""

from __future__ import annotations

import json
from pathlib import Path

import openai
import pytest
from llm_graphs import SCRIPT
from rest_process import rest_served

CHAT = {"model": "scripted", "messages": [{"role": "user", "content": "hi"}]}


def test_the_api_key_is_required(llm_config: Path, tmp_path: Path) -> None:
    key_file = tmp_path / "key.txt"
    key_file.write_text("s3cret  \nsecond line\n")
    args = ["--config_path", str(llm_config), "--api_key_file", str(key_file)]
    with rest_served(args, tmp_path) as server:
        body = json.dumps(CHAT)
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret"}):
            reply = server.request(
                "POST",
                "/v3/chat/completions",
                body,
                {"Content-Type": "application/json", **headers},
            )
            assert reply.status == 500
            assert reply.error == "Unauthorized request due to invalid or missing api-key"
        assert server.request("GET", "/v3/models").status == 200
        good = openai.OpenAI(base_url=f"http://{server.url}/v3", api_key="s3cret", max_retries=0)
        answer = good.chat.completions.create(**CHAT)
        assert answer.choices[0].message.content == SCRIPT
        bad = openai.OpenAI(base_url=f"http://{server.url}/v3", api_key="nope", max_retries=0)
        with pytest.raises(openai.InternalServerError):
            bad.chat.completions.create(**CHAT)


def test_cors_flags_set_the_headers_of_every_answer(llm_config: Path, tmp_path: Path) -> None:
    args = [
        "--config_path", str(llm_config), "--allowed_origins", "https://chat.example",
        "--allowed_methods", "GET,POST", "--allowed_headers", "Authorization,Content-Type",
        "--allow_credentials",
    ]  # fmt: skip
    with rest_served(args, tmp_path) as server:
        for reply in (
            server.request("OPTIONS", "/v3/chat/completions"),
            server.request("GET", "/v3/models"),
            server.request(
                "POST",
                "/v3/chat/completions",
                json.dumps(CHAT),
                {"Content-Type": "application/json"},
            ),
            server.request("GET", "/v2/models/nothing/ready"),
        ):
            assert reply.headers["access-control-allow-origin"] == "https://chat.example"
            assert reply.headers["access-control-allow-methods"] == "GET,POST"
            assert reply.headers["access-control-allow-headers"] == "Authorization,Content-Type"
            assert reply.headers["access-control-allow-credentials"] == "true"
