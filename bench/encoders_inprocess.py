"""openvino-genai's TextEmbeddingPipeline or TextRerankPipeline driven in this process, the
ceiling ovmsx's /v3/embeddings and /v3/rerank are measured against (bench/bench_embeddings.py).

C client threads share one pipeline, each sending one request (one text to embed, or one query
with ``--documents`` copies of the text to rerank) at a time, as an application calling the
library directly would; a lock keeps the calls one at a time (the pipelines do not say they may
be called from several threads). Prints requests/s over the timed window as JSON.

    python bench/encoders_inprocess.py embeddings FOLDER --concurrency 8 --seconds 5 --text "..."
"""

from __future__ import annotations

import argparse
import json
import threading
import time


def pipeline_call(task: str, folder: str, text: str, documents: int, query: str):
    import openvino_genai as genai

    if task == "embeddings":
        config = genai.TextEmbeddingPipeline.Config()
        config.pooling_type = genai.TextEmbeddingPipeline.PoolingType.CLS
        config.normalize = True
        pipeline = genai.TextEmbeddingPipeline(folder, "CPU", config)
        return lambda: pipeline.embed_documents([text])
    config = genai.TextRerankPipeline.Config()
    config.top_n = documents
    pipeline = genai.TextRerankPipeline(folder, "CPU", config)
    texts = [text] * documents
    return lambda: pipeline.rerank(query, texts)


def run(call, concurrency: int, seconds: float, warmup: float = 0.5) -> float:
    lock = threading.Lock()
    counts = [0] * concurrency
    start = time.perf_counter()
    counting_from, deadline = start + warmup, start + warmup + seconds

    def client(index: int) -> None:
        while True:
            with lock:
                call()
            now = time.perf_counter()
            if now >= deadline:
                return
            if now >= counting_from:
                counts[index] += 1

    threads = [threading.Thread(target=client, args=(i,)) for i in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(counts) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("task", choices=("embeddings", "rerank"))
    parser.add_argument("folder")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--text", required=True)
    parser.add_argument("--documents", type=int, default=8, help="rerank: documents per query")
    parser.add_argument("--query", help="rerank: the query (default: the text)")
    args = parser.parse_args()
    query = args.text if args.query is None else args.query
    call = pipeline_call(args.task, args.folder, args.text, args.documents, query)
    call()  # compiled and warm
    started = time.process_time()
    rate = run(call, args.concurrency, args.seconds)
    print(json.dumps({"requests_per_s": rate, "cpu_s": time.process_time() - started}))


if __name__ == "__main__":
    main()
