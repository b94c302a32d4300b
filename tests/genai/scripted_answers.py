"""LLM graphs whose answer is fixed by position (examples/llm/build_llm_folder.py --script-at)
after the prompt of QUESTION: a hermes3 tool call, or a qwen3 reasoning block and an answer,
for the tests of OVMS's output parsers on chat and on the Responses API."""

from __future__ import annotations

import json
from pathlib import Path

import jinja2
from llm_graphs import graph_text, write_llm_folder

QUESTION = [{"role": "user", "content": "What is the weather in Paris?"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather of a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    }
]
CALL_ARGUMENTS = {"city": "Paris", "days": 2}
TOOL_SCRIPT = (
    "Let me check.<tool_call>\n"
    + json.dumps({"name": "get_weather", "arguments": CALL_ARGUMENTS})
    + "\n</tool_call>"
)
THINKING, ANSWER = "The user asks about the weather in France.", "It is sunny in Paris."
THINK_SCRIPT = f"<think>{THINKING}</think>{ANSWER}"
# A template that renders as the folder's own and names hermes3's tags, as a Hermes or Qwen
# template does: OVMS picks the hermes3 parser from it.
HERMES_MARKERS = "{#- tools go in <tool_call></tool_call> tags -#}"


def prompt_length(messages: list[dict]) -> int:
    from build_llm_folder import CHAT_TEMPLATE, build_tokenizer

    tokenizer = build_tokenizer(512)
    text = jinja2.Template(CHAT_TEMPLATE).render(messages=messages, add_generation_prompt=True)
    return len(tokenizer.encode(text, add_special_tokens=False))


def scripted_graph(folder: Path, script: str, template: str | None = None, **options) -> Path:
    write_llm_folder(folder, script=script, script_at=prompt_length(QUESTION))
    if template is not None:
        source = (folder / "chat_template.jinja").read_text()
        (folder / "chat_template.jinja").write_text(template + source)
    (folder / "graph.pbtxt").write_text(graph_text(**options))
    return folder


# The same call as each other parser's model family writes it.
FAMILY_SCRIPTS = {
    "mistral": "[TOOL_CALLS]" + json.dumps([{"name": "get_weather", "arguments": CALL_ARGUMENTS}]),
    "phi4": "functools" + json.dumps([{"name": "get_weather", "arguments": CALL_ARGUMENTS}]),
    "llama3": "<|python_tag|>" + json.dumps({"name": "get_weather", "parameters": CALL_ARGUMENTS}),
    "qwen3coder": (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "<parameter=days>\n2\n</parameter>\n</function>\n</tool_call>"
    ),
}
