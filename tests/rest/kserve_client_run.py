"""Talks to an ovmsx REST server with kserve's ``InferenceRESTClient`` and prints what it saw
as one JSON line (run by test_rest_clients.py in a process of its own)."""

from __future__ import annotations

import asyncio
import json
import sys

import httpx
import numpy as np
from kserve import InferenceRESTClient, InferInput, InferRequest, RESTConfig


async def main(url: str) -> dict:
    base = f"http://{url}"
    seen: dict[str, object] = {}
    client = InferenceRESTClient(RESTConfig(protocol="v2", timeout=30))
    try:
        seen["health"] = [
            await client.is_server_live(base),
            await client.is_server_ready(base),
            await client.is_model_ready(base, "add_one"),
            await client.is_model_ready(base, "nothing"),
        ]
        data = np.arange(10, dtype=np.float32).reshape(1, 10)
        for model in ("add_one", "add_two"):
            given = InferInput("input", [1, 10], "FP32")
            given.set_data_from_numpy(data)
            request = InferRequest(model_name=model, infer_inputs=[given], request_id="k-1")
            response = await client.infer(base, request, model_name=model)
            (output,) = response.outputs
            seen[model] = {
                "model_name": response.model_name,
                "id": response.id,
                "output": output.as_numpy().ravel().tolist(),
            }
        given = InferInput("in", [3], "UINT8")
        given.set_data_from_numpy(np.array([3, 1, 4], np.uint8), binary_data=True)
        request = InferRequest(model_name="echo", infer_inputs=[given])
        (output,) = (await client.infer(base, request, model_name="echo")).outputs
        seen["echo_binary"] = output.as_numpy().tolist()
        try:
            request = InferRequest(model_name="nothing", infer_inputs=[given])
            await client.infer(base, request, model_name="nothing")
        except httpx.HTTPStatusError as error:
            seen["missing"] = error.response.json()["error"]
    finally:
        await client.close()
    return seen


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1]))))
