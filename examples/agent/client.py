"""A tool-calling loop with the official openai client: the model may call ``get_weather``;
each call is run here and its result sent back, until the model answers in text.

    python examples/agent/client.py --url http://127.0.0.1:8000/v3 "What is the weather in Paris?"
"""

from __future__ import annotations

import argparse
import json

import openai

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Today's weather in a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]


def get_weather(city: str) -> dict:
    """The tool: a real agent would ask a weather service."""
    return {"city": city, "sky": "sunny", "celsius": 21}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("question", nargs="?", default="What is the weather in Paris?")
    parser.add_argument("--url", default="http://127.0.0.1:8000/v3")
    parser.add_argument("--model", default="agent")
    parser.add_argument("--turns", type=int, default=4)
    args = parser.parse_args()
    client = openai.OpenAI(base_url=args.url, api_key="unused")
    messages: list[dict] = [{"role": "user", "content": args.question}]
    for _ in range(args.turns):
        answer = client.chat.completions.create(
            model=args.model, messages=messages, tools=TOOLS, max_tokens=200
        )
        message = answer.choices[0].message
        if not message.tool_calls:
            print("answer:", message.content)
            return
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            arguments = json.loads(call.function.arguments)
            result = get_weather(**arguments)
            print(f"tool call: {call.function.name}({arguments}) -> {result}")
            messages.append(
                {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}
            )
    print("no answer after", args.turns, "turns")


if __name__ == "__main__":
    main()
