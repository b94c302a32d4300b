"""LLM servables as OVMS users lay them out: a model folder (built by
examples/llm/build_llm_folder.py, or examples/vlm/build_vlm_folder.py for a vision-language one)
with OVMS's graph.pbtxt for HttpLLMCalculator beside it."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "llm"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "vlm"))

from build_llm_folder import write_llm_folder
from build_vlm_folder import write_vlm_folder as write_vlm_folder  # for the tests

# The scripted model's answer, whatever the prompt: distinct tokens, a character ("Ç") split
# across two byte tokens, and its end-of-sequence token after the "!".
SCRIPT = "Paris is the capital. Ça!"

# OVMS's documented LLM graph (docs/llm/reference.md), with the options in {options}.
GRAPH = """\
input_stream: "HTTP_REQUEST_PAYLOAD:input"
output_stream: "HTTP_RESPONSE_PAYLOAD:output"

node: {{
  name: "{node}"
  calculator: "HttpLLMCalculator"
  input_stream: "LOOPBACK:loopback"
  input_stream: "HTTP_REQUEST_PAYLOAD:input"
  input_side_packet: "LLM_NODE_RESOURCES:llm"
  output_stream: "LOOPBACK:loopback"
  output_stream: "HTTP_RESPONSE_PAYLOAD:output"
  input_stream_info: {{
    tag_index: 'LOOPBACK:0',
    back_edge: true
  }}
  node_options: {{
    [type.googleapis.com / mediapipe.LLMCalculatorOptions]: {{
{options}
    }}
  }}
  input_stream_handler {{
    input_stream_handler: "SyncSetInputStreamHandler",
    options {{
      [mediapipe.SyncSetInputStreamHandlerOptions.ext] {{
        sync_set {{
          tag_index: "LOOPBACK:0"
        }}
      }}
    }}
  }}
}}
"""


# LLMCalculatorOptions' enum fields, written bare; other strings are quoted.
_ENUMS = frozenset({"pipeline_type", "chat_template_mode"})


def graph_text(models_path: str = "./", node: str = "LLMExecutor", **options: object) -> str:
    fields = {"models_path": models_path, "cache_size": 1, **options}
    lines = []
    for key, value in fields.items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, str) and key not in _ENUMS:
            text = '"' + value.replace('"', '\\"') + '"'
        else:
            text = str(value)
        lines.append(f"      {key}: {text}")
    return GRAPH.format(node=node, options="\n".join(lines))


def llm_servable(folder: Path, script: str | None = None, **options: object) -> Path:
    """A model folder with its graph.pbtxt beside it (models_path "./")."""
    write_llm_folder(folder, script=script)
    (folder / "graph.pbtxt").write_text(graph_text(**options))
    return folder
