"""A ``/v3`` request naming a graph that has no generative node (no HttpLLMCalculator,
EmbeddingsCalculatorOV or RerankCalculatorOV): OVMS answers 412, and the graph still serves
KServe."""

from __future__ import annotations

import json
from pathlib import Path

from rest_process import rest_served

GRAPH = """
input_stream: "in"
output_stream: "out"
node {
  calculator: "PassThroughCalculator"
  input_stream: "in"
  output_stream: "out"
}
"""


def test_a_v3_request_to_a_plain_graph_is_a_failed_precondition(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "graph.pbtxt").write_text(GRAPH)
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "model_config_list": [],
                "mediapipe_config_list": [{"name": "plain", "base_path": str(folder)}],
            }
        )
    )
    with rest_served(["--config_path", str(config)], tmp_path) as server:
        body = json.dumps({"model": "plain", "messages": [{"role": "user", "content": "hi"}]})
        headers = {"Content-Type": "application/json"}
        for path in ("/v3/chat/completions", "/v3/embeddings", "/v3/tokenize"):
            reply = server.request("POST", path, body, headers)
            assert reply.status == 412, (path, reply.body)
            assert "plain does not serve the OpenAI-compatible API" in reply.error
        assert server.request("GET", "/v2/models/plain/ready").status == 200
