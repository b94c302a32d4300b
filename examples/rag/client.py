"""Retrieve, rerank, answer: a RAG loop against ovmsx's /v3 endpoints with the official openai
client (embeddings, chat) and plain HTTP (rerank, which the openai client has no method for).

    python examples/rag/client.py --url http://127.0.0.1:8000/v3 "What is the capital of France?"

The documents are embedded once; a question is embedded, the closest documents by cosine
similarity are reranked by the cross-encoder, and the best ones go to the LLM as context. With
the random-weight models of build_encoder_folders.py and build_llm_folder.py the choices and
the answer mean nothing; with real models (exported by optimum-cli) they do.
"""

from __future__ import annotations

import argparse
import json
import urllib.request

import numpy as np
import openai

DOCUMENTS = [
    "Paris is the capital of France.",
    "Berlin is the capital of Germany and Madrid is the capital of Spain.",
    "The quick brown fox jumps over the lazy dog.",
    "OpenVINO Model Server serves models over KServe and OpenAI compatible APIs.",
    "Retrieval augmented generation finds documents and answers questions from them.",
]


def rerank(url: str, model: str, query: str, documents: list[str]) -> list[dict]:
    body = json.dumps({"model": model, "query": query, "documents": documents}).encode()
    request = urllib.request.Request(
        f"{url}/rerank", body, {"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request) as answer:
        return json.loads(answer.read())["results"]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("question", nargs="?", default="What is the capital of France?")
    parser.add_argument("--url", default="http://127.0.0.1:8000/v3")
    parser.add_argument("--candidates", type=int, default=3, help="documents to rerank")
    parser.add_argument("--context", type=int, default=2, help="documents given to the LLM")
    args = parser.parse_args()
    client = openai.OpenAI(base_url=args.url, api_key="unused")

    embedded = client.embeddings.create(model="embed", input=DOCUMENTS)
    library = np.array([item.embedding for item in embedded.data])
    question = client.embeddings.create(model="embed", input=args.question).data[0].embedding
    similarity = library @ np.asarray(question)  # the vectors are L2-normalised
    candidates = [DOCUMENTS[i] for i in np.argsort(-similarity)[: args.candidates]]
    print("retrieved:", *candidates, sep="\n  ")

    ranked = rerank(args.url, "rerank", args.question, candidates)
    context = [candidates[result["index"]] for result in ranked[: args.context]]
    print(
        "reranked:",
        *(f"{r['relevance_score']:.3f} {candidates[r['index']]}" for r in ranked),
        sep="\n  ",
    )

    messages = [
        {"role": "system", "content": "Answer from these documents:\n" + "\n".join(context)},
        {"role": "user", "content": args.question},
    ]
    answer = client.chat.completions.create(model="llm", messages=messages, max_tokens=40)
    print("answer:", answer.choices[0].message.content)


if __name__ == "__main__":
    main()
