"""Ask the example LLM a question with the official openai client, unary and then streamed.

python examples/llm/client.py --url http://127.0.0.1:8000/v3
"""

from __future__ import annotations

import argparse

import openai


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000/v3")
    parser.add_argument("--model", default="tiny")
    args = parser.parse_args()
    client = openai.OpenAI(base_url=args.url, api_key="unused")
    messages = [{"role": "user", "content": "What is the capital of France?"}]

    answer = client.chat.completions.create(model=args.model, messages=messages, max_tokens=30)
    print("unary:", repr(answer.choices[0].message.content))
    print("       finish_reason", answer.choices[0].finish_reason, "usage", answer.usage)

    print("streamed: ", end="", flush=True)
    stream = client.chat.completions.create(
        model=args.model, messages=messages, max_tokens=30, stream=True
    )
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            print(chunk.choices[0].delta.content, end="", flush=True)
    print()


if __name__ == "__main__":
    main()
