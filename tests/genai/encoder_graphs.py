"""Embeddings and rerank servables for the tests: tiny BERT-like folders built by
examples/rag/build_encoder_folders.py (about two seconds), and OVMS's graphs for them, written
beside the folders the way an OVMS user lays them out."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "rag"))

from build_encoder_folders import write_encoder_folders  # noqa: E402

EMBEDDINGS_GRAPH = """\
input_stream: "REQUEST_PAYLOAD:input"
output_stream: "RESPONSE_PAYLOAD:output"
node {{
  name: "EmbeddingsExecutor"
  input_side_packet: "EMBEDDINGS_NODE_RESOURCES:embeddings_servable"
  calculator: "EmbeddingsCalculatorOV"
  input_stream: "REQUEST_PAYLOAD:input"
  output_stream: "RESPONSE_PAYLOAD:output"
  node_options: {{
    [type.googleapis.com / mediapipe.EmbeddingsCalculatorOVOptions]: {{
      models_path: "{models_path}"{options}
    }}
  }}
}}
"""

RERANK_GRAPH = """\
input_stream: "REQUEST_PAYLOAD:input"
output_stream: "RESPONSE_PAYLOAD:output"
node {{
  name: "RerankExecutor"
  input_side_packet: "RERANK_NODE_RESOURCES:rerank_servable"
  calculator: "RerankCalculatorOV"
  input_stream: "REQUEST_PAYLOAD:input"
  output_stream: "RESPONSE_PAYLOAD:output"
  node_options: {{
    [type.googleapis.com / mediapipe.RerankCalculatorOVOptions]: {{
      models_path: "{models_path}"{options}
    }}
  }}
}}
"""


def graph_folder(folder: Path, template: str, models_path: str, **options) -> Path:
    """``folder`` holding a graph.pbtxt from ``template`` with ``options`` (name: value as
    written in the graph, e.g. pooling="MEAN", truncate="true")."""
    folder.mkdir(parents=True, exist_ok=True)
    extra = "".join(f",\n      {name}: {value}" for name, value in options.items())
    (folder / "graph.pbtxt").write_text(template.format(models_path=models_path, options=extra))
    return folder


def encoder_folders(root: Path) -> dict[str, Path]:
    return write_encoder_folders(root, hidden=32, layers=2, heads=2, vocab=300)
