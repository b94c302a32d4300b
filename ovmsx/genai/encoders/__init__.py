"""Embeddings and rerank (``EmbeddingsCalculatorOV``, ``RerankCalculatorOV``): encoder models
run in-process in batches, and their ``/v3`` answers."""
