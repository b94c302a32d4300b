"""Build the agent example's model: the small random-weight LLM of examples/llm, whose first
answer to the example's question is scripted to be a hermes3 tool call, and OVMS's graph for it
with the hermes3 tool parser.

    python examples/agent/build_agent_model.py examples/agent/models/agent

The answer is placed by position after the question's prompt (build_llm_folder.py
--script-at), so the model calls the tool on the first turn; once the tool's result is in the
conversation the prompt is longer and the model writes random words, which end the loop as its
"final answer". A real model (exported with optimum-cli, e.g. a Qwen or Hermes model) makes real
decisions through the same graph and client.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import jinja2

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "llm"))

from build_llm_folder import CHAT_TEMPLATE, build_tokenizer, write_llm_folder  # noqa: E402

QUESTION = "What is the weather in Paris?"
CALL = {"name": "get_weather", "arguments": {"city": "Paris"}}
GRAPH_TEMPLATE = (HERE.parent / "llm" / "graph.pbtxt").read_text()


def prompt_tokens(question: str) -> int:
    """The question's prompt length in tokens, rendered as the server renders it."""
    messages = [{"role": "user", "content": question}]
    text = jinja2.Template(CHAT_TEMPLATE).render(messages=messages, add_generation_prompt=True)
    return len(build_tokenizer(512).encode(text, add_special_tokens=False))


def write_agent_model(folder: Path) -> Path:
    script = f"<tool_call>\n{json.dumps(CALL)}\n</tool_call>"
    write_llm_folder(folder, script=script, script_at=prompt_tokens(QUESTION))
    graph = GRAPH_TEMPLATE.replace('models_path: "models/tiny",', 'models_path: "./",')
    graph = graph.replace(
        "max_tokens_limit: 1024", 'max_tokens_limit: 1024,\n      tool_parser: "hermes3"'
    )
    (folder / "graph.pbtxt").write_text(graph)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("folder", type=Path)
    print(f"wrote {write_agent_model(parser.parse_args().folder)}")


if __name__ == "__main__":
    main()
